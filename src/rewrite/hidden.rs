//! Failures that servers answer as successes (`isError` false or absent), recognised by their
//! shape alone, for servers nobody wrote a `source = "success"` rule for.
//!
//! Two shapes, both narrow on purpose, because a genuine result turned into an error is worse
//! than a failure missed:
//! - a flag: a content block (or the result itself) carrying a non-standard `"error": true`;
//! - a statement: the result is one short text block and nothing else, and that text is only a
//!   failure statement (`Error: ...`, `Database error: ...`, `Security violation: ...`,
//!   `Failed to create issue: ...`, a Python traceback, or a JSON error body such as
//!   `{"ok": false, "error": "channel_not_found"}`).
//!
//! A statement is never read from a result with `structuredContent` or `annotations` (composed
//! on purpose), with several blocks, or from a tool whose name says it hands back content as it
//! is (`read_text_file`, `cat`, `tail_logs`, `get_document`): a file whose text begins with
//! "Error:" is still the file.

use std::sync::LazyLock;

use memchr::memmem;
use regex::Regex;
use serde_json::Value;

use super::plain::ReadResult;

/// The longest result (as JSON) read for a hidden failure without a flag: a failure statement
/// is short, and most results are not, so most successes are never parsed.
const MAX_RESULT_BYTES: usize = 4_096;
/// The longest text that counts as a statement; a traceback may take more.
const MAX_STATEMENT_BYTES: usize = 1_000;

/// Whether a successful result's JSON may hide a failure; cheap, without parsing it: short and
/// with a word a failure statement has (most successes have none, and are never parsed), or
/// flagged.
pub(super) fn may_hide_a_failure(raw: &str) -> bool {
    static FAILURE_WORDS: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r"(?i)error|fail|exception|violation|denied|unable|could not|couldn't|cannot|can't|traceback|forbidden|unauthori|not found|not exist|doesn't exist|not allowed|not permitted",
        )
        .expect("valid")
    });
    if raw.len() > MAX_RESULT_BYTES {
        return has_error_flag(raw);
    }
    // A statement says what it is in its first words: the head of the first text is enough.
    let bytes = raw.as_bytes();
    let head = memmem::find(bytes, b"\"text\"").map_or(&bytes[..0], |at| {
        &bytes[at..bytes.len().min(at + STATEMENT_HEAD_BYTES)]
    });
    FAILURE_WORDS.is_match(head) || has_error_flag(raw)
}

/// How far into a result's first text the cheap look for failure words goes.
const STATEMENT_HEAD_BYTES: usize = 200;

/// Whether the JSON has an `"error": true` member anywhere: one pass over it.
fn has_error_flag(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    memmem::find_iter(bytes, b"\"error\":")
        .any(|at| bytes[at + 8..].trim_ascii_start().starts_with(b"true"))
}

/// Whether a successful result (its JSON, as read, and its tool) hides a failure.
pub(super) fn is_failure(raw: &str, read: &ReadResult, tool: &str) -> bool {
    if has_error_flag(raw) && flagged(raw) {
        return true;
    }
    read.partial.as_ref().is_none_or(|s| mirrors(s, &read.text))
        && read.kept_blocks.is_empty()
        && read.text_blocks == 1
        && raw.len() <= MAX_RESULT_BYTES
        && !annotated(raw)
        && if hands_back_content(tool) {
            is_server_framed_failure(read.text.trim())
        } else {
            is_failure_statement(read.text.trim())
        }
}

/// Whether `structuredContent` only repeats the text: Python servers built on FastMCP wrap a
/// tool's returned string as `{"result": "<the text>"}`, and many return a JSON text together
/// with the same object.
fn mirrors(structured: &Value, text: &str) -> bool {
    let wrapped = match structured {
        Value::Object(map) if map.len() == 1 => match map.values().next() {
            Some(Value::String(s)) => s == text,
            // The content blocks themselves, wrapped.
            Some(Value::Array(blocks)) => {
                let texts: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
                texts.len() == blocks.len() && texts.join("\n") == text
            }
            // The JSON the text holds, parsed.
            Some(value) => serde_json::from_str::<Value>(text).is_ok_and(|p| &p == value),
            None => false,
        },
        _ => false,
    };
    wrapped || serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == structured)
}

/// Whether a content block carries annotations (audience, priority): composed on purpose,
/// like server-everything's demo message "Error: Operation failed".
fn annotated(raw: &str) -> bool {
    if memmem::find(raw.as_bytes(), b"\"annotations\"").is_none() {
        return false;
    }
    let Ok(result) = serde_json::from_str::<Value>(raw) else {
        return true;
    };
    result["content"].as_array().is_some_and(|blocks| {
        blocks
            .iter()
            .any(|b| b.get("annotations").is_some_and(|a| !a.is_null()))
    })
}

