//! The settings of a run, resolved: command-line flags over the config file over defaults,
//! every value checked. The high level of `config`, from the file's keys (`super::schema`)
//! and the rule files, as the shell read them ([`Sources`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::schema::{
    env_key_offset, key_offset, ConfigFile, LogFormat, NonJsonLines, RestartConfig,
};
use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};
use crate::recovery::Policy;
use crate::redact::Redactor;
use crate::render::Profile;
use crate::rewrite::Rewriter;
use crate::rules::{default_sources, RuleSet};

/// `max_pending_requests` by default: about 10 MB of requests waiting (some 500 bytes each,
/// plus their params), far beyond what clients keep in flight (the benchmark's 32), and twice
/// the 10,000 calls in flight the tests hold.
pub const DEFAULT_MAX_PENDING: usize = 20_000;

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
    /// `log_file` and `log_unmatched` and where they are named: `check` probes them as a
    /// start would open them (a start finds out by opening them; a reload does not apply them).
    pub log_paths: Vec<LogPath>,
}

/// What the shell read for a run (`crate::files`), for [`Settings::resolve`].
#[derive(Debug, Default)]
pub struct Sources {
    /// The config file, when one is named: its text (to locate keys) and its keys.
    pub(crate) config: Option<(SourceFile, ConfigFile)>,
    /// The rule files `files_of` names after the config file, in order: each read, or why
    /// not.
    pub rule_files: Vec<Result<SourceFile, Diagnostic>>,
    /// The level in [`LOG_LEVEL_ENV`], used where neither the flag nor the file names one.
    pub env_level: Option<String>,
}

impl Settings {
    /// Resolves the flags over the config file over defaults, and compiles the rule files. All
    /// or nothing: any problem in any file fails the whole, with every problem listed.
    // Long: every key in one pass, so that every problem is listed at once.
    pub fn resolve(flags: &Flags, sources: Sources) -> Result<Settings, Diagnostics> {
        let (config_file, config) = sources
            .config
            .unwrap_or_else(|| (SourceFile::new("(config)", ""), ConfigFile::default()));
        let files = files_of(flags, &config);
        let base = config_dir(flags);
        let mut problems = Vec::new();
        let use_defaults = !flags.no_default_rules && config.default_rules.unwrap_or(true);
        let rules = rule_set(sources.rule_files, use_defaults, &mut problems);
        // The environment's level counts only where neither the flag nor the file names one,
        // and is judged like them: a bad one would otherwise be dropped for `info` unseen.
        let env_level = (flags.log_level.is_none() && config.log_level.is_none())
            .then_some(sources.env_level)
            .flatten();
        for (named_at, level) in [
            ("--log-level", flags.log_level.as_deref()),
            (LOG_LEVEL_ENV, env_level.as_deref()),
        ] {
            if let Some(Err(e)) = level.map(check_log_level) {
                problems.push(Diagnostic {
                    message: e.to_string(),
                    ..named_by_flag(named_at)
                });
            }
        }
        // A value the file's syntax allows but the proxy cannot use, located at its key.
        let at = |key: &str| key_offset(&config_file.text, key);
        let mut note = |at: Option<usize>, message: String| {
            problems.push(config_file.diagnostic(at.map(|o| o..o), None, message));
        };
        let limits = Limits {
            max_line_bytes: config.max_line_bytes.unwrap_or(16 << 20),
            // Past a pipe's worth, a held answer would make the client wait for all of it twice
            // over.
            stream_answers_over: config.stream_answers_over.unwrap_or(64 << 10),
            max_pending_requests: config.max_pending_requests.unwrap_or(DEFAULT_MAX_PENDING),
        };
        let policy = Policy::new(config.retry, config.timeouts, config.breaker)
            .map_err(|e| note(at(e.key), e.to_string()))
            .ok();
        let not_found_is_empty = globs(&config.not_found_is_empty)
            .map_err(|all| {
                for message in all {
                    note(at("not_found_is_empty"), message);
                }
            })
            .ok();
        let redactor = Redactor::new(&config.redact)
            .map_err(|error| note(at("redact.patterns"), error.to_string()))
            .ok();
        let limits = Limits::of(limits, |key, message| note(at(key), message));
        // The flag's level wins over the file's, and is said of the flag.
        if flags.log_level.is_none() {
            if let Some(Err(e)) = config.log_level.as_deref().map(check_log_level) {
                note(at("log_level"), e.to_string());
            }
        }
        let log_level = flags.log_level.clone().or(config.log_level).or(env_level);
        for (name, at) in bad_env(&config.env, &config_file.text) {
            note(
                at,
                format!(
                    "[env] '{}': a variable's name must be non-empty, without '=' or NUL, \
                     and its value without NUL",
                    name.escape_debug()
                ),
            );
        }
        let log_file = flags
            .log_file
            .clone()
            .or_else(|| config.log_file.map(|p| base.join(p)));
        let log_unmatched = flags
            .log_unmatched
            .clone()
            .or_else(|| config.log_unmatched.map(|p| base.join(p)));
        let log_paths = [
            ("log_file", &flags.log_file, &log_file),
            ("log_unmatched", &flags.log_unmatched, &log_unmatched),
        ]
        .into_iter()
        .filter_map(|(key, flag, path)| {
            let path = path.clone()?;
            let named_at = match flag {
                Some(_) => named_by_flag(key),
                None => config_file.diagnostic(at(key).map(|o| o..o), None, ""),
            };
            Some(LogPath {
                key,
                path,
                named_at,
            })
        })
        .collect();
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
            max_line_bytes: limits.max_line_bytes,
            stream_answers_over: limits.stream_answers_over,
            max_pending_requests: limits.max_pending_requests,
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
            log_paths,
            files,
            close_wait: Duration::from_millis(config.shutdown.close_wait_ms.unwrap_or(2000)),
            term_wait: Duration::from_millis(config.shutdown.term_wait_ms.unwrap_or(1500)),
            answer_wait: Duration::from_millis(config.shutdown.answer_wait_ms.unwrap_or(30_000)),
            env: config.env,
        })
    }
}

