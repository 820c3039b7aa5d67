//! The config file and the resolved settings of a run: command-line flags over the config file
//! over defaults. Every key is shown, with its default, in `config.example.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::recovery::{BreakerConfig, Policy, RetryConfig, TimeoutConfig};
use crate::redact::{RedactConfig, Redactor};
use crate::render::Profile;
use crate::rewrite::Rewriter;
use crate::rules::{default_sources, RuleSet};

/// What to do with a line on the upstream's stdout that is not JSON (a banner, a `print`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NonJsonLines {
    /// Log it on stderr with a warning; the client never sees it (it would break the session).
    #[default]
    Stderr,
    /// Pass it to the client as it is.
    Forward,
    /// Drop it silently.
    Drop,
}

/// How the proxy's own log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line, for log shippers.
    Json,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    profile: Option<Profile>,
    #[serde(default)]
    rules: Vec<PathBuf>,
    default_rules: Option<bool>,
    fallback_model: Option<bool>,
    hidden_failures: Option<bool>,
    rewrite_rpc_errors: Option<bool>,
    non_json_upstream_lines: Option<NonJsonLines>,
    log_level: Option<String>,
    log_format: Option<LogFormat>,
    log_file: Option<PathBuf>,
    log_unmatched: Option<PathBuf>,
    #[serde(default)]
    shutdown: ShutdownFile,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    retry: RetryConfig,
    #[serde(default)]
    timeouts: TimeoutConfig,
    #[serde(default)]
    breaker: BreakerConfig,
    #[serde(default)]
    restart: RestartConfig,
    #[serde(default)]
    not_found_is_empty: Vec<String>,
    #[serde(default)]
    redact: RedactConfig,
    max_line_bytes: Option<usize>,
    stream_answers_over: Option<usize>,
    max_pending_requests: Option<usize>,
}

/// `[restart]`: bringing a dead upstream back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RestartConfig {
    /// How many times a dead upstream is started again; 0 turns restarts off.
    pub attempts: u32,
    /// The wait before the first restart, doubled for each further one.
    pub backoff_ms: u64,
}

