//! The config file as written: its keys and their types (serde, `deny_unknown_fields`), and
//! where a key is written, to point at it. The low level of `config`; `super::settings`
//! resolves it, with the flags, into the settings of a run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::diagnostic::{Diagnostic, SourceFile};
use crate::recovery::{BreakerConfig, RetryConfig, TimeoutConfig};
use crate::redact::RedactConfig;
use crate::render::Profile;

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

/// The config file's keys, each optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    pub(crate) profile: Option<Profile>,
    #[serde(default)]
    pub(crate) rules: Vec<PathBuf>,
    pub(crate) default_rules: Option<bool>,
    pub(crate) fallback_model: Option<bool>,
    pub(crate) hidden_failures: Option<bool>,
    pub(crate) rewrite_rpc_errors: Option<bool>,
    pub(crate) non_json_upstream_lines: Option<NonJsonLines>,
    pub(crate) log_level: Option<String>,
    pub(crate) log_format: Option<LogFormat>,
    pub(crate) log_file: Option<PathBuf>,
    pub(crate) log_unmatched: Option<PathBuf>,
    #[serde(default)]
    pub(crate) shutdown: ShutdownFile,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) retry: RetryConfig,
    #[serde(default)]
    pub(crate) timeouts: TimeoutConfig,
    #[serde(default)]
    pub(crate) breaker: BreakerConfig,
    #[serde(default)]
    pub(crate) restart: RestartConfig,
    #[serde(default)]
    pub(crate) not_found_is_empty: Vec<String>,
    #[serde(default)]
    pub(crate) redact: RedactConfig,
    pub(crate) max_line_bytes: Option<usize>,
    pub(crate) stream_answers_over: Option<usize>,
    pub(crate) max_pending_requests: Option<usize>,
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

/// `[shutdown]`: the waits of the shutdown ladder, in milliseconds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShutdownFile {
    pub(crate) close_wait_ms: Option<u64>,
    pub(crate) answer_wait_ms: Option<u64>,
    pub(crate) term_wait_ms: Option<u64>,
}

impl ConfigFile {
    /// The config file's keys, or where its text is not a config file.
    pub(crate) fn parse(file: &SourceFile) -> Result<ConfigFile, Diagnostic> {
        toml::from_str(&file.text).map_err(|e| file.toml_diagnostic(&e, None))
    }
}

/// Where the key `path` (`max_line_bytes`, `timeouts.default_seconds`, `timeouts.tool.seconds`)
/// is written in a TOML text: its first line under the table (`[timeouts]`, `[[timeouts.tool]]`),
/// or written dotted at the top. Found by reading lines, not by parsing: only to point at it.
pub(crate) fn key_offset(text: &str, path: &str) -> Option<usize> {
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
pub(crate) fn env_key_offset(text: &str, name: &str) -> Option<usize> {
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