/// The rule files read, compiled over the embedded rules (`use_defaults`); `None` with the
/// problems told when a file could not be read or does not compile.
fn rule_set(
    files: Vec<Result<SourceFile, Diagnostic>>,
    use_defaults: bool,
    problems: &mut Vec<Diagnostic>,
) -> Option<RuleSet> {
    let mut user = Vec::new();
    for file in files {
        match file {
            Ok(file) => user.push(file),
            Err(d) => problems.push(d),
        }
    }
    if !problems.is_empty() {
        return None;
    }
    let defaults = if use_defaults {
        default_sources()
    } else {
        Vec::new()
    };
    RuleSet::load(&user, &defaults)
        .map_err(|d| problems.extend(d.0))
        .ok()
}

/// A place for a problem with what a flag (`--log-file`) or the environment names.
fn named_by_flag(name: &str) -> Diagnostic {
    let file = match name.strip_prefix("--") {
        Some(_) => name.to_owned(),
        None if name == LOG_LEVEL_ENV => name.to_owned(),
        None => format!("--{}", name.replace('_', "-")),
    };
    Diagnostic {
        file,
        line: 0,
        col: 0,
        rule: None,
        message: String::new(),
    }
}

/// The variables of `[env]` that `execve` cannot take, and where each is written in `text`.
fn bad_env<'a>(env: &'a BTreeMap<String, String>, text: &str) -> Vec<(&'a String, Option<usize>)> {
    env.iter()
        .filter(|(name, value)| {
            name.is_empty() || name.contains(['=', '\0']) || value.contains('\0')
        })
        .map(|(name, _)| (name, env_key_offset(text, name)))
        .collect()
}

/// `not_found_is_empty`: the tools whose "not found" is an empty answer; every glob that is
/// not one is said.
fn globs(patterns: &[String]) -> Result<GlobSet, Vec<String>> {
    let mut set = GlobSetBuilder::new();
    let mut problems = Vec::new();
    for glob in patterns {
        match Glob::new(glob) {
            Ok(glob) => {
                set.add(glob);
            }
            Err(e) => problems.push(format!("invalid glob '{glob}' in not_found_is_empty: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    set.build().map_err(|e| vec![e.to_string()])
}

/// The sizes that bound the proxy's memory, with their defaults.
struct Limits {
    max_line_bytes: usize,
    stream_answers_over: usize,
    max_pending_requests: usize,
}

impl Limits {
    /// `limits`, each value out of range told to `note` at its key.
    fn of(limits: Limits, mut note: impl FnMut(&str, String)) -> Limits {
        let Limits {
            max_line_bytes,
            stream_answers_over,
            max_pending_requests,
        } = limits;
        if max_line_bytes < 1024 {
            note(
                "max_line_bytes",
                format!("max_line_bytes must be at least 1024, not {max_line_bytes}"),
            );
        }
        if stream_answers_over < 1024 {
            note(
                "stream_answers_over",
                format!("stream_answers_over must be at least 1024, not {stream_answers_over}"),
            );
        }
        if max_pending_requests == 0 {
            note(
                "max_pending_requests",
                "max_pending_requests must be at least 1".to_owned(),
            );
        }
        limits
    }
}

/// A log the proxy appends to, and where it is named, so that a problem the shell finds when it
/// probes the path is said at its key or flag.
#[derive(Debug, Clone)]
pub struct LogPath {
    /// `log_file` or `log_unmatched`.
    pub key: &'static str,
    pub path: PathBuf,
    named_at: Diagnostic,
}

impl LogPath {
    /// `problem`, found with this path, said where the path is named.
    pub fn problem(&self, problem: &str) -> Diagnostic {
        Diagnostic {
            message: format!("{}: {problem}: the proxy would not start", self.key),
            ..self.named_at.clone()
        }
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
pub(crate) fn files_of(flags: &Flags, config: &ConfigFile) -> Vec<PathBuf> {
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

/// A log level that is none: a bare word that is no level would be read as the name of a
/// module to log, which silences everything else.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown log level '{level}' in \"{filter}\" (one of {}, or target=level directives)",
    LEVELS.join(", ")
)]
pub struct UnknownLogLevel {
    pub level: String,
    pub filter: String,
}

const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

/// Checks a log level: a level word, or comma-separated `target=level` directives.
pub fn check_log_level(filter: &str) -> Result<(), UnknownLogLevel> {
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let level = directive
            .rsplit_once('=')
            .map_or(directive, |(_, level)| level);
        if !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) {
            return Err(UnknownLogLevel {
                level: level.to_owned(),
                filter: filter.to_owned(),
            });
        }
    }
    Ok(())
}

/// Where paths in the config file are relative to: the config file's folder.
fn config_dir(flags: &Flags) -> &Path {
    flags
        .config
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""))
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
                "error: {}: the same rule file as {} is given twice: name each file once",
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
            e.starts_with(&format!(
                "error: {}:2:1: unknown field `profil`",
                config.display()
            )),
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
        assert!(
            e.starts_with("error: /nonexistent/rules.toml: cannot read"),
            "{e}"
        );
    }
}