impl Default for RestartConfig {
    fn default() -> Self {
        RestartConfig {
            attempts: 0,
            backoff_ms: 500,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShutdownFile {
    close_wait_ms: Option<u64>,
    answer_wait_ms: Option<u64>,
    term_wait_ms: Option<u64>,
}

/// The flags of the command line that settings come from.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub config: Option<PathBuf>,
    pub rules: Vec<PathBuf>,
    pub no_default_rules: bool,
    pub profile: Option<Profile>,
    pub log_level: Option<String>,
    pub log_format: Option<LogFormat>,
    pub log_file: Option<PathBuf>,
    pub log_unmatched: Option<PathBuf>,
}

/// Everything a run needs, resolved and validated.
#[derive(Debug)]
pub struct Settings {
    pub profile: Profile,
    pub rules: Arc<RuleSet>,
    pub rewrite_rpc_errors: bool,
    /// Failures answered as successes are caught by their shape (`hidden_failures`).
    pub hidden_failures: bool,
    pub non_json_upstream_lines: NonJsonLines,
    pub log_level: Option<String>,
    pub log_format: LogFormat,
    /// The proxy's log goes to this file (appended) instead of stderr.
    pub log_file: Option<PathBuf>,
    /// Where failures no rule matched are appended as JSON lines.
    pub log_unmatched: Option<PathBuf>,
    /// The files these settings were read from (config and rule files), watched for reload.
    pub files: Vec<PathBuf>,
    /// After the client closes stdin: how long the upstream may take to exit on its own once no
    /// request waits, and then after SIGTERM, before SIGKILL. The SDK clients allow 2 s + 2 s
    /// themselves, then kill the proxy: a server that ignores SIGTERM must be killed sooner.
    pub close_wait: Duration,
    pub term_wait: Duration,
    /// After the client closes stdin: how long requests still waiting may take to be answered
    /// before the upstream is hurried (a pipeline's last call), counted from the close.
    pub answer_wait: Duration,
    pub env: BTreeMap<String, String>,
    /// Local retries, timeouts and the circuit breaker.
    pub policy: Policy,
    pub restart: RestartConfig,
    pub not_found_is_empty: GlobSet,
    pub redactor: Redactor,
    /// Lines longer than this are streamed through unparsed instead of being held whole.
    pub max_line_bytes: usize,
    /// Answers longer than this stream to the client as they come, unrewritten, unless the
    /// proxy must read them whole.
    pub stream_answers_over: usize,
    /// How many requests may wait for the server's answers at once; past it, a request is
    /// answered at once with an error instead of sent.
    pub max_pending_requests: usize,
    /// `log_file` and `log_unmatched` paths the proxy could not open at start, judged without
    /// creating or changing anything, at their key or flag: `check` reports them (a start
    /// finds out by opening them; a reload does not apply them).
    pub unusable_log_paths: Vec<Diagnostic>,
}

impl Settings {
    /// Reads the config file and every rule file. All or nothing: any problem in any file fails
    /// the whole, with every problem listed.
    pub fn load(flags: &Flags) -> Result<Settings, Diagnostics> {
        let (config_file, config) = match &flags.config {
            Some(path) => read_config(path)?,
            None => (SourceFile::new("(config)", ""), ConfigFile::default()),
        };
        let files = files_of(flags, &config);
        let base = config_dir(flags);
        let mut user = Vec::new();
        let mut problems = Vec::new();
        let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
        for path in &files[flags.config.iter().len()..] {
            // The same file twice would only report each of its rules as its own duplicate.
            let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if let Some((_, first)) = seen.iter().find(|(known, _)| *known == identity) {
                problems.push(Diagnostic {
                    file: path.display().to_string(),
                    line: 0,
                    col: 0,
                    rule: None,
                    message: format!(
                        "the same rule file as {} is given twice: name each file once",
                        first.display()
                    ),
                });
                continue;
            }
            seen.push((identity, path));
            match SourceFile::read(path) {
                Ok(file) => user.push(file),
                Err(d) => problems.push(d),
            }
        }
        let all_read = problems.is_empty();
        let use_defaults = !flags.no_default_rules && config.default_rules.unwrap_or(true);
        let defaults = if use_defaults {
            default_sources()
        } else {
            Vec::new()
        };
        // Every problem is listed, from the rules to the last key, before giving up.
        let rules = all_read
            .then(|| RuleSet::load(&user, &defaults).map_err(|d| problems.extend(d.0)))
            .and_then(Result::ok);
        if let Some(Err(message)) = flags.log_level.as_deref().map(check_log_level) {
            problems.push(Diagnostic {
                file: "--log-level".into(),
                line: 0,
                col: 0,
                rule: None,
                message,
            });
        }
        // The environment's level counts only where neither the flag nor the file names one,
        // and is judged like them: a bad one would otherwise be dropped for `info` unseen.
        let env_level = (flags.log_level.is_none() && config.log_level.is_none())
            .then(|| std::env::var(LOG_LEVEL_ENV).ok())
            .flatten();
        if let Some(Err(message)) = env_level.as_deref().map(check_log_level) {
            problems.push(Diagnostic {
                file: LOG_LEVEL_ENV.into(),
                line: 0,
                col: 0,
                rule: None,
                message,
            });
        }
        // A value the file's syntax allows but the proxy cannot use, located at its key.
        let at = |key: &str| key_offset(&config_file.text, key);
        let mut note = |at: Option<usize>, message: String| {
            problems.push(config_file.diagnostic(at.map(|o| o..o), None, message));
        };
        let policy = Policy::new(config.retry, config.timeouts, config.breaker)
            .map_err(|(key, message)| note(at(key), message))
            .ok();
        let mut empty = GlobSetBuilder::new();
        for glob in &config.not_found_is_empty {
            match Glob::new(glob) {
                Ok(glob) => {
                    empty.add(glob);
                }
                Err(e) => note(
                    at("not_found_is_empty"),
                    format!("invalid glob '{glob}' in not_found_is_empty: {e}"),
                ),
            }
        }
        let not_found_is_empty = empty
            .build()
            .map_err(|e| note(at("not_found_is_empty"), e.to_string()))
            .ok();
        let redactor = Redactor::new(&config.redact)
            .map_err(|message| note(at("redact.patterns"), message))
            .ok();
        let max_line_bytes = config.max_line_bytes.unwrap_or(16 << 20);
        if max_line_bytes < 1024 {
            note(
                at("max_line_bytes"),
                format!("max_line_bytes must be at least 1024, not {max_line_bytes}"),
            );
        }
        // Past a pipe's worth, a held answer would make the client wait for all of it twice over.
        let stream_answers_over = config.stream_answers_over.unwrap_or(64 << 10);
        if stream_answers_over < 1024 {
            note(
                at("stream_answers_over"),
                format!("stream_answers_over must be at least 1024, not {stream_answers_over}"),
            );
        }
        let max_pending_requests = config
            .max_pending_requests
            .unwrap_or(crate::relay::DEFAULT_MAX_PENDING);
        if max_pending_requests == 0 {
            note(
                at("max_pending_requests"),
                "max_pending_requests must be at least 1".to_owned(),
            );
        }
        // The flag's level wins over the file's, and is said of the flag.
        if flags.log_level.is_none() {
            if let Some(Err(message)) = config.log_level.as_deref().map(check_log_level) {
                note(at("log_level"), message);
            }
        }
        let log_level = flags.log_level.clone().or(config.log_level).or(env_level);
        // The server's environment: what `execve` cannot take is said here, at its key.
        for (name, value) in &config.env {
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                note(
                    env_key_offset(&config_file.text, name),
                    format!(
                        "[env] '{}': a variable's name must be non-empty, without '=' or NUL, \
                         and its value without NUL",
                        name.escape_debug()
                    ),
                );
            }
        }
        let log_file = flags
            .log_file
            .clone()
            .or_else(|| config.log_file.map(|p| base.join(p)));
        let log_unmatched = flags
            .log_unmatched
            .clone()
            .or_else(|| config.log_unmatched.map(|p| base.join(p)));
        let mut unusable_log_paths = Vec::new();
        for (key, flag, path) in [
            ("log_file", &flags.log_file, &log_file),
            ("log_unmatched", &flags.log_unmatched, &log_unmatched),
        ] {
            let Some(problem) = path.as_deref().and_then(log_path_problem) else {
                continue;
            };
            let message = format!("{key}: {problem}: the proxy would not start");
            unusable_log_paths.push(match flag {
                Some(_) => Diagnostic {
                    file: format!("--{}", key.replace('_', "-")),
                    line: 0,
                    col: 0,
                    rule: None,
                    message,
                },
                None => config_file.diagnostic(at(key).map(|o| o..o), None, message),
            });
        }
        let (Some(rules), Some(policy), Some(not_found_is_empty), Some(redactor), true) = (
            rules,
            policy,
            not_found_is_empty,
            redactor,
            problems.is_empty(),
        ) else {
            return Err(Diagnostics(problems));
        };
        Ok(Settings {
            max_line_bytes,
            stream_answers_over,
            max_pending_requests,
            redactor,
            policy,
            restart: config.restart,
            not_found_is_empty,
            profile: flags.profile.or(config.profile).unwrap_or_default(),
            // Without the embedded rules, nothing but the user's rules decides: neither the
            // model nor the shape of a success.
            rules: Arc::new(
                rules.with_fallback_model(config.fallback_model.unwrap_or(use_defaults)),
            ),
            hidden_failures: config.hidden_failures.unwrap_or(use_defaults),
            rewrite_rpc_errors: config.rewrite_rpc_errors.unwrap_or(true),
            non_json_upstream_lines: config.non_json_upstream_lines.unwrap_or_default(),
            log_level,
            log_format: flags.log_format.or(config.log_format).unwrap_or_default(),
            log_file,
            log_unmatched,
            unusable_log_paths,
            files,
            close_wait: Duration::from_millis(config.shutdown.close_wait_ms.unwrap_or(2000)),
            term_wait: Duration::from_millis(config.shutdown.term_wait_ms.unwrap_or(1500)),
            answer_wait: Duration::from_millis(config.shutdown.answer_wait_ms.unwrap_or(30_000)),
            env: config.env,
        })
    }
}

/// Why a log the proxy appends to could not be opened at start, judged without creating or
/// truncating it: an existing file is opened for appending (nothing written), a new one needs
/// a folder it may create files in.
fn log_path_problem(path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Some(format!("{shown} is a folder, not a file")),
        // Opening a FIFO waits for a reader: the start will, and so it may well be meant.
        Ok(meta) if meta.file_type().is_fifo() => None,
        Ok(_) => std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .err()
            .map(|e| format!("cannot open {shown} to append to it: {e}")),
        Err(_) => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !folder.is_dir() {
                return Some(if folder.exists() {
                    format!(
                        "{} is not a folder: {shown} cannot be created in it",
                        folder.display()
                    )
                } else {
                    format!("the folder {} does not exist", folder.display())
                });
            }
            let c_folder = std::ffi::CString::new(folder.as_os_str().as_encoded_bytes()).ok()?;
            // SAFETY: a valid C string; access only looks.
            let writable = unsafe { libc::access(c_folder.as_ptr(), libc::W_OK) } == 0;
            (!writable)
                .then(|| format!("cannot create {shown}: {}", std::io::Error::last_os_error()))
        }
    }
}

