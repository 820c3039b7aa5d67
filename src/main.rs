use std::io::Write;

use clap::Parser;
use mcp_errnorm::cli::{self, Cli};
use mcp_errnorm::exit;

/// The one place that says why the command line failed and picks the exit code.
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let e = cli::with_separator_hint(e, &args);
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
            // Not `eprintln!`, which panics when stderr is gone: a client that closed it still
            // gets the proxy's exit status.
            let _ = writeln!(std::io::stderr(), "{e}");
            e.exit_code()
        }
    };
    // The last log lines, waited for a little by a stderr nobody may read.
    mcp_errnorm::log_writer::flush(std::time::Duration::from_secs(1));
    std::process::exit(code);
}
