//! The command line: run mode (`mcp-errnorm [OPTIONS] -- COMMAND...`) and the subcommands.
//! Thin: it parses, sets up logging, and hands over to the library.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Flags, Settings};
use crate::render::Profile;

/// Exit codes of the proxy itself; otherwise it exits with the upstream's status.
pub mod exit {
    /// Bad usage, or an invalid config or rule file (sysexits EX_USAGE).
    pub const USAGE: i32 = 64;
    /// The upstream server could not be started (sysexits EX_UNAVAILABLE).
    pub const CANNOT_START: i32 = 69;
    /// An internal error (sysexits EX_SOFTWARE).
    pub const INTERNAL: i32 = 70;
}

#[derive(Debug, Parser)]
#[command(
    name = "mcp-errnorm",
    version,
    about = "A transparent stdio proxy for MCP servers: every failed tool call reaches the agent \
             as a structured, actionable error.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  \
        mcp-errnorm demo\n  \
        mcp-errnorm -- npx -y @modelcontextprotocol/server-filesystem /tmp\n  \
        mcp-errnorm --rules my-rules.toml --profile enterprise -- uvx mcp-server-time\n\n\
        Exit codes: 64 bad usage or invalid config/rules, 69 the server could not be started, \
        70 internal error; otherwise the server's own exit status (128+N if killed by signal N)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// The options of run mode.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Config file (TOML); see config.example.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A rule file layered over the defaults; repeatable, earlier files are tried first.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Use no embedded default rules, only the given ones.
    #[arg(long)]
    pub no_default_rules: bool,
    /// Shape of the error the model reads: mcp (seed 001 names) or enterprise (seed 000 envelope).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Log level or tracing filter (error, warn, info, debug, trace); also MCP_ERRNORM_LOG.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// The MCP server to run, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub upstream: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a built-in legacy server through the proxy and show each raw failure beside the
    /// structured error the agent receives.
    Demo {
        #[arg(long, value_enum, default_value = "mcp")]
        profile: Profile,
    },
    /// The built-in legacy server the demo runs (an MCP server on stdio).
    #[command(hide = true)]
    DemoServer,
}

impl RunArgs {
    fn flags(&self) -> Flags {
        Flags {
            config: self.config.clone(),
            rules: self.rules.clone(),
            no_default_rules: self.no_default_rules,
            profile: self.profile,
            log_level: self.log_level.clone(),
        }
    }
}

/// Runs the command line; returns the process exit code.
pub fn main(cli: Cli) -> i32 {
    match cli.command {
        Some(Command::Demo { profile }) => {
            init_logging(None);
            crate::demo::run_demo(profile)
        }
        Some(Command::DemoServer) => crate::demo::serve(),
        None => run_proxy(&cli.run),
    }
}

fn run_proxy(args: &RunArgs) -> i32 {
    let settings = match Settings::load(&args.flags()) {
        Ok(settings) => settings,
        Err(problems) => {
            init_logging(args.log_level.as_deref());
            eprintln!("mcp-errnorm: invalid configuration, nothing started:\n{problems}");
            return exit::USAGE;
        }
    };
    init_logging(settings.log_level.as_deref());
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-errnorm: cannot start the runtime: {e}");
            return exit::INTERNAL;
        }
    };
    match runtime.block_on(crate::relay::run(&args.upstream, settings)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-errnorm: {e}");
            exit::CANNOT_START
        }
    }
}

/// Logs go to stderr, never stdout: stdout belongs to the protocol.
fn init_logging(level: Option<&str>) {
    let filter = level
        .map(str::to_owned)
        .or_else(|| std::env::var("MCP_ERRNORM_LOG").ok())
        .unwrap_or_else(|| "info".to_owned());
    let filter = tracing_subscriber::EnvFilter::try_new(&filter).unwrap_or_else(|e| {
        eprintln!("mcp-errnorm: ignoring log level '{filter}': {e}");
        tracing_subscriber::EnvFilter::new("info")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}