/// Gives the allocator's free pages back after loading: checking every rule compiles it once,
/// and that transient memory would otherwise stay in the proxy's resident size for its life.
pub fn release_load_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl Settings {
    /// The rewriter these settings describe.
    pub fn rewriter(&self) -> Rewriter {
        Rewriter {
            rules: self.rules.clone(),
            profile: self.profile,
            rewrite_rpc_errors: self.rewrite_rpc_errors,
            not_found_is_empty: self.not_found_is_empty.clone(),
            redactor: self.redactor.clone(),
            hidden_failures: self.hidden_failures,
        }
    }
}

/// The files a run with `flags` reads: the config file, then the rule files in the order
/// they are tried (the flags' before the config's).
fn files_of(flags: &Flags, config: &ConfigFile) -> Vec<PathBuf> {
    let base = config_dir(flags);
    flags
        .config
        .iter()
        .chain(&flags.rules)
        .cloned()
        .chain(config.rules.iter().map(|p| base.join(p)))
        .collect()
}

/// The environment variable a log level may come from, under the flag's and the file's.
pub const LOG_LEVEL_ENV: &str = "MCP_ERRNORM_LOG";

/// A log level: a level word, or comma-separated `target=level` directives. A bare word that is
/// no level would be read as the name of a module to log, which silences everything else.
pub fn check_log_level(filter: &str) -> Result<(), String> {
    const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let level = directive
            .rsplit_once('=')
            .map_or(directive, |(_, level)| level);
        if !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) {
            return Err(format!(
                "unknown log level '{level}' in \"{filter}\" (one of {}, or target=level \
                 directives)",
                LEVELS.join(", ")
            ));
        }
    }
    Ok(())
}

