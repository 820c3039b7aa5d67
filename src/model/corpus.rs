//! The labelled corpus the model learns from and is measured on: one failure a JSON line, as
//! `docs/labelling.md` describes. Pure: text in, cases out; reading the files is the caller's.

use serde::Deserialize;

use crate::taxonomy::{Category, Source};

/// One labelled failure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub text: String,
    pub tool: String,
    pub source: Source,
    pub rpc_code: Option<i64>,
    pub category: Category,
    /// A second category a careful reader could defend; agreement with either counts.
    #[serde(default)]
    pub also: Option<Category>,
    pub code: String,
    pub retryable: bool,
    /// The server, API or library; the oldest cases leave it to their origin.
    #[serde(default)]
    family: Option<String>,
    pub origin: String,
}

impl Case {
    /// The server, API or library the text comes from.
    pub fn family(&self) -> String {
        self.family
            .clone()
            .unwrap_or_else(|| origin_name(&self.origin))
    }

    /// Whether a verdict of this category agrees with the label.
    pub fn accepts(&self, got: Category) -> bool {
        got == self.category || self.also == Some(got)
    }
}

/// The package or API an origin names, without version or detail:
/// `httpx@0.28.1` -> `httpx`, `psql (PostgreSQL) 15.18` -> `psql`.
pub fn origin_name(origin: &str) -> String {
    let end = origin
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '@' || c == '(')
        .map_or(origin.len(), |(i, _)| i);
    origin[..end].trim().to_owned()
}

/// A corpus line that is not a case.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {source}")]
pub struct CorpusError {
    pub file: String,
    pub line: usize,
    pub source: serde_json::Error,
}

/// The cases of one JSON-lines file named `name`; an error names `name:line`.
pub fn parse(name: &str, text: &str) -> Result<Vec<Case>, CorpusError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|source| CorpusError {
                file: name.to_owned(),
                line: n + 1,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_names_drop_versions_and_details() {
        assert_eq!(origin_name("httpx@0.28.1"), "httpx");
        assert_eq!(origin_name("psql (PostgreSQL) 15.18"), "psql");
        assert_eq!(
            origin_name("@modelcontextprotocol/server-github@2025.4.8 (upstream: x)"),
            "@modelcontextprotocol/server-github"
        );
        assert_eq!(origin_name("rust std@1.95.0 (std::io)"), "rust std");
    }

    #[test]
    fn a_broken_line_is_named() {
        let e = parse("f.jsonl", "\n{\"text\": 1}\n").unwrap_err();
        assert!(e.to_string().starts_with("f.jsonl:2: "), "{e}");
    }
}
