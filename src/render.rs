//! The structured error and its two wire shapes (profiles). Pure.
//!
//! The canonical object always has every field, with the names of seed `001_...`
//! (`errorCategory`, `isRetryable`, `message`, `attempted_query`, `partial_results`) plus the
//! proxy's own (`errorCode`, `retryAfterSeconds`, `userMessage`, `alternatives`,
//! `originalError`, `ruleId`). It travels in `_meta["mcp-errnorm/error"]` whatever the profile.
//! The profile decides what the model reads in `content[0]`:
//! - `mcp`: the canonical object without its empty fields, so the model reads only what is said;
//! - `enterprise`: the envelope of seed `000_...` (`success`, `data`, `error_code`,
//!   `error_message`, `retry_recommended`, `retry_after_seconds`) followed by the same context.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::classify::Verdict;
use crate::taxonomy::{Category, Source};

/// The `_meta` key that carries the canonical error.
pub const META_KEY: &str = "mcp-errnorm/error";

/// The shape of the error the model reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    #[default]
    Mcp,
    Enterprise,
}

/// The canonical structured error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructuredError {
    #[serde(rename = "errorCategory")]
    pub category: Category,
    #[serde(rename = "errorCode")]
    pub code: String,
    #[serde(rename = "isRetryable")]
    pub retryable: bool,
    #[serde(rename = "retryAfterSeconds")]
    pub retry_after_seconds: Option<u64>,
    pub message: String,
    #[serde(rename = "userMessage")]
    pub user_message: Option<String>,
    pub alternatives: Vec<String>,
    /// `None` where the config says attempted queries are not to be shown.
    pub attempted_query: Option<AttemptedQuery>,
    pub partial_results: Option<Value>,
    #[serde(rename = "originalError")]
    pub original_error: OriginalError,
    #[serde(rename = "ruleId")]
    pub rule_id: Option<String>,
    /// How many times the call was made: more than 1 when the proxy retried it.
    pub attempts: u32,
}

/// The call that failed, so a coordinator can re-issue or adapt it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptedQuery {
    pub tool: String,
    /// The arguments exactly as the client sent them (`null` when it sent none).
    pub arguments: Value,
}

/// What the upstream said, verbatim: nothing is lost by the rewrite.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OriginalError {
    pub source: Source,
    pub text: String,
    #[serde(rename = "rpcCode")]
    pub rpc_code: Option<i64>,
    #[serde(rename = "rpcData")]
    pub rpc_data: Option<Value>,
}

impl StructuredError {
    pub fn new(
        verdict: Verdict,
        attempted_query: Option<AttemptedQuery>,
        partial_results: Option<Value>,
        original_error: OriginalError,
    ) -> Self {
        StructuredError {
            category: verdict.category,
            code: verdict.code,
            retryable: verdict.retryable,
            retry_after_seconds: verdict.retry_after_seconds,
            message: verdict.message,
            user_message: verdict.user_message,
            alternatives: verdict.alternatives,
            attempted_query,
            partial_results,
            original_error,
            rule_id: verdict.rule_id,
            attempts: 1,
        }
    }

    /// The canonical object, every field present.
    pub fn canonical(&self) -> Value {
        serde_json::to_value(self).expect("a StructuredError always serializes")
    }

    /// The object the model reads in the given profile.
    pub fn in_profile(&self, profile: Profile) -> Value {
        match profile {
            Profile::Mcp => self.mcp(),
            Profile::Enterprise => self.enterprise(),
        }
    }

    fn mcp(&self) -> Value {
        let Value::Object(mut object) = self.canonical() else {
            unreachable!("a struct serializes to an object")
        };
        // `partial_results: null` stays: seed 001 shows it, and "no partial results" is news.
        prune_empty(&mut object, &["partial_results", "attempted_query"]);
        if self.attempts == 1 {
            object.remove("attempts");
        }
        if let Some(Value::Object(original)) = object.get_mut("originalError") {
            prune_empty(original, &[]);
        }
        Value::Object(object)
    }

    fn enterprise(&self) -> Value {
        let mut object = json!({
            "success": false,
            "data": null,
            "error_code": self.code,
            "error_message": self.message,
            "retry_recommended": self.retryable,
            "retry_after_seconds": self.retry_after_seconds,
            "error_category": self.category,
            "user_message": self.user_message,
            "alternatives": self.alternatives,
            "attempted_query": self.attempted_query,
            "partial_results": self.partial_results,
            "original_error": {
                "source": self.original_error.source,
                "text": self.original_error.text,
                "rpc_code": self.original_error.rpc_code,
                "rpc_data": self.original_error.rpc_data,
            },
            "rule_id": self.rule_id,
            "attempts": self.attempts,
        });
        if let Some(Value::Object(original)) = object.get_mut("original_error") {
            prune_empty(original, &[]);
        }
        object
    }
}

fn prune_empty(object: &mut Map<String, Value>, keep: &[&str]) {
    object.retain(|key, value| {
        keep.contains(&key.as_str())
            || !(value.is_null() || value.as_array().is_some_and(Vec::is_empty))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::codes;

    fn sample() -> StructuredError {
        StructuredError {
            category: Category::Transient,
            code: codes::RATE_LIMITED.into(),
            retryable: true,
            retry_after_seconds: Some(30),
            message: "Too many requests".into(),
            user_message: None,
            alternatives: vec![],
            attempted_query: Some(AttemptedQuery {
                tool: "search".into(),
                arguments: json!({"q": "x"}),
            }),
            partial_results: None,
            original_error: OriginalError {
                source: Source::Result,
                text: "429 Too Many Requests".into(),
                rpc_code: None,
                rpc_data: None,
            },
            rule_id: Some("http-429".into()),
            attempts: 1,
        }
    }

    #[test]
    fn canonical_has_every_field() {
        let v = sample().canonical();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "errorCategory",
                "errorCode",
                "isRetryable",
                "retryAfterSeconds",
                "message",
                "userMessage",
                "alternatives",
                "attempted_query",
                "partial_results",
                "originalError",
                "ruleId",
                "attempts"
            ]
        );
        assert_eq!(v["userMessage"], Value::Null);
        assert_eq!(v["originalError"]["rpcCode"], Value::Null);
    }

    #[test]
    fn mcp_profile_drops_only_empty_fields() {
        let v = sample().in_profile(Profile::Mcp);
        assert_eq!(
            v,
            json!({
                "errorCategory": "transient",
                "errorCode": "RATE_LIMITED",
                "isRetryable": true,
                "retryAfterSeconds": 30,
                "message": "Too many requests",
                "attempted_query": {"tool": "search", "arguments": {"q": "x"}},
                "partial_results": null,
                "originalError": {"source": "result", "text": "429 Too Many Requests"},
                "ruleId": "http-429"
            })
        );
    }

    #[test]
    fn enterprise_profile_is_the_seed_000_envelope() {
        let v = sample().in_profile(Profile::Enterprise);
        assert_eq!(v["success"], false);
        assert_eq!(v["data"], Value::Null);
        assert_eq!(v["error_code"], "RATE_LIMITED");
        assert_eq!(v["error_message"], "Too many requests");
        assert_eq!(v["retry_recommended"], true);
        assert_eq!(v["retry_after_seconds"], 30);
        assert_eq!(v["error_category"], "transient");
        assert_eq!(
            v["original_error"],
            json!({"source": "result", "text": "429 Too Many Requests"})
        );
    }
}