/// Where the key `path` (`max_line_bytes`, `timeouts.default_seconds`, `timeouts.tool.seconds`)
/// is written in a TOML text: its first line under the table (`[timeouts]`, `[[timeouts.tool]]`),
/// or written dotted at the top. Found by reading lines, not by parsing: only to point at it.
fn key_offset(text: &str, path: &str) -> Option<usize> {
    let (table, key) = path.rsplit_once('.').unwrap_or(("", path));
    let starts_key = |line: &str, key: &str| {
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let mut current = String::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let at = offset + (line.len() - trimmed.len());
        offset += line.len();
        if trimmed.starts_with('[') {
            current = trimmed
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
        } else if (current == table && starts_key(trimmed, key))
            || (current.is_empty() && starts_key(trimmed, path))
        {
            return Some(at);
        }
    }
    None
}

/// Where a variable of `[env]` is written (its name bare or quoted, after the table's header),
/// or the header itself.
fn env_key_offset(text: &str, name: &str) -> Option<usize> {
    let header = text.find("[env]")?;
    let after = &text[header..];
    [
        format!("\"{name}\""),
        format!("'{name}'"),
        format!("\n{name} "),
    ]
    .iter()
    .filter(|written| !name.is_empty() || written.starts_with(['"', '\'']))
    .find_map(|written| after.find(written.as_str()))
    .map(|o| header + o + usize::from(after[o..].starts_with('\n')))
    .or(Some(header))
}

/// Where paths in the config file are relative to: the config file's folder.
fn config_dir(flags: &Flags) -> &Path {
    flags
        .config
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""))
}

/// The files to watch for a reload, even when they do not load: the config and whatever rule
/// files it names, or, when the config itself does not read, the ones named before.
pub fn files_named(flags: &Flags, before: &[PathBuf]) -> Vec<PathBuf> {
    match flags.config.as_deref().map(read_config) {
        None => files_of(flags, &ConfigFile::default()),
        Some(Ok((_, config))) => files_of(flags, &config),
        Some(Err(_)) => before.to_vec(),
    }
}

