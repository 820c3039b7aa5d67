//! The command line: run mode (`mcp-errnorm [OPTIONS] -- COMMAND...`) and the subcommands.
//! Thin: it parses, sets up logging, and hands over to the library.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::commands::{ClassifyArgs, ReportArgs, RuleArgs, RulesCommand};
use crate::config::{Flags, LogFormat, Settings};
use crate::diagnostic::Diagnostics;
use crate::exit;
use crate::relay::StartError;
use crate::render::Profile;
use crate::unmatched::UnmatchedLog;

/// Why the command line could not do its work: one type for every subcommand, each error with
/// the exit code it means. `main` prints it (it is the one place that does) and exits.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid configuration, nothing started:\n{0}")]
    InvalidConfig(Diagnostics),
    #[error("{0}; nothing started")]
    LogFile(#[source] LogFileError),
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot open {} for --log-unmatched: {source}", path.display())]
    UnmatchedLog {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Start(#[from] StartError),
    #[error(transparent)]
    Manual(#[from] crate::manual::Error),
    #[error(transparent)]
    Tool(#[from] crate::commands::Error),
    #[error(transparent)]
    Install(#[from] crate::install::Error),
    #[error(transparent)]
    Demo(#[from] crate::demo::Error),
}

impl Error {
    /// The exit code this error means.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::InvalidConfig(_) | Error::LogFile(_) | Error::UnmatchedLog { .. } => exit::USAGE,
            Error::Start(_) => exit::CANNOT_START,
            Error::Runtime(_) | Error::Demo(_) => exit::INTERNAL,
            Error::Manual(e) => e.exit_code(),
            Error::Tool(e) => e.exit_code(),
            Error::Install(e) => e.code,
        }
    }
}

/// The log file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the log file {}: {source}", path.display())]
pub struct LogFileError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
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
        Config: --config FILE, else the file MCP_ERRNORM_CONFIG names, else \
        $XDG_CONFIG_HOME/mcp-errnorm/config.toml (~/.config/mcp-errnorm/config.toml) if it \
        exists, else the embedded defaults; `mcp-errnorm init` writes a starter there, \
        `mcp-errnorm init --print` prints every key.\n\n\
        Exit codes: 64 bad usage or invalid config/rules, 69 the server could not be started, \
        70 internal error; otherwise the server's own exit status (128+N if killed by signal N)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Colour in what is printed for people: auto (only at a terminal, and not when NO_COLOR
    /// is set), always, or never. Never in JSON, the protocol or the log file.
    // Taken out of the command line before clap parses it (see `ColorWhen::take_from`): here
    // for the help, the completions and the man pages, and for clap to reject a bad value.
    #[arg(
        long,
        value_enum,
        global = true,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorWhen,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour at a terminal, unless NO_COLOR is set (CLICOLOR_FORCE: colour anyway).
    #[default]
    Auto,
    /// Colour even when the output is not a terminal, NO_COLOR or not.
    Always,
    /// No colour.
    Never,
}

impl ColorWhen {
    /// The `--color` of a command line, taken out before it is parsed: clap's own help and
    /// errors are coloured by it, and clap would take it for an option of run mode where it
    /// comes before a subcommand (`mcp-errnorm --color never check`). The last one given
    /// before `--` counts; an invalid one is all that is left, for clap to say it is wrong.
    pub fn take_from(
        args: Vec<std::ffi::OsString>,
    ) -> (Option<ColorWhen>, Vec<std::ffi::OsString>) {
        use clap::ValueEnum as _;
        let mut found = None;
        let mut kept = Vec::with_capacity(args.len());
        let mut words = args.into_iter();
        // The program's name.
        kept.extend(words.next());
        while let Some(word) = words.next() {
            let text = word.to_str().unwrap_or_default().to_owned();
            if text == "--" {
                kept.push(word);
                break;
            }
            let (value, pair) = if text == "--color" {
                match words.next() {
                    Some(value) => (value.to_str().unwrap_or_default().to_owned(), Some(value)),
                    None => {
                        kept.push(word);
                        break;
                    }
                }
            } else if let Some(value) = text.strip_prefix("--color=") {
                (value.to_owned(), None)
            } else {
                kept.push(word);
                continue;
            };
            match ColorWhen::from_str(&value, false) {
                Ok(when) => found = Some(when),
                // Alone, for clap to say that it is wrong (and not something else first).
                Err(_) => {
                    kept.truncate(1);
                    kept.push(word);
                    kept.extend(pair);
                    return (None, kept);
                }
            }
        }
        kept.extend(words);
        (found, kept)
    }

    /// Makes this the choice of every stream we colour, and of clap's.
    pub fn apply(self) -> clap::ColorChoice {
        let (ours, clap) = match self {
            ColorWhen::Auto => (anstream::ColorChoice::Auto, clap::ColorChoice::Auto),
            ColorWhen::Always => (anstream::ColorChoice::Always, clap::ColorChoice::Always),
            ColorWhen::Never => (anstream::ColorChoice::Never, clap::ColorChoice::Never),
        };
        ours.write_global();
        clap
    }
}

/// Whether what we write to stderr gets colour: `--color`, NO_COLOR, CLICOLOR_FORCE, and
/// whether stderr is a terminal (`anstream` decides, as for everything else we colour).
pub fn stderr_has_color() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

/// The options of run mode.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: RuleArgs,
    /// Append every failure no rule matched to FILE, one JSON line each (tool, source, code,
    /// text, time): ready for `classify --jsonl`, `coverage` and writing new rules.
    #[arg(long, value_name = "FILE")]
    pub log_unmatched: Option<PathBuf>,
    /// Shape of the error the model reads: mcp (the MCP shape: errorCategory, isRetryable,
    /// message, ...) or enterprise (the enterprise envelope: success, error_code,
    /// retry_recommended, ...).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Log level or tracing filter (off, error, warn, info, debug, trace); also MCP_ERRNORM_LOG.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Log format: text, or json (one JSON object a line, for log shippers).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Append the log to FILE instead of stderr (for clients that discard stderr); the server's
    /// stderr is logged there too.
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// The server's name in the log (default: from its command, e.g. `server-filesystem`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The MCP server to run, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub upstream: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a built-in legacy server through the proxy and show each raw failure beside the
    /// structured error the agent receives.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm demo\n  \
        mcp-errnorm demo --profile enterprise")]
    Demo {
        #[arg(long, value_enum, default_value = "mcp")]
        profile: Profile,
    },
    /// The built-in legacy server the demo runs (an MCP server on stdio).
    #[command(hide = true)]
    DemoServer,
    /// Validate the config and rule files without running anything, then run every rule's
    /// examples; says first which config file it read (on stderr). Exit 0 all well, 1 an example failed, 64 invalid files or a rule of yours that
    /// can never fire.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm check --rules my-rules.toml\n  \
        mcp-errnorm check --config ~/work/mcp-errnorm.toml")]
    Check {
        #[command(flatten)]
        source: RuleArgs,
    },
    /// Print the structured error the proxy would produce for a failure text (JSON on stdout;
    /// which rule matched, and why, on stderr).
    #[command(after_help = "Examples:\n  \
        mcp-errnorm classify 'ENOENT: no such file or directory, open /x'\n  \
        mcp-errnorm classify --tool search --explain 'HTTP 429 Too Many Requests'\n  \
        mcp-errnorm classify --source rpc --code -32602 'Unknown tool: x'\n  \
        mcp-errnorm classify --jsonl < unmatched.jsonl")]
    Classify(ClassifyArgs),
    /// For a file of recorded failures (JSON lines), count what each rule matched, and list
    /// the failures no rule decided, grouped by shape, most frequent first. Exit 0 when a rule
    /// decided every failure, 1 otherwise.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm coverage --rules mine.toml unmatched.jsonl\n  \
        mcp-errnorm coverage --suggest drafts.toml unmatched.jsonl")]
    Coverage {
        #[command(flatten)]
        source: RuleArgs,
        /// Write draft rules for the most frequent groups to FILE (never overwritten): a match
        /// built from the group's shape, the category the fallback model guesses (to confirm)
        /// and an example.
        #[arg(long, value_name = "FILE")]
        suggest: Option<PathBuf>,
        /// JSON lines: {"text": ..., "tool": ..., "source": "result"|"rpc", "code": N}.
        file: PathBuf,
    },
    /// What the proxy did, read from its log files (--log-file, text or json): failures by
    /// category, by server and tool, by rule; retries and recoveries; the most frequent texts
    /// no rule classified. Lines that are not the proxy's are skipped and counted. Exit 0, or
    /// 64 for a file that cannot be read.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm report ~/mcp-errnorm.log\n  \
        mcp-errnorm report ~/Library/Logs/Claude/mcp-server-*.log\n  \
        mcp-errnorm report --json server-a.log server-b.log\n  \
        tail -n 10000 ~/mcp-errnorm.log | mcp-errnorm report -\n\n\
        The log must be written at the default level (info) or finer; the counts of calls come \
        from the line each run writes when it ends.")]
    Report(ReportArgs),
    /// Check this installation: the version; the config file in use and why; the rules and
    /// where they come from; every MCP client config found, its servers, whether mcp-errnorm
    /// wraps each and whether their commands are found; where each client keeps its servers'
    /// logs. Problems are listed last. Exit 0 when all is well, 1 when something is wrong.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm doctor\n  \
        mcp-errnorm doctor --json\n  \
        mcp-errnorm doctor --config ~/work/mcp-errnorm.toml\n\n\
        Commands are looked for on this shell's PATH (or the PATH a server's \"env\" sets): a \
        client started from a desktop may have another one.")]
    Doctor(crate::doctor::DoctorArgs),
    /// Write a commented starter config.toml and rules.toml into the default config folder
    /// ($XDG_CONFIG_HOME/mcp-errnorm, else ~/.config/mcp-errnorm), where the proxy finds them
    /// by itself, or into --dir (created if need be; never overwrites).
    #[command(after_help = "Examples:\n  \
        mcp-errnorm init\n  \
        mcp-errnorm init --dir ./my-project\n  \
        mcp-errnorm init --print > config.toml")]
    Init {
        /// Write into DIR instead of the default config folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print the example config with every key, its default and what it does, on stdout;
        /// write nothing.
        #[arg(long, conflicts_with = "dir")]
        print: bool,
    },
    /// The rules the proxy tries, embedded and yours: `rules list`, `rules show ID`.
    #[command(
        subcommand,
        after_help = "Examples:\n  \
        mcp-errnorm rules list\n  \
        mcp-errnorm rules list --json --rules my-rules.toml\n  \
        mcp-errnorm rules show tls-certificate"
    )]
    Rules(RulesCommand),
    /// Put mcp-errnorm in front of the stdio servers of a client's MCP config (reversible).
    Install(crate::install::InstallArgs),
    /// Take mcp-errnorm out of a client's MCP config again: the original commands come back.
    Uninstall(crate::install::UninstallArgs),
    /// Print a shell completion script on stdout.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm completions bash > ~/.local/share/bash-completion/completions/mcp-errnorm\n  \
        mcp-errnorm completions zsh > ~/.zfunc/_mcp-errnorm\n  \
        mcp-errnorm completions fish > ~/.config/fish/completions/mcp-errnorm.fish\n  \
        mcp-errnorm completions powershell >> $PROFILE")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of mcp-errnorm or of one of its subcommands on stdout, or
    /// write every page into a folder.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm man | man -l -\n  \
        mcp-errnorm man rules list | man -l -\n  \
        mcp-errnorm man --dir ~/.local/share/man/man1")]
    Man {
        /// Write every page (mcp-errnorm.1, mcp-errnorm-install.1, ...) into DIR (created if
        /// need be; existing pages are replaced).
        #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
        dir: Option<PathBuf>,
        /// The subcommand whose page to print (e.g. `install`, `rules list`).
        #[arg(value_name = "SUBCOMMAND")]
        subcommand: Vec<String>,
    },
    /// Print the JSON Schema (draft 2020-12) of the errors the proxy writes: the error the
    /// model reads in each profile, or the canonical one in _meta["mcp-errnorm/error"].
    #[command(after_help = "Examples:\n  \
        mcp-errnorm schema mcp > profile-mcp.schema.json\n  \
        mcp-errnorm schema enterprise\n  \
        mcp-errnorm schema canonical")]
    Schema {
        #[arg(value_enum)]
        name: crate::manual::Schema,
    },
}

