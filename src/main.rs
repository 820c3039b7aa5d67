use clap::{CommandFactory, FromArgMatches};
use mcp_errnorm::cli::{self, Cli, ColorWhen};
use mcp_errnorm::exit;

/// The one place that says why the command line failed and picks the exit code.
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Read first: clap's own help and errors are coloured by it.
    let (when, args) = ColorWhen::take_from(args);
    let color = when.unwrap_or_default().apply();
    let parsed = Cli::command()
        .color(color)
        .try_get_matches_from(&args)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let e = cli::with_separator_hint(e.format(&mut Cli::command().color(color)), &args);
            let _ = e.print();
            std::process::exit(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Severity first, as every problem we print.
            use mcp_errnorm::diagnostic::{labelled, Severity};
            mcp_errnorm::tell::say(&labelled(Severity::Error, &e.to_string()));
            e.exit_code()
        }
    };
    // The last log lines, waited for a little by a stderr nobody may read.
    mcp_errnorm::log_writer::flush(std::time::Duration::from_secs(1));
    std::process::exit(code);
}