fn read_config(path: &Path) -> Result<(SourceFile, ConfigFile), Diagnostics> {
    let file = SourceFile::read(path).map_err(|d| Diagnostics(vec![d]))?;
    match toml::from_str(&file.text) {
        Ok(config) => Ok((file, config)),
        Err(e) => {
            let d: Diagnostic = file.toml_diagnostic(&e, None);
            Err(Diagnostics(vec![d]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn values_refused_after_parsing_are_located_at_their_key() {
        let dir = tempfile::tempdir().unwrap();
        for (text, at) in [
            ("\n\nmax_line_bytes = 10\n", ":3:1:"),
            ("# c\n[timeouts]\ndefault_seconds = -1\n", ":3:1:"),
            (
                "[retry]\nbase_delay_ms = 9000\nmax_delay_ms = 10\n",
                ":2:1:",
            ),
            (
                "[[timeouts.tool]]\ntools = [\"a\"]\n  seconds = 1e30\n",
                ":3:3:",
            ),
            (
                "profile = \"mcp\"\n[redact]\npatterns = [\"(x\"]\n",
                ":3:1:",
            ),
            ("timeouts.default_seconds = -1\n", ":1:1:"),
        ] {
            let flags = Flags {
                config: Some(write(dir.path(), "c.toml", text)),
                ..Flags::default()
            };
            let Err(problem) = Settings::load(&flags) else {
                panic!("{text:?} accepted")
            };
            let problem = problem.to_string();
            assert!(
                problem.contains(&format!("c.toml{at}")),
                "{text:?}: {problem}"
            );
        }
    }

    #[test]
    fn config_rules_resolve_relative_to_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "mine.toml",
            "[[rule]]\nid = \"mine\"\nmatch = \"x\"\ncategory = \"business\"\n",
        );
        let config = write(
            dir.path(),
            "config.toml",
            "profile = \"enterprise\"\nrules = [\"mine.toml\"]\ndefault_rules = false\n\
             [shutdown]\nclose_wait_ms = 10\n[env]\nA = \"1\"\n",
        );
        let flags = Flags {
            config: Some(config),
            ..Flags::default()
        };
        let s = Settings::load(&flags).unwrap();
        assert_eq!(s.profile, Profile::Enterprise);
        assert_eq!(s.rules.rules().len(), 1);
        assert_eq!(s.close_wait, Duration::from_millis(10));
        assert_eq!(s.term_wait, Duration::from_millis(1500));
        assert_eq!(s.env["A"], "1");
    }

    #[test]
    fn a_rule_file_named_twice_is_said_to_be_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let rules = write(
            dir.path(),
            "mine.toml",
            "[[rule]]\nid = \"mine\"\nmatch = \"x\"\ncategory = \"business\"\n",
        );
        // Once by the config file, under a name of its own (`./`), once by the flag through a
        // link: two names, one file.
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&rules, &link).unwrap();
        let config = write(dir.path(), "config.toml", "rules = [\"./mine.toml\"]\n");
        let flags = Flags {
            config: Some(config),
            rules: vec![link.clone()],
            ..Flags::default()
        };
        let e = Settings::load(&flags).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: the same rule file as {} is given twice: name each file once",
                dir.path().join("./mine.toml").display(),
                link.display()
            )
        );
    }

    #[test]
    fn log_keys_resolve_relative_to_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = write(
            dir.path(),
            "c.toml",
            "log_format = \"json\"\nlog_file = \"logs/proxy.log\"\n",
        );
        let flags = Flags {
            config: Some(config),
            ..Flags::default()
        };
        let s = Settings::load(&flags).unwrap();
        assert_eq!(s.log_format, LogFormat::Json);
        assert_eq!(s.log_file, Some(dir.path().join("logs/proxy.log")));
        assert_eq!(
            Settings::load(&Flags::default()).unwrap().log_format,
            LogFormat::Text
        );
    }

    #[test]
    fn flags_override_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let config = write(dir.path(), "c.toml", "profile = \"enterprise\"\n");
        let flags = Flags {
            config: Some(config),
            profile: Some(Profile::Mcp),
            ..Flags::default()
        };
        assert_eq!(Settings::load(&flags).unwrap().profile, Profile::Mcp);
    }

    #[test]
    fn bad_config_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let config = write(dir.path(), "c.toml", "profile = \"mcp\"\nprofil = 1\n");
        let flags = Flags {
            config: Some(config.clone()),
            ..Flags::default()
        };
        let e = Settings::load(&flags).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:2:1: unknown field `profil`", config.display())),
            "{e}"
        );
    }

    #[test]
    fn missing_rule_file_is_an_error() {
        let flags = Flags {
            rules: vec![PathBuf::from("/nonexistent/rules.toml")],
            ..Flags::default()
        };
        let e = Settings::load(&flags).unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/rules.toml: cannot read"), "{e}");
    }
}
