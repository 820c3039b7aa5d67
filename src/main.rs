use clap::Parser;
use mcp_errnorm::cli::{self, Cli};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { cli::exit::USAGE } else { 0 });
        }
    };
    let code = cli::main(cli);
    // The last log lines, waited for a little by a stderr nobody may read.
    mcp_errnorm::log_writer::flush(std::time::Duration::from_secs(1));
    std::process::exit(code);
}
