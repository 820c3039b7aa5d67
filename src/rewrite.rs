//! Decides whether an upstream answer to a `tools/call` is a failure, and if so builds the
//! `CallToolResult` the client receives instead. Pure: values in, values out.
//!
//! Never rewritten: successful results, task handles, `input_required` results, and control
//! errors the client must act on itself (-32042, and -32020..-32099, reserved by 2026-07-28).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use globset::GlobSet;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

mod hidden;
mod plain;

use crate::classify::{classify, Verdict};
use crate::diagnostic::head;
use crate::redact::{QueryDetail, Redactor};
use crate::render::{AttemptedQuery, OriginalError, Profile, StructuredError, META_KEY};
use crate::rules::{Failure, RuleSet};
use crate::session::AnsweredCall;
use crate::taxonomy::{codes, Category, Source};

/// How failures are rewritten; immutable, shared by the relay.
#[derive(Debug, Clone)]
pub struct Rewriter {
    pub rules: Arc<RuleSet>,
    pub profile: Profile,
    /// Turn JSON-RPC errors answering `tools/call` into results too.
    pub rewrite_rpc_errors: bool,
    /// Tools for which "not found" is the truth about a query, not a failure: their NOT_FOUND
    /// failures reach the agent as valid empty results.
    pub not_found_is_empty: GlobSet,
    /// Masks secrets in everything the proxy writes into a structured error.
    pub redactor: Redactor,
    /// Look for failures answered as successes in every tool's results, by their shape
    /// (`hidden_failures` in the config); the `source = "success"` rules apply either way.
    pub hidden_failures: bool,
}

/// The `_meta` key of an empty result the proxy made from a NOT_FOUND failure.
pub const EMPTY_META_KEY: &str = "mcp-errnorm/empty";

/// What becomes of an answer to a tool call.
#[derive(Debug)]
pub enum Handling {
    /// A failure, rewritten.
    Rewrite(Box<RewrittenJson>),
    /// Anything else: passes as it came.
    Pass,
    /// A failure of this category that passes as it came: rewritten already, by an mcp-errnorm
    /// nearer the server.
    PassFailure(Category),
}

/// An upstream answer, borrowed from its line.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    Result(&'a RawValue),
    Error(&'a RawValue),
}

/// A rewritten answer: the new `result`, and the error it carries (for logs).
#[derive(Debug)]
pub struct Rewritten {
    pub result: Value,
    pub error: StructuredError,
}

/// A rewritten answer as the relay sends it: the new `result` as JSON text (the bytes
/// [`Rewritten::result`] serializes to), and the error it carries (for logs and retries).
#[derive(Debug)]
pub struct RewrittenJson {
    pub result: Vec<u8>,
    pub error: StructuredError,
}

impl From<RewrittenJson> for Rewritten {
    fn from(r: RewrittenJson) -> Rewritten {
        Rewritten {
            result: serde_json::from_slice(&r.result).expect("a rewritten result is valid JSON"),
            error: r.error,
        }
    }
}

#[derive(Deserialize, Default)]
struct RpcError {
    code: Option<i64>,
    message: Option<String>,
    data: Option<Value>,
}

/// Errors that steer the client (URL elicitation; version negotiation and the rest of the range
/// 2026-07-28 reserves): the client acts on them, so they must arrive as they are.
pub fn is_control_error(code: i64) -> bool {
    code == -32042 || (-32099..=-32020).contains(&code)
}

impl Rewriter {
    /// The replacement for an answer, or `None` when the answer passes untouched.
    pub fn rewrite(&self, answered: &AnsweredCall, answer: Answer) -> Option<Rewritten> {
        self.rewrite_json(answered, answer).map(Rewritten::from)
    }

    /// [`Rewriter::rewrite`], with the result as JSON text: what the relay writes.
    pub fn rewrite_json(&self, answered: &AnsweredCall, answer: Answer) -> Option<RewrittenJson> {
        match self.handle(answered, answer) {
            Handling::Rewrite(rewritten) => Some(*rewritten),
            Handling::Pass | Handling::PassFailure(_) => None,
        }
    }

