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
use serde_json::Value;

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

    /// The canonical object as JSON text: what [`StructuredError::canonical`] serializes to,
    /// written without building a `Value` first.
    pub fn canonical_json(&self) -> String {
        let mut out = Vec::with_capacity(self.size_hint());
        serde_json::to_writer(&mut out, self).expect("a StructuredError always serializes");
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// The object the model reads in the given profile.
    pub fn in_profile(&self, profile: Profile) -> Value {
        serde_json::from_str(&self.profile_json(profile)).expect("a profile is valid JSON")
    }

    /// The object the model reads, as JSON text.
    pub fn profile_json(&self, profile: Profile) -> String {
        let mut out = Vec::with_capacity(self.size_hint());
        self.write_profile(profile, &mut out);
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// Appends the object the model reads, as JSON. Written straight from borrowed views of
    /// the error: a rewrite shows it twice (text and `structuredContent`), and building `Value`
    /// trees for it was most of a rewrite's cost.
    pub fn write_profile(&self, profile: Profile, out: &mut Vec<u8>) {
        let written = match profile {
            Profile::Mcp => serde_json::to_writer(out, &McpView::of(self)),
            Profile::Enterprise => serde_json::to_writer(out, &EnterpriseView::of(self)),
        };
        written.expect("a profile always serializes");
    }

    /// Room for the error's JSON in one allocation, mostly: its texts and some for the rest.
    pub fn size_hint(&self) -> usize {
        let texts = self.message.len()
            + self.user_message.as_ref().map_or(0, String::len)
            + self.alternatives.iter().map(|a| a.len() + 3).sum::<usize>()
            + self.original_error.text.len();
        512 + texts + texts / 8
    }
}

/// The `mcp` profile: the canonical object without its empty fields (null, or an empty list),
/// so the model reads only what is said. `partial_results: null` stays: the MCP shape shows it, and
/// "no partial results" is news; `attempted_query` stays too, and `attempts` shows only when the
/// proxy retried.
#[derive(Serialize)]
struct McpView<'a> {
    #[serde(rename = "errorCategory")]
    category: Category,
    #[serde(rename = "errorCode")]
    code: &'a str,
    #[serde(rename = "isRetryable")]
    retryable: bool,
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    retry_after_seconds: Option<u64>,
    message: &'a str,
    #[serde(rename = "userMessage", skip_serializing_if = "Option::is_none")]
    user_message: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    alternatives: &'a [String],
    attempted_query: &'a Option<AttemptedQuery>,
    partial_results: &'a Option<Value>,
    #[serde(rename = "originalError")]
    original_error: OriginalView<'a>,
    #[serde(rename = "ruleId", skip_serializing_if = "Option::is_none")]
    rule_id: Option<&'a str>,
    #[serde(skip_serializing_if = "is_one")]
    attempts: u32,
}

/// `originalError` without its empty fields, in both profiles (the enterprise profile names
/// them in snake case).
#[derive(Serialize)]
struct OriginalView<'a> {
    source: Source,
    text: &'a str,
    #[serde(rename = "rpcCode", skip_serializing_if = "Option::is_none")]
    rpc_code: Option<i64>,
    #[serde(rename = "rpcData", skip_serializing_if = "is_empty")]
    rpc_data: Option<&'a Value>,
}

#[derive(Serialize)]
struct EnterpriseOriginalView<'a> {
    source: Source,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rpc_code: Option<i64>,
    #[serde(skip_serializing_if = "is_empty")]
    rpc_data: Option<&'a Value>,
}

/// The `enterprise` profile: the envelope of seed `000_...`, then the same context.
#[derive(Serialize)]
struct EnterpriseView<'a> {
    success: bool,
    data: (),
    error_code: &'a str,
    error_message: &'a str,
    retry_recommended: bool,
    retry_after_seconds: Option<u64>,
    error_category: Category,
    user_message: Option<&'a str>,
    alternatives: &'a [String],
    attempted_query: &'a Option<AttemptedQuery>,
    partial_results: &'a Option<Value>,
    original_error: EnterpriseOriginalView<'a>,
    rule_id: Option<&'a str>,
    attempts: u32,
}

impl<'a> McpView<'a> {
    fn of(e: &'a StructuredError) -> Self {
        McpView {
            category: e.category,
            code: &e.code,
            retryable: e.retryable,
            retry_after_seconds: e.retry_after_seconds,
            message: &e.message,
            user_message: e.user_message.as_deref(),
            alternatives: &e.alternatives,
            attempted_query: &e.attempted_query,
            partial_results: &e.partial_results,
            original_error: OriginalView {
                source: e.original_error.source,
                text: &e.original_error.text,
                rpc_code: e.original_error.rpc_code,
                rpc_data: e.original_error.rpc_data.as_ref(),
            },
            rule_id: e.rule_id.as_deref(),
            attempts: e.attempts,
        }
    }
}