impl RunArgs {
    /// The flags of a run, with the config file located (see [`RuleArgs::flags`]).
    fn flags(&self) -> Result<Flags, Diagnostics> {
        let (located, _) = self.source.flags()?;
        Ok(Flags {
            profile: self.profile,
            log_level: self.log_level.clone(),
            log_unmatched: self.log_unmatched.clone(),
            log_format: self.log_format,
            log_file: self.log_file.clone(),
            ..located
        })
    }
}

/// A usage error, with a tip when the server's command was given without `--` before it
/// (`mcp-errnorm npx foo`): clap then finds an argument it does not expect. `args` is the
/// whole command line, the program's name first.
pub fn with_separator_hint(mut error: clap::Error, args: &[std::ffi::OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(unexpected)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let words: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command = Cli::command();
    let is_subcommand = |word: &String| {
        word == "help"
            || command
                .get_subcommands()
                .any(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
    };
    let Some(at) = words.iter().position(|w| w == unexpected) else {
        return error;
    };
    // An option misspelt, a `--` already there, or a subcommand's own argument: not this.
    if unexpected.starts_with('-')
        || words.iter().any(|w| w == "--")
        || words[..at].iter().any(is_subcommand)
    {
        return error;
    }
    let tip = separator_hint(&words[..at], &words[at..]);
    error.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    error
}

/// The tip for a server's command given without `--`: the same line with it in its place.
fn separator_hint(options: &[String], server: &[String]) -> String {
    let line: Vec<String> = std::iter::once("mcp-errnorm".to_owned())
        .chain(options.iter().map(|w| shell_word(w)))
        .chain(std::iter::once("--".to_owned()))
        .chain(server.iter().map(|w| shell_word(w)))
        .collect();
    format!("put '--' before the server's command: {}", line.join(" "))
}

/// `word` as a POSIX shell reads it back: as it is when that is safe, else single-quoted.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-~".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `eprintln!` for the proxy, through [`crate::tell`]: it must not die when its stderr is gone.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::tell::say(&format!($($arg)*))
    };
}