    /// What becomes of an answer: [`Rewriter::rewrite_json`], telling a failure that passes (one
    /// rewritten already) from a success.
    pub fn handle(&self, answered: &AnsweredCall, answer: Answer) -> Handling {
        let rewritten = match answer {
            Answer::Result(raw) => return self.handle_result(answered, raw),
            Answer::Error(raw) if self.rewrite_rpc_errors => self.rewrite_error(answered, raw),
            Answer::Error(_) => None,
        };
        rewritten.map_or(Handling::Pass, |r| Handling::Rewrite(Box::new(r)))
    }

    fn handle_result(&self, answered: &AnsweredCall, raw: &RawValue) -> Handling {
        let tool = answered.call.name.as_str();
        let inspect_success = self.rules.inspects_successes_of(tool)
            || (self.hidden_failures && hidden::may_hide_a_failure(raw.get()));
        // Most answers are successes, often large: skip them without parsing.
        if !inspect_success && !raw.get().contains("\"isError\"") {
            return Handling::Pass;
        }
        // Rewritten already, by an mcp-errnorm nearer the server (wrapped twice, or behind a
        // gateway that runs one): it goes on as it is, not wrapped (or retried) a second time.
        if let Some(category) = rewritten_already(raw) {
            return Handling::PassFailure(category);
        }
        self.rewrite_result(answered, raw)
            .map_or(Handling::Pass, |r| Handling::Rewrite(Box::new(r)))
    }

    fn rewrite_result(&self, answered: &AnsweredCall, raw: &RawValue) -> Option<RewrittenJson> {
        let tool = answered.call.name.as_str();
        let read = plain::read(raw)?;
        let source = if read.is_error {
            Source::Result
        } else {
            Source::Success
        };
        let failure = Failure {
            text: &read.text,
            tool,
            source,
            rpc_code: None,
        };
        let verdict = if read.is_error || self.rules.first_match(failure).is_some() {
            // A failure, or a success a rule says is one.
            classify(&self.rules, failure)
        } else if self.hidden_failures && hidden::is_failure(raw.get(), &read, tool) {
            // A success whose shape says it is a failure: classified as an `isError` result is.
            classify(
                &self.rules,
                Failure {
                    source: Source::Result,
                    ..failure
                },
            )
        } else {
            return None;
        };
        let plain::ReadResult {
            members,
            text,
            kept_blocks,
            partial,
            ..
        } = read;
        let original = OriginalError {
            source,
            text,
            rpc_code: None,
            rpc_data: None,
        };
        // The upstream's own structured data rides along as partial results, never as the
        // error's `structuredContent`.
        let error = StructuredError::new(verdict, attempted_query(answered), partial, original);
        Some(self.finish(answered, members, kept_blocks, error))
    }

    fn rewrite_error(&self, answered: &AnsweredCall, raw: &RawValue) -> Option<RewrittenJson> {
        // `null` (a broken answer) is an error that says nothing.
        let error: RpcError = serde_json::from_str::<Option<RpcError>>(raw.get())
            .ok()?
            .unwrap_or_default();
        if error.code.is_some_and(is_control_error) {
            return None;
        }
        let text = error.message.unwrap_or_default();
        let failure = Failure {
            text: &text,
            tool: &answered.call.name,
            source: Source::Rpc,
            rpc_code: error.code,
        };
        let verdict = classify(&self.rules, failure);
        let original = OriginalError {
            source: Source::Rpc,
            text: text.clone(),
            rpc_code: error.code,
            rpc_data: error.data,
        };
        let error = StructuredError::new(verdict, attempted_query(answered), None, original);
        Some(self.finish(answered, Map::new(), Vec::new(), error))
    }

    /// The answer for a call the upstream can no longer give: it exited or its output closed.
    /// Retryable, since a restarted server may well answer.
    pub fn upstream_gone(&self, answered: &AnsweredCall, reason: &str) -> RewrittenJson {
        self.proxy_failure(
            answered,
            codes::SYSTEM_UNAVAILABLE,
            format!("The MCP server {reason} before answering this call."),
            format!("upstream {reason}"),
            None,
            "builtin:upstream-gone",
        )
    }

