//! Transparency as a property: for any sequence of messages (requests, notifications, responses
//! with odd ids, successes, failures, garbage lines), what comes out equals what went in, except
//! the answers to `tools/call` that are failures, which are rewritten (and non-JSON lines from the
//! upstream, which are kept off the protocol stream by default). Through the binary, answers
//! long enough to stream (`stream_answers_over`) pass as they came, failures included.
//!
//! Two levels:
//! - the library: the per-line steps the relay takes, composed from the public core
//!   (`wire::parse`, `Session`, `Rewriter`), many cases;
//! - the real binary with the fixture upstream, few cases (each starts two processes).
//!
//! The oracle is independent of the proxy: it decides from the generated messages alone which
//! answers must be rewritten, using only the protocol's rules (the id is pending as a
//! `tools/call`, and the answer is an `isError: true` result or a non-control JSON-RPC error).

use crate::common;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::LazyLock;

use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::recovery::Policy;
use mcp_errnorm::relay::Inspector;
use mcp_errnorm::rewrite::Rewriter;
use mcp_errnorm::wire::IdKey;
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};

// ----------------------------------------------------------------------------- generators

/// Ids from a small pool, so that answers meet requests, ids collide, and spellings differ
/// (`1` and `1.0`, `"a"` and `"\u0061"` are the same id).
fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("1".to_owned()),
        Just("2".to_owned()),
        Just("1.0".to_owned()),
        Just("0".to_owned()),
        Just("-7".to_owned()),
        Just("\"a\"".to_owned()),
        Just("\"\\u0061\"".to_owned()),
        Just("\"b\"".to_owned()),
        Just("\"\"".to_owned()),
        Just("123456789012345678901234567890".to_owned()),
        Just("null".to_owned()),
        Just("{}".to_owned()),
        Just("true".to_owned()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("ENOENT: no such file or directory, open '/srv/x'".to_owned()),
        Just("connect ECONNREFUSED 127.0.0.1:5432".to_owned()),
        Just("429 Too Many Requests; Retry-After: 3".to_owned()),
        Just("permission denied".to_owned()),
        Just("Error: ok".to_owned()),
        Just("".to_owned()),
        "[ -~]{0,40}",
        "\\PC{0,20}",
    ]
}

/// A JSON string literal for `s`.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn tool() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("read_file".to_owned()),
        Just("fetch".to_owned()),
        Just("echo".to_owned())
    ]
}

/// A line the client sends.
fn client_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (id(), tool(), text()).prop_map(|(id, tool, t)| format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{},"arguments":{{"q":{}}}}}}}"#,
            lit(&tool),
            lit(&t)
        )),
        1 => id().prop_map(|id| format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}},"task":{{"ttl":1000}}}}}}"#
        )),
        1 => id().prop_map(|id| format!(r#"{{"method":"tools/list","id":{id},"jsonrpc":"2.0"}}"#)),
        1 => id().prop_map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)),
        1 => id().prop_map(|id| format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        )),
        1 => Just(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()),
        1 => id().prop_map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)),
        1 => garbage(),
    ]
}