/// Runs the command line: the exit code of what ran, or why it could not run.
pub fn run(cli: Cli) -> Result<i32, Error> {
    crate::sys::limit_allocator_arenas();
    if cli.command.is_some() {
        // The tools end as any Unix tool does when their reader goes (`classify --jsonl |
        // head -1`), where Rust's ignored SIGPIPE would make their next print panic. The proxy
        // keeps it ignored: a client gone is an error it handles.
        crate::sys::default_sigpipe();
    }
    // The memory the rules' first pass took to compile goes back to the system once it is built.
    crate::rules::release_memory_with(crate::sys::release_memory);
    match cli.command {
        Some(Command::Demo { profile }) => {
            let _ = init_logging(None, LogFormat::Text, None);
            Ok(crate::demo::run_demo(profile)?)
        }
        Some(Command::DemoServer) => Ok(crate::demo::serve()),
        Some(Command::Check { source }) => Ok(crate::commands::check(&source)?),
        Some(Command::Classify(args)) => Ok(crate::commands::classify(&args)?),
        Some(Command::Coverage {
            source,
            suggest,
            file,
        }) => Ok(crate::commands::coverage(
            &source,
            &file,
            suggest.as_deref(),
        )?),
        Some(Command::Doctor(args)) => Ok(crate::doctor::doctor(&args)),
        Some(Command::Report(args)) => Ok(crate::commands::report(&args)?),
        Some(Command::Init { print: true, .. }) => print(crate::manual::EXAMPLE_CONFIG),
        Some(Command::Init { dir, .. }) => Ok(crate::commands::init(dir.as_deref())?),
        Some(Command::Rules(command)) => Ok(crate::commands::rules(&command)?),
        Some(Command::Install(args)) => Ok(crate::install::install(&args)?),
        Some(Command::Uninstall(args)) => Ok(crate::install::uninstall(&args)?),
        Some(Command::Completions { shell }) => {
            let mut out = std::io::stdout();
            clap_complete::generate(shell, &mut Cli::command(), "mcp-errnorm", &mut out);
            Ok(exit::OK)
        }
        Some(Command::Man {
            dir: Some(dir),
            subcommand: _,
        }) => {
            for path in crate::manual::write_pages(Cli::command(), &dir)? {
                say!("wrote {}", path.display());
            }
            Ok(exit::OK)
        }
        Some(Command::Man {
            dir: None,
            subcommand,
        }) => print(&crate::manual::page(Cli::command(), &subcommand)?.roff),
        Some(Command::Schema { name }) => print(name.text()),
        None => run_proxy(&cli.run),
    }
}