    /// The answer for a call that took longer than its configured limit.
    pub fn timed_out(&self, answered: &AnsweredCall, limit: Duration) -> RewrittenJson {
        self.proxy_failure(
            answered,
            codes::TIMEOUT,
            format!(
                "The MCP server did not answer within {} s; the call was cancelled.",
                limit.as_secs_f64()
            ),
            format!("no answer within {} s", limit.as_secs_f64()),
            None,
            "builtin:timeout",
        )
    }

    /// The answer for a call refused because `limit` requests already wait for the server
    /// (`max_pending_requests`): retryable once some are answered.
    pub fn too_many_waiting(&self, answered: &AnsweredCall, limit: usize) -> RewrittenJson {
        self.proxy_failure(
            answered,
            codes::RATE_LIMITED,
            format!(
                "{limit} requests already wait for the MCP server's answers; this call was not \
                 sent. Try again once some are answered."
            ),
            format!("{limit} requests waiting (max_pending_requests)"),
            Some(1),
            "builtin:too-many-pending",
        )
    }

    /// The answer for a call refused because its tool keeps failing (circuit breaker open).
    pub fn circuit_open(&self, answered: &AnsweredCall, wait: Duration) -> RewrittenJson {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        self.proxy_failure(
            answered,
            codes::SYSTEM_UNAVAILABLE,
            format!(
                "The tool '{}' failed repeatedly; calls to it are paused for {seconds} s.",
                answered.call.name
            ),
            "circuit breaker open".to_owned(),
            Some(seconds),
            "builtin:circuit-open",
        )
    }

    pub fn proxy_failure(
        &self,
        answered: &AnsweredCall,
        code: &str,
        message: String,
        text: String,
        retry_after_seconds: Option<u64>,
        rule: &str,
    ) -> RewrittenJson {
        let verdict = Verdict {
            category: Category::Transient,
            code: code.to_owned(),
            retryable: true,
            retry_after_seconds,
            message,
            user_message: None,
            alternatives: Vec::new(),
            rule_id: Some(rule.to_owned()),
        };
        let original = OriginalError {
            source: Source::Proxy,
            text,
            rpc_code: None,
            rpc_data: None,
        };
        let error = StructuredError::new(verdict, attempted_query(answered), None, original);
        self.finish(answered, Map::new(), Vec::new(), error)
    }

    /// Assembles the `CallToolResult`: the upstream's fields kept in their order, the error
    /// first in `content`, canonical in `_meta`, and `structuredContent` only where safe.
    fn finish(
        &self,
        answered: &AnsweredCall,
        mut result: Map<String, Value>,
        mut kept_blocks: Vec<Value>,
        mut error: StructuredError,
    ) -> RewrittenJson {
        error.attempts = answered.attempt;
        self.redact(&mut error);
        // The upstream's other blocks ride in the proxy's `content`, and its other members
        // (`_meta`, members of its own) in the result: masked like the rest.
        kept_blocks.iter_mut().for_each(|b| self.redactor.value(b));
        result.values_mut().for_each(|v| self.redactor.value(v));
        let known_schemaless = answered.tool.as_ref().is_some_and(|t| !t.has_output_schema);
        if error.code == codes::NOT_FOUND
            && known_schemaless
            && self.not_found_is_empty.is_match(&answered.call.name)
        {
            return self.empty_result(answered, error);
        }
        // TS SDK 1.x validates `structuredContent` against the tool's outputSchema even on
        // errors and throws, so the model would never see the error. Only a tool seen in this
        // session's tools/list without a schema is safe: clients may call tools they listed in
        // an earlier session, or never list at all.
        let structured = known_schemaless && answered.protocol.has_structured_content();

        // The members go into the map as they always have, so that the upstream's keep their
        // order; the proxy's own (`content`, `structuredContent`, `_meta`'s error) are
        // placeholders here, written from their JSON text by `write_result`.
        result.insert("content".into(), Value::Null);
        result.insert("isError".into(), Value::Bool(true));
        if structured {
            result.insert("structuredContent".into(), Value::Null);
        }
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            meta.insert(META_KEY.into(), Value::Null);
        }
        if answered.protocol.has_result_type() && !result.contains_key("resultType") {
            result.insert("resultType".into(), Value::from("complete"));
        }
        let mut shown = Vec::with_capacity(error.size_hint());
        error.write_profile(self.profile, &mut shown);
        let result = write_result(&result, &shown, &kept_blocks, structured, &error);
        RewrittenJson { result, error }
    }
}

