//! Redaction of secrets in what the proxy writes itself: structured errors and its logs.
//! Upstream error texts often carry tokens, passwords in URLs or private keys; the agent and
//! the log shipper need the failure, not the secret. Pure.
//!
//! Here: the config, the [`Redactor`] and its text entry points. Its parts, by topic:
//! - `normalise`: a text as the patterns read it (no colour codes, escaped quotes plain);
//! - `patterns`: the shipped patterns, what common secrets look like;
//! - `mask`: what of a match is masked, and what a shipped pattern spares;
//! - `value_shapes`: whether a value is shaped like a secret, or plain (a word, a path, a
//!   reference to where the secret is);
//! - `key_words`: whether a key or a flag names a secret, judged by its words;
//! - `json_walk`: secrets in JSON values (keys, name/value pairs, command lines as lists).
//!
//! The cases the tests hold it to are data: `redact/cases/*.jsonl` (see its README).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

mod json_walk;
mod key_words;
mod mask;
mod normalise;
mod patterns;
mod value_shapes;

use mask::Mask;
use normalise::readable;

pub use patterns::DEFAULT_PATTERNS;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// The shortest secret found in an upstream's text that is masked again wherever the proxy
/// quotes it ([`Redactor::secrets_in`]): shorter ones would mask common words.
const MIN_QUOTED_SECRET: usize = 6;

/// `[redact]` in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedactConfig {
    /// Use the shipped patterns.
    pub defaults: bool,
    /// Patterns of your own (regexes; a group named `secret` limits what is masked).
    pub patterns: Vec<String>,
    /// What `attempted_query` carries: the full arguments, the tool name only, or nothing.
    pub attempted_query: QueryDetail,
}

impl Default for RedactConfig {
    fn default() -> Self {
        RedactConfig {
            defaults: true,
            patterns: Vec::new(),
            attempted_query: QueryDetail::Full,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryDetail {
    #[default]
    Full,
    Tool,
    None,
}

/// A pattern, compiled when it first finds something: most never do, and each would cost
/// start-up time and memory.
#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    fn get(&self) -> &Regex {
        self.compiled
            .get_or_init(|| compile(&self.text).expect("checked when the redactor was made"))
    }
}

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).size_limit(1 << 20).build()
}

/// The compiled patterns.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Shared by the clones (the settings', each rewriter's), which then compile each once.
    patterns: Arc<[Pattern]>,
    /// How many of `patterns`, first, are the shipped ones.
    shipped: usize,
    /// All patterns at once: most texts hold no secret, and one scan tells.
    any: regex::RegexSet,
    pub attempted_query: QueryDetail,
}

/// Why the redaction patterns of a config cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    #[error("invalid redaction pattern '{pattern}': {source}")]
    Invalid {
        pattern: String,
        source: regex::Error,
    },
    #[error(
        "redaction pattern '{0}' can match an empty text (as `\\b` or `x?` do): it would mask \
         between characters"
    )]
    MatchesEmpty(String),
    #[error("the redaction patterns do not compile together: {0}")]
    Together(regex::Error),
}

impl Redactor {
    pub fn new(config: &RedactConfig) -> Result<Redactor, RedactError> {
        let shipped = DEFAULT_PATTERNS
            .iter()
            .map(|(_, p)| *p)
            .filter(|_| config.defaults);
        // The shipped patterns compile (a test makes sure); yours are checked now.
        let shipped = shipped.map(|p| {
            Ok(Pattern {
                text: p.to_owned(),
                compiled: OnceLock::new(),
            })
        });
        let yours = config.patterns.iter().map(|p| {
            let regex = compile(p).map_err(|source| RedactError::Invalid {
                pattern: p.clone(),
                source,
            })?;
            // Matching nothing at all, or nothing beside something (`\b`, `x?`).
            let can_be_empty = regex_automata::util::syntax::parse(p)
                .map_or(true, |hir| hir.properties().minimum_len() == Some(0));
            if can_be_empty {
                return Err(RedactError::MatchesEmpty(p.clone()));
            }
            Ok(Pattern {
                text: p.clone(),
                compiled: OnceLock::from(regex),
            })
        });
        let patterns = shipped
            .chain(yours)
            .collect::<Result<Arc<[Pattern]>, RedactError>>()?;
        let any = regex::RegexSet::new(patterns.iter().map(|p| &p.text))
            .map_err(RedactError::Together)?;
        Ok(Redactor {
            patterns,
            shipped: if config.defaults {
                DEFAULT_PATTERNS.len()
            } else {
                0
            },
            any,
            attempted_query: config.attempted_query,
        })
    }

