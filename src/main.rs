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
    std::process::exit(cli::main(cli));
}