/// The JSON text of an assembled result: the error as the profile shows it (`shown`) in
/// `content[0]` and, when `structured`, as `structuredContent`; the canonical error in
/// `_meta`; every other member as the map holds it.
fn write_result(
    result: &Map<String, Value>,
    shown: &[u8],
    kept_blocks: &[Value],
    structured: bool,
    error: &StructuredError,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * shown.len() + 256);
    object(&mut out, result, |out, key, value| match key {
        "content" => {
            out.extend_from_slice(br#"[{"type":"text","text":"#);
            json_string_of_json(out, shown);
            out.push(b'}');
            for block in kept_blocks {
                out.push(b',');
                json(out, block);
            }
            out.push(b']');
        }
        "structuredContent" if structured => out.extend_from_slice(shown),
        "_meta" => {
            let Value::Object(meta) = value else {
                unreachable!("finish makes `_meta` an object")
            };
            object(out, meta, |out, key, value| {
                if key == META_KEY {
                    json(out, error);
                } else {
                    json(out, value);
                }
            });
        }
        _ => json(out, value),
    });
    out
}

/// Appends a JSON object with the members of `map`, each value written by `value`.
fn object(
    out: &mut Vec<u8>,
    map: &Map<String, Value>,
    mut value: impl FnMut(&mut Vec<u8>, &str, &Value),
) {
    out.push(b'{');
    for (i, (key, member)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json(out, key);
        out.push(b':');
        value(out, key, member);
    }
    out.push(b'}');
}