impl<'a> EnterpriseView<'a> {
    fn of(e: &'a StructuredError) -> Self {
        EnterpriseView {
            success: false,
            data: (),
            error_code: &e.code,
            error_message: &e.message,
            retry_recommended: e.retryable,
            retry_after_seconds: e
                .retry_after_seconds
                .or(e.retryable.then(|| backoff(e.attempts))),
            error_category: e.category,
            user_message: e.user_message.as_deref(),
            alternatives: &e.alternatives,
            attempted_query: &e.attempted_query,
            partial_results: &e.partial_results,
            original_error: EnterpriseOriginalView {
                source: e.original_error.source,
                text: &e.original_error.text,
                rpc_code: e.original_error.rpc_code,
                rpc_data: e.original_error.rpc_data.as_ref(),
            },
            rule_id: e.rule_id.as_deref(),
            attempts: e.attempts,
        }
    }
}

/// The wait seed `000` asks for whenever a retry is recommended, when the server named none:
/// exponential backoff, 1 s after one attempt, doubling with each attempt the proxy made.
fn backoff(attempts: u32) -> u64 {
    1 << attempts.clamp(1, 7).saturating_sub(1)
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// An empty field, left out of a profile: absent, null, or an empty list.
fn is_empty(value: &Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v.as_array().is_some_and(Vec::is_empty))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::codes;
    use serde_json::{json, Map};

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
        // Retry recommended without a wait from the server: backoff, doubling per attempt.
        let mut e = sample();
        e.retry_after_seconds = None;
        assert_eq!(e.in_profile(Profile::Enterprise)["retry_after_seconds"], 1);
        e.attempts = 3;
        assert_eq!(e.in_profile(Profile::Enterprise)["retry_after_seconds"], 4);
        e.retryable = false;
        assert_eq!(
            e.in_profile(Profile::Enterprise)["retry_after_seconds"],
            Value::Null
        );
        assert_eq!(
            v["original_error"],
            json!({"source": "result", "text": "429 Too Many Requests"})
        );
    }

    /// The profiles as they were first written, over `Value` trees: the reference the direct
    /// serialization must match byte for byte.
    fn reference(e: &StructuredError, profile: Profile) -> Value {
        fn prune_empty(object: &mut Map<String, Value>, keep: &[&str]) {
            object.retain(|key, value| {
                keep.contains(&key.as_str())
                    || !(value.is_null() || value.as_array().is_some_and(Vec::is_empty))
            });
        }
        match profile {
            Profile::Mcp => {
                let Value::Object(mut object) = e.canonical() else {
                    unreachable!()
                };
                prune_empty(&mut object, &["partial_results", "attempted_query"]);
                if e.attempts == 1 {
                    object.remove("attempts");
                }
                if let Some(Value::Object(original)) = object.get_mut("originalError") {
                    prune_empty(original, &[]);
                }
                Value::Object(object)
            }
            Profile::Enterprise => {
                let mut object = json!({
                    "success": false,
                    "data": null,
                    "error_code": e.code,
                    "error_message": e.message,
                    "retry_recommended": e.retryable,
                    "retry_after_seconds": e.retry_after_seconds
                        .or(e.retryable.then(|| backoff(e.attempts))),
                    "error_category": e.category,
                    "user_message": e.user_message,
                    "alternatives": e.alternatives,
                    "attempted_query": e.attempted_query,
                    "partial_results": e.partial_results,
                    "original_error": {
                        "source": e.original_error.source,
                        "text": e.original_error.text,
                        "rpc_code": e.original_error.rpc_code,
                        "rpc_data": e.original_error.rpc_data,
                    },
                    "rule_id": e.rule_id,
                    "attempts": e.attempts,
                });
                if let Some(Value::Object(original)) = object.get_mut("original_error") {
                    prune_empty(original, &[]);
                }
                object
            }
        }
    }

    #[test]
    fn direct_serialization_matches_the_value_trees() {
        let mut variants = vec![sample()];
        let mut full = sample();
        full.retry_after_seconds = None;
        full.user_message = Some("Ask \"them\"\n".into());
        full.alternatives = vec!["a".into(), "b é".into()];
        full.attempted_query = None;
        full.partial_results = Some(json!({"rows": [1, 2.5, null]}));
        full.original_error.rpc_code = Some(-32602);
        full.original_error.rpc_data = Some(json!({"d": []}));
        full.rule_id = None;
        full.attempts = 3;
        variants.push(full);
        for data in [json!(null), json!([]), json!([0]), json!("x"), json!({})] {
            let mut e = sample();
            e.original_error.rpc_data = Some(data);
            e.partial_results = Some(json!(null));
            e.attempted_query.as_mut().unwrap().arguments = Value::Null;
            variants.push(e);
        }
        for e in &variants {
            assert_eq!(e.canonical_json(), e.canonical().to_string());
            for profile in [Profile::Mcp, Profile::Enterprise] {
                assert_eq!(
                    e.profile_json(profile),
                    reference(e, profile).to_string(),
                    "{profile:?} {e:?}"
                );
            }
        }
    }
}
