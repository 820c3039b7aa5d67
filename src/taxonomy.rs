//! The vocabulary of a structured error: categories, sources and the well-known error codes,
//! with the defaults that apply where a rule says nothing.

use serde::{Deserialize, Serialize};

/// The longest retry delay the proxy itself waits or says, in seconds: a day. A rule's
/// `retry_after` and `[retry] max_retry_after_seconds` are refused above it, which keeps every
/// delay the proxy sleeps far from overflowing as milliseconds.
pub const MAX_RETRY_AFTER_SECONDS: u64 = 86_400;

/// What kind of failure this is, which decides the agent's recovery path (seed `001_...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Timeouts, outages, rate limits: retry with backoff.
    Transient,
    /// Bad input, including names of things that do not exist: fix the input.
    Validation,
    /// A policy or business rule refused: explain, offer an alternative.
    Business,
    /// Access denied: escalate to a human.
    Permission,
    /// No rule matched. Never chosen by a rule, and never retryable: a guess that invites
    /// retries is worse than an honest "unknown".
    Unknown,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Transient => "transient",
            Category::Validation => "validation",
            Category::Business => "business",
            Category::Permission => "permission",
            Category::Unknown => "unknown",
        }
    }

    /// The error code a rule gets when it names a category but no code.
    pub fn default_code(self) -> &'static str {
        match self {
            Category::Transient => codes::SYSTEM_UNAVAILABLE,
            Category::Validation => codes::VALIDATION_ERROR,
            Category::Business => codes::BUSINESS_RULE,
            Category::Permission => codes::PERMISSION_DENIED,
            Category::Unknown => codes::UNCLASSIFIED,
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a failure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A `CallToolResult` with `isError: true`.
    Result,
    /// A JSON-RPC error answering a `tools/call`.
    Rpc,
    /// A successful result whose text shows a failure (legacy servers that answer
    /// `Database error: ...` as a success). Only rules with `source = "success"` see these.
    Success,
    /// The proxy itself: the upstream died or could not answer.
    Proxy,
}

/// The well-known error codes. Rules may name codes of their own (upper snake case).
pub mod codes {
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const PERMISSION_DENIED: &str = "PERMISSION_DENIED";
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    pub const SYSTEM_UNAVAILABLE: &str = "SYSTEM_UNAVAILABLE";
    pub const RATE_LIMITED: &str = "RATE_LIMITED";
    pub const TIMEOUT: &str = "TIMEOUT";
    pub const BUSINESS_RULE: &str = "BUSINESS_RULE";
    pub const ALREADY_EXISTS: &str = "ALREADY_EXISTS";
    pub const UNCLASSIFIED: &str = "UNCLASSIFIED";
}

/// The category a well-known code implies, for rules that name a code but no category.
/// NOT_FOUND is `validation`: the input names something that does not exist.
pub fn category_of_code(code: &str) -> Option<Category> {
    Some(match code {
        codes::NOT_FOUND | codes::VALIDATION_ERROR | codes::ALREADY_EXISTS => Category::Validation,
        codes::PERMISSION_DENIED => Category::Permission,
        codes::SYSTEM_UNAVAILABLE | codes::RATE_LIMITED | codes::TIMEOUT => Category::Transient,
        codes::BUSINESS_RULE => Category::Business,
        _ => return None,
    })
}

/// Whether a failure is worth retrying when its rule does not say: transient failures and
/// rate limits are, everything else is not.
pub fn default_retryable(category: Category, code: &str) -> bool {
    category == Category::Transient || code == codes::RATE_LIMITED
}

/// Whether `code` is spelled as an error code must be: `UPPER_SNAKE_CASE`.
pub fn is_valid_code(code: &str) -> bool {
    let mut chars = code.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_seeds() {
        assert_eq!(category_of_code("NOT_FOUND"), Some(Category::Validation));
        assert_eq!(category_of_code("RATE_LIMITED"), Some(Category::Transient));
        assert_eq!(category_of_code("MY_OWN"), None);
        assert!(default_retryable(Category::Transient, "TIMEOUT"));
        assert!(!default_retryable(Category::Validation, "NOT_FOUND"));
        assert!(!default_retryable(
            Category::Permission,
            "PERMISSION_DENIED"
        ));
        assert!(!default_retryable(Category::Unknown, "UNCLASSIFIED"));
    }

    #[test]
    fn code_spelling() {
        assert!(is_valid_code("NOT_FOUND"));
        assert!(is_valid_code("E42"));
        assert!(!is_valid_code("not_found"));
        assert!(!is_valid_code("_X"));
        assert!(!is_valid_code(""));
    }
}