/// Whether the result, or one of its content blocks, says `"error": true`.
fn flagged(raw: &str) -> bool {
    let Ok(Value::Object(result)) = serde_json::from_str::<Value>(raw) else {
        return false;
    };
    let flag = |v: &Value| v.get("error") == Some(&Value::Bool(true));
    flag(&Value::Object(result.clone()))
        || result
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(flag))
}

/// Whether a tool's name says it returns content as it found it: its text may say anything.
fn hands_back_content(tool: &str) -> bool {
    // Whatever the words around them.
    const ECHOING: [&str; 17] = [
        "cat", "echo", "tail", "head", "print", "log", "logs", "blob", "raw", "download",
        "snippet", // A command's output is whatever the command printed.
        "shell", "bash", "terminal", "command", "script", "eval",
    ];
    // Content, when a tool reads it: `read_file` and `get_file_contents` hand back what the
    // file says; `write_file` and `delete_file_content` do not.
    const CONTENT: [&str; 7] = [
        "file",
        "files",
        "content",
        "contents",
        "document",
        "documents",
        "source",
    ];
    const READING: [&str; 8] = [
        "read", "get", "view", "show", "open", "load", "fetch", "cat",
    ];
    // A tool named only by its verb returns the thing itself: `get` on a key-value store
    // returns the stored value, whatever it says.
    const BARE_VERBS: [&str; 8] = [
        "get", "read", "load", "show", "view", "value", "lookup", "fetch",
    ];
    let words = words(tool);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    has(&ECHOING)
        || (has(&CONTENT) && has(&READING))
        || (words.len() == 1 && BARE_VERBS.contains(&words[0].as_str()))
}

/// A failure in the server's own words, which no content it hands back begins with: "Error
/// retrieving key x: ...", "Command execution failed ...". Read even from tools that hand back
/// content, where a bare "Error: ..." may be what a file or a value says.
fn is_server_framed_failure(text: &str) -> bool {
    static FRAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:Error\ [a-z]+ing\ [^\n:]{1,60}:\s*\S|Command\ (?:execution\ )?failed\b|Command\ exited\ with\ (?:code|status)\ -?[1-9])",
        )
        .expect("valid")
    });
    text.len() <= MAX_STATEMENT_BYTES && FRAMED.is_match(text)
}

/// A tool name's words: `read_text_file`, `readTextFile` and `read-text-file` all give
/// `read`, `text`, `file`.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            previous_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a whole text is a failure statement and nothing else.
fn is_failure_statement(text: &str) -> bool {
    static STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?x)^(?:
                \[(?:ERROR|FATAL)\]\s | (?:ERROR|FATAL)\s*[:\-]
              | (?:[A-Z][A-Za-z0-9]*\s){0,3}?(?i:error|exception|failure|violation)\s*[:!\-–]\s*\S
              | Error\ [a-z][^\n:]{0,60}:\s*\S
              | [A-Z][a-z]+\s(?:[a-z]+\s){0,2}(?:failed|failure)\b
              | [A-Z][a-z]+\s(?:[a-z]+\s)?(?:'[^'\n]{1,80}'|"[^"\n]{1,80}"|[^\s'"]+)\s(?:does\ not\ exist|not\ found)\b
              | [A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)\b
              | (?i:failed\ to|unable\ to|could\ not|couldn't|cannot|can't)\ [^\n]{1,80}?:\s+\S
              | (?i:access\ denied|permission\ denied|not\ authorized|unauthorized|forbidden)\b
              | Traceback\ \(most\ recent\ call\ last\):
            )"#,
        )
        .expect("valid")
    });
    if text.starts_with("Traceback (most recent call last):") {
        return text.len() <= 4 * MAX_STATEMENT_BYTES;
    }
    if text.len() > MAX_STATEMENT_BYTES {
        return false;
    }
    if text.starts_with('{') {
        return is_error_body(text);
    }
    STATEMENT.is_match(text)
}

/// The keys an error body has, and nothing else.
const ERROR_KEYS: [&str; 17] = [
    "reason",
    "error",
    "errors",
    "message",
    "code",
    "status",
    "statusCode",
    "details",
    "detail",
    "error_code",
    "error_message",
    "errorMessage",
    "type",
    "name",
    "request_id",
    "requestId",
    "ok",
];

/// A JSON object that is an error body and nothing else: `{"ok": false, "error": "..."}`,
/// `{"success": false, "message": "..."}`, `{"error": {"code": 404, "message": "..."}}`.
fn is_error_body(text: &str) -> bool {
    let Ok(body) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    is_error_object(&body, 1)
}