/// `text` on stdout, as it is.
fn print(text: &str) -> Result<i32, Error> {
    use std::io::Write as _;
    // A reader that went away (`| head`) ends us by SIGPIPE, as any Unix tool.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(exit::OK)
}

fn run_proxy(args: &RunArgs) -> Result<i32, Error> {
    // Located once: the file read now is the one watched for a reload.
    let loaded = args
        .flags()
        .and_then(|flags| Settings::load(&flags).map(|settings| (flags, settings)));
    let (flags, settings) = match loaded {
        Ok(loaded) => {
            crate::sys::release_memory();
            loaded
        }
        Err(problems) => {
            let format = args.log_format.unwrap_or_default();
            let file = args.log_file.as_deref();
            // Not the flag's level, which may be what is wrong: it is said once, by `main`.
            let to_file = init_logging(None, format, file).is_ok();
            if to_file && file.is_some() {
                // For clients that discard stderr.
                tracing::error!("invalid configuration, nothing started:\n{problems}");
            }
            return Err(Error::InvalidConfig(problems));
        }
    };
    let log_to_file = settings.log_file.is_some();
    init_logging(
        settings.log_level.as_deref(),
        settings.log_format,
        settings.log_file.as_deref(),
    )
    .map_err(Error::LogFile)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let unmatched = match &settings.log_unmatched {
        None => None,
        Some(path) => Some(
            UnmatchedLog::open(path).map_err(|source| Error::UnmatchedLog {
                path: path.clone(),
                source,
            })?,
        ),
    };
    match &flags.config {
        Some(path) => tracing::debug!("config file: {}", path.display()),
        None => tracing::debug!("no config file: embedded defaults"),
    }
    let server = args
        .name
        .clone()
        .unwrap_or_else(|| crate::config::server_name(&args.upstream));
    let run = crate::relay::run(&args.upstream, server, flags, settings, unmatched);
    runtime.block_on(run).map_err(|e| {
        if log_to_file {
            tracing::error!("{e}");
        }
        Error::Start(e)
    })
}