/// A `result` or `error` member for an answer.
fn answer_body() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => text().prop_map(|t| format!(
            r#""result":{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#,
            lit(&t)
        )),
        2 => text().prop_map(|t| format!(
            r#""result":{{"content":[{{"type":"text","text":{}}}]}}"#,
            lit(&t)
        )),
        1 => text().prop_map(|t| format!(
            r#""result":{{"content":[{{"type":"text","text":{}}}],"isError":false}}"#,
            lit(&t)
        )),
        1 => Just(r#""result":{"isError":true,"task":{"taskId":"t1"}}"#.to_owned()),
        1 => Just(r#""result":{"isError":true,"resultType":"input_required","content":[]}"#.to_owned()),
        1 => Just(r#""result":{"isError":true,"content":"bare string"}"#.to_owned()),
        1 => Just(r#""result":{"isError":"true","content":[]}"#.to_owned()),
        1 => Just(r#""result":[1,2]"#.to_owned()),
        2 => (prop_oneof![Just(-32602i64), Just(-32603), Just(-32042), Just(-32050), Just(1)], text())
            .prop_map(|(code, t)| format!(r#""error":{{"code":{code},"message":{}}}"#, lit(&t))),
        1 => Just(r#""error":{"message":5}"#.to_owned()),
    ]
}

/// A line the upstream sends.
fn upstream_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (id(), answer_body(), any::<bool>()).prop_map(|(id, body, id_first)| if id_first {
            format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#)
        } else {
            format!(r#"{{{body},"jsonrpc":"2.0","id":{id}}}"#)
        }),
        1 => id().prop_map(|id| format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"sampling/createMessage","params":{{}}}}"#
        )),
        1 => Just(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#.to_owned()),
        1 => Just(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","inputSchema":{"type":"object"}}]}}"#.to_owned()),
        1 => garbage(),
    ]
}

fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Server listening on stdio".to_owned()),
        Just("{\"id\":1,".to_owned()),
        Just("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]".to_owned()),
        Just("42".to_owned()),
        Just("{}".to_owned()),
        Just("   ".to_owned()),
        "[ -~]{0,30}",
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Client(String),
    Upstream(String),
}

fn steps(max: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            client_line().prop_map(Step::Client),
            upstream_line().prop_map(Step::Upstream)
        ],
        0..max,
    )
}

// ----------------------------------------------------------------------------- the oracle

/// What the protocol says about a line, decided without the proxy's code.
struct Oracle {
    /// Client requests in flight: id key -> is it a `tools/call` whose failure may be rewritten.
    pending: HashMap<IdKey, bool>,
    /// Ids the upstream answered: another answer to one is a duplicate, dropped.
    answered: HashSet<IdKey>,
    /// Ids the client cancelled while they waited: the client ignores their answer, dropped.
    cancelled: HashSet<IdKey>,
    /// Ids the client sent again while in flight: answers owed beyond the first.
    owed: HashMap<IdKey, u32>,
    /// Through the binary, answers this long stream to the client unread (`stream_answers_over`,
    /// with nothing pending that must be read whole): they settle their request unchanged.
    streams_over: Option<usize>,
}

/// What must happen to an upstream line.
#[derive(Debug, PartialEq)]
enum Expect {
    Same,
    Rewritten,
    Dropped,
}

fn key_of(raw: &str) -> Option<IdKey> {
    IdKey::new(&RawValue::from_string(raw.to_owned()).ok()?)
}

impl Oracle {
    fn new(streams_over: Option<usize>) -> Oracle {
        Oracle {
            pending: HashMap::new(),
            answered: HashSet::new(),
            cancelled: HashSet::new(),
            owed: HashMap::new(),
            streams_over,
        }
    }

    fn client(&mut self, line: &str) {
        // The requests of a batch wait for their answers like single ones.
        if let Ok(Value::Array(members)) = serde_json::from_str::<Value>(line) {
            for member in members {
                if member.get("method").is_some_and(Value::is_string) {
                    self.client(&member.to_string());
                }
            }
            return;
        }
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let Some(method) = m.get("method").and_then(Value::as_str) else {
            return;
        };
        match m.get("id") {
            Some(id) if !id.is_null() => {
                let Some(key) = key_of(&id.to_string()) else {
                    return;
                };
                let params = m.get("params");
                let rewritable = method == "tools/call"
                    && params
                        .and_then(|p| p.get("name"))
                        .is_some_and(Value::is_string)
                    && params.and_then(|p| p.get("task")).is_none();
                self.answered.remove(&key);
                self.cancelled.remove(&key);
                if self.pending.insert(key.clone(), rewritable).is_some() {
                    *self.owed.entry(key).or_insert(0) += 1;
                }
            }
            _ => {
                if method == "notifications/cancelled" {
                    let id = m
                        .get("params")
                        .and_then(|p| p.get("requestId"))
                        .map(Value::to_string);
                    if let Some(key) = id.as_deref().and_then(key_of) {
                        if self.pending.remove(&key).is_some() {
                            self.cancelled.insert(key);
                        }
                    }
                }
            }
        }
    }

    fn upstream(&mut self, line: &str) -> Expect {
        let value = match serde_json::from_str::<Value>(line) {
            Ok(v) => v,
            Err(_) => return Expect::Dropped,
        };
        // A batch passes whole, and settles the requests it answers; a bare value is no
        // message, kept from the client like a banner.
        let Value::Object(m) = value else {
            if let Value::Array(members) = &value {
                for member in members.iter().filter(|m| m.is_object()) {
                    self.settle(member);
                }
                return Expect::Same;
            }
            return Expect::Dropped;
        };
        if m.get("method").is_some_and(Value::is_string) {
            return Expect::Same;
        }
        let Some(id) = m.get("id").filter(|id| !id.is_null()) else {
            return Expect::Same;
        };
        let (result, error) = (m.get("result"), m.get("error"));
        if result.is_none() && error.is_none() {
            return Expect::Same;
        }
        let Some(key) = key_of(&id.to_string()) else {
            return Expect::Same;
        };
        let Some(rewritable) = self.pending.remove(&key) else {
            // A long line whose id comes after the cut is on its way to the client before
            // its id is known (as a late answer to a timed-out call is).
            let streamed_blind = self.streams_over.is_some_and(|limit| {
                line.len() > limit && line.find("\"id\"").is_none_or(|at| at > limit)
            });
            if self.cancelled.remove(&key) {
                return if streamed_blind {
                    Expect::Same
                } else {
                    Expect::Dropped
                };
            }
            if let Some(owed) = self.owed.get_mut(&key) {
                *owed -= 1;
                if *owed == 0 {
                    self.owed.remove(&key);
                }
                return Expect::Same;
            }
            return if self.answered.contains(&key) && !streamed_blind {
                Expect::Dropped
            } else {
                Expect::Same
            };
        };
        self.answered.insert(key);
        if !rewritable {
            return Expect::Same;
        }
        if self.streams_over.is_some_and(|limit| line.len() > limit) {
            return Expect::Same;
        }
        let failure = match (result, error) {
            (Some(Value::Object(r)), _) => {
                r.get("isError") == Some(&Value::Bool(true))
                    && !r.contains_key("task")
                    && !matches!(
                        r.get("resultType").and_then(Value::as_str),
                        Some("task" | "input_required")
                    )
            }
            (Some(_), _) => false,
            (None, Some(Value::Object(e))) => {
                let code = e.get("code").and_then(Value::as_i64);
                let message_ok = e.get("message").is_none_or(Value::is_string);
                let code_ok = e.get("code").is_none_or(|c| c.as_i64().is_some());
                message_ok
                    && code_ok
                    && !code.is_some_and(|c| c == -32042 || (-32099..=-32020).contains(&c))
            }
            _ => false,
        };
        if failure {
            Expect::Rewritten
        } else {
            Expect::Same
        }
    }
}

impl Oracle {
    /// An answer inside a batch settles its request, unrewritten (never dropped: the batch
    /// passes whole).
    fn settle(&mut self, member: &Value) {
        if member.get("method").is_some_and(Value::is_string) {
            return;
        }
        let Some(id) = member.get("id").filter(|id| !id.is_null()) else {
            return;
        };
        if member.get("result").is_none() && member.get("error").is_none() {
            return;
        }
        let Some(key) = key_of(&id.to_string()) else {
            return;
        };
        if self.pending.remove(&key).is_some() {
            self.answered.insert(key);
        } else if self.cancelled.remove(&key) {
            // Settled by its cancel already.
        } else if let Some(owed) = self.owed.get_mut(&key) {
            *owed -= 1;
            if *owed == 0 {
                self.owed.remove(&key);
            }
        }
    }
}

/// A rewritten answer: one JSON object, under the client's id, a failed `CallToolResult` with
/// the structured error in `_meta`.
fn check_rewritten(out: &[u8], upstream: &str) -> Result<(), TestCaseError> {
    let v: Value = serde_json::from_slice(out)
        .map_err(|e| TestCaseError::fail(format!("rewritten line is not JSON ({e})")))?;
    let original: Value = serde_json::from_str(upstream).unwrap();
    prop_assert_eq!(
        key_of(&v["id"].to_string()),
        key_of(&original["id"].to_string())
    );
    prop_assert_eq!(&v["result"]["isError"], &json!(true), "{}", v);
    prop_assert!(
        v["result"]["_meta"]["mcp-errnorm/error"].is_object(),
        "{}",
        v
    );
    prop_assert!(out.ends_with(b"\n"));
    Ok(())
}

// ----------------------------------------------------------------------------- library level

/// The default settings without the embedded rules: this is about transparency, not about
/// classification (which `tests/it/real_failures.rs` covers), and a debug build classifies slowly.
fn rewriter() -> Rewriter {
    static REWRITER: LazyLock<Rewriter> = LazyLock::new(|| {
        let flags = Flags {
            no_default_rules: true,
            ..Flags::default()
        };
        Settings::load(&flags).expect("default settings").rewriter()
    });
    REWRITER.clone()
}

/// The relay's per-line logic, as the pumps drive it, without local retries: this is about what
/// passes and what is rewritten, not about recovery (`tests/it/recovery.rs`).
fn inspector() -> Inspector {
    Inspector::new(rewriter(), Policy::without_retries())
}

/// What the upstream receives for a client line (the client, nothing).
fn client_step(inspector: &Inspector, line: &[u8]) -> Vec<u8> {
    let effects = inspector.client_line(line.to_vec());
    assert!(
        effects.to_client.is_empty() && effects.retries.is_empty() && effects.deadline.is_none()
    );
    effects.to_upstream.concat()
}

/// What the client receives for an upstream line (the upstream, nothing).
fn upstream_step(inspector: &Inspector, line: &[u8]) -> Option<Vec<u8>> {
    let mut effects = inspector.upstream_line(line.to_vec());
    assert!(effects.to_upstream.is_empty() && effects.retries.is_empty());
    assert!(effects.to_client.len() <= 1, "one line in, one out at most");
    effects.to_client.pop()
}

fn pending(inspector: &Inspector) -> usize {
    inspector.session.lock().unwrap().pending_len()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn library_output_equals_input_except_rewritten_failures(steps in steps(40)) {
        let inspector = inspector();
        let mut oracle = Oracle::new(None);
        for step in &steps {
            match step {
                Step::Client(line) => {
                    let bytes = format!("{line}\n").into_bytes();
                    oracle.client(line);
                    prop_assert_eq!(client_step(&inspector, &bytes), bytes);
                }
                Step::Upstream(line) => {
                    let bytes = format!("{line}\n").into_bytes();
                    let expect = oracle.upstream(line);
                    let out = upstream_step(&inspector, &bytes);
                    match expect {
                        Expect::Same => prop_assert_eq!(
                            out.as_deref().map(String::from_utf8_lossy),
                            Some(String::from_utf8_lossy(&bytes)),
                            "upstream line {}", line
                        ),
                        Expect::Dropped => prop_assert!(out.is_none(), "not dropped: {}", line),
                        Expect::Rewritten => {
                            let out = out.ok_or_else(|| TestCaseError::fail("dropped a failure"))?;
                            prop_assert_ne!(&out, &bytes, "not rewritten: {}", line);
                            check_rewritten(&out, line)?;
                        }
                    }
                }
            }
        }
        // The table drains: what the oracle thinks is pending, the session has too.
        prop_assert_eq!(pending(&inspector), oracle.pending.len());
    }
}

// ----------------------------------------------------------------------------- the binary

/// One emitted batch: lines the fixture writes in answer to an `emit` call (`{ID}` is the call's
/// own id), so any answer, notification or garbage reaches the proxy from a real process.
fn emitted_line() -> impl Strategy<Value = String> {
    let answer = |body: String, id_first: bool| {
        if id_first {
            format!(r#"{{"jsonrpc":"2.0","id":{{ID}},{body}}}"#)
        } else {
            format!(r#"{{{body},"jsonrpc":"2.0","id":{{ID}}}}"#)
        }
    };
    prop_oneof![
        4 => (answer_body(), any::<bool>()).prop_map(move |(body, id_first)| answer(body, id_first)),
        // Long enough to stream: a failure this long passes as it came.
        1 => (any::<bool>(), any::<bool>()).prop_map(move |(failure, id_first)| {
            let pad = lit(&format!("fetch failed {}", "x".repeat(150_000)));
            let flag = if failure { r#","isError":true"# } else { "" };
            let body = format!(r#""result":{{"content":[{{"type":"text","text":{pad}}}]{flag}}}"#);
            answer(body, id_first)
        }),
        2 => upstream_line(),
    ]
}

fn run_binary(batches: &[Vec<String>]) -> Result<(), TestCaseError> {
    let mut child = common::errnorm()
        .args(["--no-default-rules", "--"])
        .args(common::fixture_command())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).split(b'\n') {
            match line {
                Ok(l) => lines.push(l),
                Err(_) => break,
            }
        }
        lines
    });
    // Ids 1000.. are the emit calls' own; the lines they carry may answer them or anything else.
    // Twice the 64 KiB default: a pipe holds 64 KiB, so no read can bring a line this long
    // from under the threshold to its end, and the proxy always lets it go.
    let mut oracle = Oracle::new(Some(128 << 10));
    let mut expected: Vec<(Expect, String)> = Vec::new();
    for (n, batch) in batches.iter().enumerate() {
        let id = 1000 + n;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": "emit", "arguments": {"lines": batch}}})
        .to_string();
        oracle.client(&request);
        writeln!(stdin, "{request}").unwrap();
        for line in batch {
            let line = line.replace("{ID}", &id.to_string());
            let expect = oracle.upstream(&line);
            expected.push((expect, line));
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let out = reader.join().unwrap();
    prop_assert!(status.success(), "{:?}", status);
    let mut out = out.into_iter();
    for (expect, line) in &expected {
        match expect {
            Expect::Dropped => continue,
            Expect::Same => {
                let got = out.next().unwrap_or_default();
                prop_assert_eq!(String::from_utf8_lossy(&got), line.as_str());
            }
            Expect::Rewritten => {
                let mut got = out.next().unwrap_or_default();
                got.push(b'\n');
                check_rewritten(&got, line)?;
            }
        }
    }
    // Then one proxy answer per emit call the upstream never answered (it exited).
    let rest: Vec<Vec<u8>> = out.collect();
    prop_assert_eq!(
        rest.len(),
        oracle.pending.len(),
        "{:?}",
        rest.iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect::<Vec<_>>()
    );
    for line in rest {
        let v: Value = serde_json::from_slice(&line).unwrap();
        prop_assert_eq!(
            &v["result"]["_meta"]["mcp-errnorm/error"]["ruleId"],
            &json!("builtin:upstream-gone")
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn binary_output_equals_input_except_rewritten_failures(
        batches in prop::collection::vec(prop::collection::vec(emitted_line(), 0..6), 1..8)
    ) {
        run_binary(&batches)?;
    }
}

/// Regression: `"result": null` was read as no result at all (serde maps a present `null` to
/// `None`), so the answer was forwarded without settling its request, and the client got a
/// second answer when the upstream exited.
#[test]
fn an_answer_with_a_null_result_settles_its_request() {
    let inspector = inspector();
    client_step(
        &inspector,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
    );
    let line = br#"{"jsonrpc":"2.0","id":1,"result":null}"#;
    assert_eq!(upstream_step(&inspector, line).as_deref(), Some(&line[..]));
    assert_eq!(
        pending(&inspector),
        0,
        "the answered request is still pending"
    );
}