/// Appends `bytes`, JSON that serde_json wrote, as a JSON string, byte for byte as
/// serde_json would. Such text holds no control characters (serde_json escapes them), so only
/// quotes and backslashes need a backslash; copying the runs between them is several times
/// faster than serde_json's byte-at-a-time escaper on text this full of quotes.
fn json_string_of_json(out: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.iter().any(|&b| b < 0x20) {
        let text = std::str::from_utf8(bytes).expect("JSON is UTF-8");
        return json(out, text);
    }
    out.reserve(bytes.len() + bytes.len() / 4 + 2);
    out.push(b'"');
    let mut start = 0;
    for i in memchr::memchr2_iter(b'"', b'\\', bytes) {
        out.extend_from_slice(&bytes[start..i]);
        out.push(b'\\');
        // The quote or backslash itself starts the next run.
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends the JSON of `value`.
fn json(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    serde_json::to_writer(out, value).expect("serializing to memory cannot fail");
}

impl Rewriter {
    /// Masks secrets in every text of the error, and trims the attempted query as configured.
    pub fn redact(&self, error: &mut StructuredError) {
        let r = &self.redactor;
        // What the upstream's text shows as secret stays masked in whatever quotes it. Most
        // texts show none: then one scan says so, and the text stays as it is.
        let shows_secrets = r.finds_any(&error.original_error.text);
        let mut known = if shows_secrets {
            r.secrets_in(&error.original_error.text)
        } else {
            Vec::new()
        };
        // And what the call's arguments show: a password one argument names may be another's
        // whole value, and the upstream's text may repeat either.
        if let Some(query) = &error.attempted_query {
            known.extend(r.secrets_in_value(&query.arguments));
        }
        let shows_secrets = shows_secrets || !known.is_empty();
        let text = |s: &mut String| {
            if let std::borrow::Cow::Owned(masked) = r.text_knowing(s, &known) {
                *s = masked;
            }
        };
        // The rules' texts are asked all the same: a template names the tool, and a capture
        // can make a match the whole text does not.
        text(&mut error.message);
        error.user_message.iter_mut().for_each(text);
        error.alternatives.iter_mut().for_each(text);
        if shows_secrets {
            text(&mut error.original_error.text);
        }
        error
            .original_error
            .rpc_data
            .iter_mut()
            .for_each(|v| r.value_knowing(v, &known));
        error
            .partial_results
            .iter_mut()
            .for_each(|v| r.value_knowing(v, &known));
        match r.attempted_query {
            QueryDetail::Full => {
                if let Some(query) = &mut error.attempted_query {
                    shorten(&mut query.arguments, r, &known);
                }
            }
            QueryDetail::Tool => {
                if let Some(query) = &mut error.attempted_query {
                    query.arguments = Value::Null;
                }
            }
            QueryDetail::None => error.attempted_query = None,
        }
    }

    /// A valid empty result in place of a NOT_FOUND failure, for tools configured so (the product's
    /// specification: a genuine no-match is a successful query with no matches). Only for tools known to have
    /// no outputSchema, which an empty result could not satisfy.
    fn empty_result(&self, answered: &AnsweredCall, error: StructuredError) -> RewrittenJson {
        let mut result = Map::new();
        result.insert(
            "content".into(),
            json!([{ "type": "text", "text": "No results found." }]),
        );
        result.insert(
            "_meta".into(),
            json!({ EMPTY_META_KEY: { "reason": error.code, "originalError": error.original_error } }),
        );
        if answered.protocol.has_result_type() {
            result.insert("resultType".into(), Value::from("complete"));
        }
        RewrittenJson {
            result: serde_json::to_vec(&result).expect("a Value always serializes"),
            error,
        }
    }
}

/// The longest string of the arguments `attempted_query` repeats, and the most JSON it repeats
/// of them. The agent has its arguments; repeated they only say which call failed. Repeated in
/// full (three times in the answer), a file's contents could make the answer larger than
/// clients read: the TypeScript SDK closes the connection on a line of 10 MiB.
const QUERY_STRING_BYTES: usize = 256;
const QUERY_BYTES: usize = 8 << 10;

/// Masks the arguments' secrets and cuts their long strings short; arguments still too large
/// are replaced by a note of their size. A long string is masked before it is cut, from a head
/// long enough to hold any secret that begins before the cut: a token cut in half is no
/// longer one the patterns know.
fn shorten(arguments: &mut Value, redactor: &Redactor, known: &[String]) {
    fn strings(v: &mut Value, redactor: &Redactor, known: &[String]) {
        match v {
            Value::String(s) if s.len() > QUERY_STRING_BYTES => {
                // The known ones too: a password another argument holds, cut in half, would no
                // longer be found whole.
                let masked = redactor.text_knowing(head(s, 4 * QUERY_STRING_BYTES), known);
                *s = format!(
                    "{}… [{} bytes in all]",
                    head(&masked, QUERY_STRING_BYTES),
                    s.len()
                );
            }
            Value::Array(items) => items.iter_mut().for_each(|v| strings(v, redactor, known)),
            Value::Object(map) => map.values_mut().for_each(|v| strings(v, redactor, known)),
            _ => {}
        }
    }
    strings(arguments, redactor, known);
    redactor.value_knowing(arguments, known);
    let size = serde_json::to_vec(arguments).map_or(0, |json| json.len());
    if size > QUERY_BYTES {
        *arguments = Value::String(format!("[{size} bytes of arguments, not repeated]"));
    }
}

fn attempted_query(answered: &AnsweredCall) -> Option<AttemptedQuery> {
    #[derive(Deserialize)]
    struct Arguments {
        #[serde(default)]
        arguments: Value,
    }
    let arguments = serde_json::from_str::<Arguments>(answered.call.params.get())
        .map_or(Value::Null, |a| a.arguments);
    Some(AttemptedQuery {
        tool: answered.call.name.clone(),
        arguments,
    })
}

/// The category of the proxy's own canonical error in a result's `_meta`, if it carries one.
fn rewritten_already(raw: &RawValue) -> Option<Category> {
    #[derive(Deserialize)]
    struct Result {
        #[serde(rename = "_meta")]
        meta: HashMap<String, Value>,
    }
    if !raw.get().contains(META_KEY) {
        return None;
    }
    let result = serde_json::from_str::<Result>(raw.get()).ok()?;
    let category = result.meta.get(META_KEY)?.get("errorCategory")?;
    serde_json::from_value(category.clone()).ok()
}

#[cfg(test)]
mod tests;