/// Logs go to stderr, or appended to `file`, never to stdout: stdout belongs to the protocol.
/// Fails only when the log file cannot be opened.
fn init_logging(
    level: Option<&str>,
    format: LogFormat,
    file: Option<&Path>,
) -> Result<(), LogFileError> {
    use tracing_subscriber::fmt::writer::BoxMakeWriter;

    // The flag's, the config's or MCP_ERRNORM_LOG's level, checked at load; when the load
    // failed, the environment's is tried, and a bad one is only warned of.
    let filter = level
        .map(str::to_owned)
        .or_else(|| std::env::var(crate::config::LOG_LEVEL_ENV).ok())
        .unwrap_or_else(|| "info".to_owned());
    let checked = crate::config::check_log_level(&filter)
        .map_err(|e| e.to_string())
        .and_then(|()| tracing_subscriber::EnvFilter::try_new(&filter).map_err(|e| e.to_string()));
    let filter = checked.unwrap_or_else(|e| {
        say!("warning: ignoring log level '{filter}': {e}");
        tracing_subscriber::EnvFilter::new("info")
    });
    let server_stderr = format!("{}=info", crate::relay::SERVER_STDERR);
    let filter = filter.add_directive(server_stderr.parse().expect("a valid directive"));
    let (writer, ansi) = match file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| LogFileError {
                    path: path.to_owned(),
                    source,
                })?;
            (BoxMakeWriter::new(std::sync::Mutex::new(file)), false)
        }
        None => (
            BoxMakeWriter::new(crate::log_writer::LineWriter::default),
            stderr_has_color(),
        ),
    };
    // A log line that cannot be written is dropped: tracing's own report of it would go to a
    // stderr that fails too, through `eprintln!`, which panics.
    let builder = tracing_subscriber::fmt()
        .log_internal_errors(false)
        .with_env_filter(filter)
        .with_writer(writer)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(ansi).try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(line: &[&str]) -> Option<String> {
        let args: Vec<std::ffi::OsString> = line.iter().map(Into::into).collect();
        let error = Cli::try_parse_from(&args).unwrap_err();
        let error = with_separator_hint(error, &args);
        match error.get(clap::error::ContextKind::Suggested) {
            Some(clap::error::ContextValue::StyledStrs(tips)) => {
                Some(tips.iter().map(ToString::to_string).collect())
            }
            _ => None,
        }
    }

    #[test]
    fn a_server_command_without_the_separator_gets_the_line_with_it() {
        assert_eq!(
            hint(&["mcp-errnorm", "npx", "-y", "@scope/server", "/tmp"]).as_deref(),
            Some("put '--' before the server's command: mcp-errnorm -- npx -y @scope/server /tmp")
        );
        assert_eq!(
            hint(&[
                "mcp-errnorm",
                "--profile",
                "enterprise",
                "uvx",
                "a b",
                "it's"
            ])
            .as_deref(),
            Some(
                "put '--' before the server's command: mcp-errnorm --profile enterprise -- uvx \
                 'a b' 'it'\\''s'"
            )
        );
    }

    fn take(line: &[&str]) -> (Option<ColorWhen>, Vec<String>) {
        let args = line.iter().map(Into::into).collect();
        let (when, rest) = ColorWhen::take_from(args);
        let rest = rest.into_iter().map(|a| a.into_string().unwrap()).collect();
        (when, rest)
    }

    #[test]
    fn color_is_taken_out_before_the_separator_only() {
        assert_eq!(
            take(&["m", "--color", "never", "check", "--color=always"]),
            (Some(ColorWhen::Always), vec!["m".into(), "check".into()])
        );
        assert_eq!(
            take(&["m", "--", "srv", "--color", "never"]),
            (
                None,
                ["m", "--", "srv", "--color", "never"]
                    .map(String::from)
                    .to_vec()
            )
        );
        // A bad value, or none, is left for clap to report.
        let (when, rest) = take(&["m", "check", "--color", "sometimes"]);
        assert_eq!(when, None);
        assert_eq!(rest, ["m", "--color", "sometimes"]);
        let error = Cli::try_parse_from(rest).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
        assert_eq!(
            take(&["m", "--color"]),
            (None, vec!["m".into(), "--color".into()])
        );
        // Parsed afterwards, the rest is what it would have been without it.
        let (_, rest) = take(&["m", "--color", "always", "check"]);
        assert!(matches!(
            Cli::try_parse_from(rest).unwrap().command,
            Some(Command::Check { .. })
        ));
    }

    #[test]
    fn other_usage_errors_get_no_such_tip() {
        // clap's own tips stay as they are.
        let ours = |line: &[&str]| hint(line).is_some_and(|tip| tip.contains("put '--'"));
        assert!(!ours(&["mcp-errnorm", "--no-such-flag"]));
        assert!(!ours(&["mcp-errnorm", "check", "extra"]));
        assert!(!ours(&["mcp-errnorm", "rules", "list", "extra"]));
        assert!(!ours(&["mcp-errnorm", "npx", "--", "x"]), "a `--` is there");
    }
}