    /// The shipped patterns, full attempted queries.
    pub fn defaults() -> Redactor {
        Redactor::new(&RedactConfig::default()).expect("the shipped patterns compile")
    }

    /// Whether any pattern finds something in `text`.
    pub fn finds_any(&self, text: &str) -> bool {
        self.any.is_match(&readable(text))
    }

    /// `text` with every secret masked. Colour codes hide secrets from the patterns, or make
    /// them mask the code instead (`\x1b[2mapi_key\x1b[0m=\x1b[35mKEY`, `password:
    /// \x1b[32m'x'`, as colourful loggers and inspectors print): a coloured text is judged and
    /// masked without its colours, which it loses only when it shows a secret.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let any = &self.any;
        let plain = readable(text);
        if !any.is_match(&plain) {
            return Cow::Borrowed(text);
        }
        // Which patterns match the text as it stands: the set tells in one scan, where asking
        // each pattern in turn cost a search apiece. Masking changes the text, so it is asked
        // again after each pattern that masked something.
        let mut hits = any.matches(&plain);
        let mut out = plain;
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            let masked = pattern.get().replace_all(&out, self.mask(i)).into_owned();
            hits = any.matches(&masked);
            out = Cow::Owned(masked);
        }
        out
    }

    /// The secrets the patterns find in `text` (what each match masks). Found in an upstream's
    /// text, a secret is masked wherever the proxy quotes it again: a rule's message fills its
    /// template from a capture, without the context (`token: '...'`) that marked it.
    pub fn secrets_in(&self, text: &str) -> Vec<String> {
        let text = &*readable(text);
        let hits = self.any.matches(text);
        let mut found = Vec::new();
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            for c in pattern.get().captures_iter(text) {
                let secret = self.mask(i).secret_of(&c).map(|(_, secret)| secret);
                // Not a word or two that happen to follow a key (`POSTGRES_PASSWORD=password`,
                // `api_key=api_key`): only what could be a secret, masked wherever it is.
                let word = |s: &str| s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                let carried = secret.filter(|s| s.len() >= MIN_QUOTED_SECRET && !word(s.as_str()));
                if let Some(s) = carried {
                    found.push(s.as_str().to_owned());
                }
            }
        }
        found
    }

    /// `text` with every secret masked, `known` ones included wherever they are.
    pub fn text_knowing<'a>(&self, text: &'a str, known: &[String]) -> Cow<'a, str> {
        if !self.active() {
            return Cow::Borrowed(text);
        }
        let out = without_known(text, known);
        if let Cow::Owned(masked) = self.text(&out) {
            return Cow::Owned(masked);
        }
        out
    }

    fn active(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// How the `i`-th pattern masks: a shipped one spares page cursors and plain words (a key
    /// of your own pattern means what it says).
    fn mask(&self, i: usize) -> Mask {
        Mask {
            spare_plain: i < self.shipped,
        }
    }
}

/// `text` with the `known` secrets in it masked.
fn without_known<'a>(text: &'a str, known: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for secret in known {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out
}

#[cfg(test)]
mod tests;

/// The head of `text` for a log line: on one line (every run of whitespace or control
/// characters one space), at most `max_chars` characters (then ending in `…`). Only its first
/// bytes are read: a text of megabytes costs no more than a short one. It masks nothing: give
/// it a text masked already (the rewriter masks a failure's text before anything quotes it).
pub fn one_line_head(text: &str, max_chars: usize) -> String {
    let read = crate::diagnostic::head(text, max_chars.saturating_mul(4) + 1024);
    let mut out: String = read
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let over = out.char_indices().nth(max_chars).is_some();
    if over || read.len() < text.len() {
        // The ellipsis counts in the `max_chars`.
        let keep = max_chars.saturating_sub(1);
        if let Some((i, _)) = out.char_indices().nth(keep) {
            out.truncate(i);
        }
        out.push('…');
    }
    out
}