/// [`is_error_body`] on a parsed value; `nesting` is how many single-key wrappers it may look
/// through (`{"<path>": {"result": "error", "reason": ...}}`, one result per item asked for).
fn is_error_object(body: &Value, nesting: usize) -> bool {
    let Value::Object(body) = body else {
        return false;
    };
    if nesting > 0 && body.len() == 1 {
        if let Some(inner @ Value::Object(_)) = body.values().next() {
            if is_error_object(inner, nesting - 1) {
                return true;
            }
        }
    }
    let says_no = |key: &str| body.get(key) == Some(&Value::Bool(false));
    let says_error = |key: &str| body.get(key).and_then(Value::as_str) == Some("error");
    let has_error = ["error", "errors", "error_message", "errorMessage", "reason"]
        .iter()
        .filter_map(|k| body.get(*k))
        .any(|v| match v {
            // "error": "none" is a field of the data, not a failure.
            Value::String(s) => !matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "" | "none" | "null" | "nil" | "false" | "ok" | "no" | "n/a" | "0"
            ),
            Value::Object(o) => !o.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => false,
        });
    let only_error_keys = body
        .keys()
        .all(|k| ERROR_KEYS.contains(&k.as_str()) || k == "success");
    (says_no("ok") || says_no("success") || says_error("result") || says_error("status"))
        && (has_error || body.contains_key("message"))
        || has_error && only_error_keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_are_failures() {
        for text in [
            "Error: no such table: orders",
            "Database error: database is locked",
            "Security violation: path outside allowed directories",
            "Failed to create issue: 404 Not Found",
            "Could not connect to Redis: Connection refused",
            "ValueError: invalid literal for int() with base 10: 'x'",
            "[ERROR] upstream timed out",
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'id'",
            r#"{"ok":false,"error":"channel_not_found"}"#,
            r#"{"error":{"code":404,"message":"Not Found"}}"#,
            r#"{"success":false,"message":"Invalid API key"}"#,
            "Permission denied: /etc/shadow",
            "Error executing query: Table 'shop.invoices' doesn't exist",
            "Command execution failed (duration: 0:00:01)\n\nError:\nCommand timed out",
            "Key does-not-exist does not exist",
            "Field 'missing' not found in hash 'user:1'.",
            r#"{"result": "error", "reason": "Content hash mismatch"}"#,
            r#"{"/srv/a.txt": {"result": "error", "reason": "Content hash mismatch"}}"#,
        ] {
            assert!(is_failure_statement(text), "{text}");
        }
    }

    #[test]
    fn results_that_only_mention_failure() {
        for text in [
            "No errors found.",
            "0 rows",
            "[]",
            "Found 3 issues: 'Error: x' in a.py, 'Error: y' in b.py",
            "The error rate dropped to 0.1% this week.",
            "Weather in Paris: 14°C, light rain",
            r#"{"error":null,"data":[1,2]}"#,
            r#"{"errors":[],"items":[]}"#,
            r#"{"ok":true,"error":"none"}"#,
            r#"{"status": "failed_login", "error": "none"}"#,
            "Results not found",
            "No results found for 'x'",
            "Errors: 0, warnings: 2",
            "How to fix \"Error: EACCES\" when installing packages",
        ] {
            assert!(!is_failure_statement(text), "{text}");
        }
        let long = format!("Error: {}", "x".repeat(2 * MAX_STATEMENT_BYTES));
        assert!(!is_failure_statement(&long));
    }

    #[test]
    fn most_successes_are_not_even_parsed() {
        assert!(!may_hide_a_failure(
            r#"{"content":[{"type":"text","text":"ok"}]}"#
        ));
        assert!(!may_hide_a_failure(
            r#"{"content":[{"type":"text","text":"Weather: 14C"}]}"#
        ));
        assert!(may_hide_a_failure(
            r#"{"content":[{"type":"text","text":"Error: x"}]}"#
        ));
        assert!(may_hide_a_failure(
            r#"{"content":[{"type":"text","text":"Key k does not exist"}]}"#
        ));
        let long = format!(
            r#"{{"content":[{{"type":"text","text":"Error: {}"}}]}}"#,
            "x".repeat(5000)
        );
        assert!(!may_hide_a_failure(&long));
        let flagged = format!(
            r#"{{"content":[{{"type":"text","text":"{}","error":true}}]}}"#,
            "x".repeat(5000)
        );
        assert!(may_hide_a_failure(&flagged));
    }

    #[test]
    fn tools_that_hand_back_content() {
        for tool in [
            "read_text_file",
            "readFile",
            "cat",
            "tail-logs",
            "get_document",
            "download",
        ] {
            assert!(hands_back_content(tool), "{tool}");
        }
        for tool in [
            "read_query",
            "execute_sql",
            "search",
            "get_key",
            "get_weather",
            "run_query",
            "write_file",
            "delete_file_content",
        ] {
            assert!(!hands_back_content(tool), "{tool}");
        }
        assert_eq!(words("getHTTPStatus_v2"), ["get", "httpstatus", "v2"]);
        // From such tools, only the server's own framing counts.
        assert!(is_server_framed_failure(
            "Error retrieving key greeting: NOAUTH"
        ));
        assert!(is_server_framed_failure(
            "Command execution failed (duration: 1s)"
        ));
        assert!(!is_server_framed_failure(
            "Error: disk full on node-3 (resolved)"
        ));
        assert!(!is_server_framed_failure(
            "Traceback (most recent call last):"
        ));
    }
}
