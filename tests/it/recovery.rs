//! Recovery: bounded local retries, timeouts, circuit breakers, surviving a crash, failures
//! hidden as successes, and the statistics, against the fixture upstream's controllable faults.

use crate::common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{canonical, Options, Running};
use serde_json::{json, Value};

/// A proxy with a config of `extra` plus fast retries, initialized and with tools listed (the
/// annotations decide what may be retried).
fn proxy(extra: &str) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let text = format!("{extra}\n[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n");
    let text = if extra.contains("[retry]") {
        extra.to_owned()
    } else {
        text
    };
    std::fs::write(&config, text).unwrap();
    let config = config.display().to_string();
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        ..Options::default()
    });
    p.initialize();
    (p, dir)
}

fn count(p: &mut Running, key: &str) -> u64 {
    let answer = p.call(json!(format!("count-{key}")), "count", json!({"key": key}));
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_transient_failure_is_recovered_by_retry_and_the_client_sees_one_answer() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(json!(1), "flaky", json!({"key": "k", "fails": 2}));
    assert_eq!(answer["id"], 1);
    assert!(answer["result"].get("isError").is_none(), "{answer}");
    assert_eq!(text(&answer), "ok after 3 calls");
    p.assert_quiet(Duration::from_millis(100));
    assert_eq!(count(&mut p, "k"), 3, "one call and two retries upstream");
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(stderr.contains("retried=2 recovered=1"), "{stderr}");
}

/// A retry's answer comes under the proxy's id, so the proxy reads it whole (to answer the
/// client's id) even when it is far longer than `stream_answers_over`.
#[test]
fn a_long_answer_to_a_retry_is_read_whole_and_answers_the_client() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(
        json!(1),
        "flaky",
        json!({"key": "k", "fails": 1, "pad": 300_000}),
    );
    assert_eq!(answer["id"], 1);
    assert!(
        answer["result"].get("isError").is_none(),
        "{}",
        &answer.to_string()[..200]
    );
    assert_eq!(
        text(&answer),
        format!("ok after 2 calls{}", "z".repeat(300_000))
    );
    p.assert_quiet(Duration::from_millis(100));
}

#[test]
fn exhausted_retries_report_attempts_and_the_last_text() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(
        json!("x"),
        "flaky",
        json!({"key": "k", "fails": 9, "text": "503 Service Unavailable"}),
    );
    let error = canonical(&answer);
    assert_eq!(
        error["attempts"], 3,
        "the first call and 2 retries: {answer}"
    );
    assert_eq!(error["errorCategory"], "transient");
    assert_eq!(error["originalError"]["text"], "503 Service Unavailable");
    assert_eq!(
        error["attempted_query"]["arguments"],
        json!({"key": "k", "fails": 9, "text": "503 Service Unavailable"})
    );
    assert_eq!(count(&mut p, "k"), 3);
}

#[test]
fn destructive_unannotated_and_permanent_failures_are_not_retried() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(
        json!(1),
        "flaky_destructive",
        json!({"key": "d", "fails": 1}),
    );
    assert_eq!(canonical(&answer)["attempts"], 1);
    assert_eq!(
        count(&mut p, "d"),
        1,
        "destructive: never retried by default"
    );

    let answer = p.call(json!(2), "flaky_plain", json!({"key": "u", "fails": 1}));
    assert_eq!(canonical(&answer)["isRetryable"], true);
    assert_eq!(count(&mut p, "u"), 1, "not annotated safe: not retried");

    for (key, text) in [
        ("v", "ENOENT: no such file or directory"),
        ("p", "403 Forbidden"),
        ("b", "insufficient funds"),
    ] {
        let answer = p.call(
            json!(key),
            "flaky",
            json!({"key": key, "fails": 1, "text": text}),
        );
        assert_eq!(canonical(&answer)["isRetryable"], false, "{text}");
        assert_eq!(count(&mut p, key), 1, "{text}: never retried");
    }
}

#[test]
fn the_config_can_allow_retries_of_named_and_destructive_tools() {
    let (mut p, _dir) = proxy(
        "[retry]\nbase_delay_ms = 1\nmax_delay_ms = 5\ntools = [\"flaky_plain\"]\ndestructive_tools = [\"flaky_destructive\"]\n",
    );
    assert_eq!(
        text(&p.call(json!(1), "flaky_plain", json!({"key": "u", "fails": 1}))),
        "ok after 2 calls"
    );
    assert_eq!(
        text(&p.call(
            json!(2),
            "flaky_destructive",
            json!({"key": "d", "fails": 1})
        )),
        "ok after 2 calls"
    );
}

#[test]
fn a_retry_after_longer_than_the_cap_goes_to_the_agent() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(
        json!(1),
        "flaky",
        json!({"key": "r", "fails": 1, "text": "429 Too Many Requests; Retry-After: 120"}),
    );
    let error = canonical(&answer);
    assert_eq!(error["retryAfterSeconds"], 120);
    assert_eq!(error["attempts"], 1);
    assert_eq!(count(&mut p, "r"), 1);
}

#[test]
fn progress_keeps_flowing_through_retries() {
    let (mut p, _dir) = proxy("");
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flaky","arguments":{"key":"g","fails":1},"_meta":{"progressToken":"tok"}}}"#);
    let first = p.recv();
    let second = p.recv();
    let answer = p.recv();
    for progress in [&first, &second] {
        assert_eq!(progress["method"], "notifications/progress");
        assert_eq!(progress["params"]["progressToken"], "tok");
    }
    // The retry's server counts from the start again; MCP: progress MUST increase.
    assert_eq!(first["params"]["progress"], 1);
    assert_eq!(first["params"]["total"], 2);
    assert_eq!(second["params"]["progress"], 2.0);
    assert_eq!(second["params"]["total"], 3.0);
    assert_eq!(answer["id"], 1);
    assert_eq!(text(&answer), "ok after 2 calls");
}

#[test]
fn a_cancelled_call_is_not_retried_and_the_retry_is_cancelled_upstream() {
    let (mut p, _dir) = proxy("[retry]\nbase_delay_ms = 400\nmax_delay_ms = 400\n");
    // Backoff of at least a second, whatever the jitter: Retry-After: 1.
    p.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"flaky","arguments":{"key":"c","fails":99,"text":"503 Service Unavailable, Retry-After: 1"}}}"#);
    // Cancel once the server has the first attempt: its failure may still be on its way to the
    // proxy, or in the backoff; no retry may follow either way, and no answer.
    let mut others = Vec::new();
    while count_among(&mut p, "c", &mut others) == 0 {
        std::thread::sleep(Duration::from_millis(20));
    }
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        count_among(&mut p, "c", &mut others),
        1,
        "no retry after the cancellation"
    );
    p.assert_quiet(Duration::from_millis(100));
    assert!(others.is_empty(), "answers after the cancel: {others:?}");
    let recorded = String::from_utf8(p.recorded()).unwrap();
    assert!(
        recorded.contains(r#""requestId":7,"reason":"user""#),
        "the client's cancellation is passed on"
    );
}

/// [`count`], keeping any answer to another request that comes in between in `others`.
fn count_among(p: &mut Running, key: &str, others: &mut Vec<Value>) -> u64 {
    let id = format!("count-{key}");
    p.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "count", "arguments": {"key": key}}}));
    loop {
        let answer = p.recv();
        if answer["id"] == id.as_str() {
            return text(&answer).parse().unwrap();
        }
        others.push(answer);
    }
}

#[test]
fn a_time_limit_that_ends_a_retry_in_its_backoff_cancels_nothing_upstream() {
    let (mut p, _dir) = proxy(
        "[timeouts]\ndefault_seconds = 0.3\n[retry]\nbase_delay_ms = 400\nmax_delay_ms = 400\n",
    );
    // The first attempt fails at once; its retry waits out a backoff longer than the limit.
    let answer = p.call(
        json!(8),
        "flaky",
        json!({"key": "t", "fails": 99, "text": "503 Service Unavailable, Retry-After: 1"}),
    );
    assert_eq!(canonical(&answer)["errorCode"], "TIMEOUT", "{answer}");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(count(&mut p, "t"), 1, "the retry is never sent");
    let recorded = String::from_utf8(p.recorded()).unwrap();
    assert!(
        !recorded.contains("notifications/cancelled"),
        "a cancel for a request the server never saw: {recorded}"
    );
}

#[test]
fn a_slow_call_times_out_is_cancelled_upstream_and_its_late_answer_dropped() {
    let (mut p, _dir) = proxy("[timeouts]\ndefault_seconds = 0.3\n");
    let started = Instant::now();
    let answer = p.call(json!("slow"), "sleep", json!({"seconds": 1.0}));
    assert!(
        started.elapsed() < Duration::from_millis(950),
        "answered before the upstream"
    );
    let error = canonical(&answer);
    assert_eq!(error["errorCode"], "TIMEOUT");
    assert_eq!(error["isRetryable"], true);
    assert_eq!(error["ruleId"], "builtin:timeout");
    // The upstream's own answer, 'slept', arrives later and must not reach the client.
    p.assert_quiet(Duration::from_millis(1200));
    let recorded = String::from_utf8(p.recorded()).unwrap();
    assert!(
        recorded.contains(
            r#""method":"notifications/cancelled","params":{"requestId":"slow","reason":"timeout"}"#
        ),
        "{recorded}"
    );
    // The id may be used again.
    assert_eq!(text(&p.call(json!("slow"), "echo", json!({}))), "{}");
}

#[test]
fn a_breaker_opens_after_repeated_transient_failures_and_closes_after_a_good_trial() {
    let (mut p, _dir) = proxy("[breaker]\nfailures = 2\ncooldown_seconds = 0.5\n");
    let call = |p: &mut Running, id: u64| {
        p.call(json!(id), "flaky_plain", json!({"key": "b", "fails": 3}))
    };
    assert_eq!(canonical(&call(&mut p, 1))["ruleId"], "fetch-failed");
    assert_eq!(canonical(&call(&mut p, 2))["ruleId"], "fetch-failed");
    let refused = call(&mut p, 3);
    assert_eq!(canonical(&refused)["ruleId"], "builtin:circuit-open");
    assert_eq!(canonical(&refused)["retryAfterSeconds"], 1);
    assert_eq!(
        count(&mut p, "b"),
        2,
        "refused calls never reach the upstream"
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        canonical(&call(&mut p, 4))["ruleId"],
        "fetch-failed",
        "the trial fails"
    );
    assert_eq!(
        canonical(&call(&mut p, 5))["ruleId"],
        "builtin:circuit-open"
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        text(&call(&mut p, 6)),
        "ok after 4 calls",
        "a good trial closes it"
    );
    assert_eq!(text(&call(&mut p, 7)), "ok after 5 calls");
}

#[test]
fn a_crash_is_survived_with_the_session_restored() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy("[restart]\nattempts = 2\nbackoff_ms = 50\n");
    p.send(r#"{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"hold","arguments":{"text":"x"}}}"#);
    let crashed = p.call(json!(1), "crash_once", json!({"marker": marker}));
    let held = p.recv();
    let mut ids = [crashed["id"].clone(), held["id"].clone()];
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(ids, [json!("held"), json!(1)]);
    for answer in [&crashed, &held] {
        let error = canonical(answer);
        assert_eq!(error["errorCategory"], "transient");
        assert_eq!(error["isRetryable"], true);
        assert!(error["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"));
    }
    // The session goes on, on a new upstream, without the client knowing.
    assert_eq!(
        text(&p.call(json!(2), "crash_once", json!({"marker": marker}))),
        "survived"
    );
    assert_eq!(
        text(&p.call(json!(3), "echo", json!({"a": 1}))),
        r#"{"a":1}"#
    );
    let recorded = String::from_utf8(p.recorded()).unwrap();
    let replay = recorded
        .lines()
        .position(|l| l.contains("mcp-errnorm/replay/"))
        .expect("initialize replayed");
    let lines: Vec<&str> = recorded.lines().collect();
    assert!(lines[replay].contains(r#""method":"initialize""#));
    assert!(
        lines[replay].contains(r#""protocolVersion":"2025-11-25""#),
        "the client's own params"
    );
    assert_eq!(
        lines[replay + 1],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    p.close_stdin();
    assert!(p.wait().success());
}

#[test]
fn without_a_restart_policy_a_crash_ends_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy("");
    p.call(json!(1), "crash_once", json!({"marker": marker, "code": 4}));
    assert_eq!(p.wait().code(), Some(4));
}

#[test]
fn a_failure_hidden_as_a_success_is_turned_into_a_structured_error_by_a_success_rule() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"emit-db-error\"\nsource = \"success\"\ntools = [\"emit\"]\n\
         match = '^Database error: '\ncategory = \"transient\"\n",
    )
    .unwrap();
    let mut p = Running::proxy(&["--rules", rules.to_str().unwrap()]);
    let emit = |p: &mut Running, id: u64, text: &str| {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{{ID}},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
        );
        p.call(json!(id), "emit", json!({"lines": [line]}))
    };
    let hidden = emit(&mut p, 1, "Database error: database is locked");
    assert_eq!(hidden["result"]["isError"], true);
    assert_eq!(canonical(&hidden)["ruleId"], "emit-db-error");
    assert_eq!(canonical(&hidden)["originalError"]["source"], "success");
    let genuine = emit(&mut p, 2, "3 rows");
    assert!(genuine["result"].get("isError").is_none());
    let empty = emit(&mut p, 3, "");
    assert!(empty["result"].get("isError").is_none());
}

#[test]
fn not_found_can_reach_the_agent_as_a_valid_empty_result() {
    let (mut p, _dir) = proxy("not_found_is_empty = [\"fail\"]\n");
    let answer = p.call(
        json!(1),
        "fail",
        json!({"text": "ENOENT: no such file or directory"}),
    );
    assert!(answer["result"].get("isError").is_none(), "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["mcp-errnorm/empty"]["reason"],
        "NOT_FOUND"
    );
    let denied = p.call(json!(2), "fail", json!({"text": "permission denied"}));
    assert_eq!(
        denied["result"]["isError"], true,
        "an access failure is never an empty result"
    );
}

#[test]
fn sigusr1_logs_the_statistics() {
    let (mut p, _dir) = proxy("");
    p.call(
        json!(1),
        "fail",
        json!({"text": "ENOENT: no such file or directory"}),
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(p.child.id() as i32, libc::SIGUSR1) };
    std::thread::sleep(Duration::from_millis(300));
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("calls=")).collect();
    assert_eq!(lines.len(), 2, "one on SIGUSR1, one on exit: {stderr}");
    assert!(
        lines[0].contains("calls=1 transient=0 validation=1"),
        "{}",
        lines[0]
    );
}

#[test]
fn requests_sent_while_the_upstream_dies_are_answered_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy("[restart]\nattempts = 2\nbackoff_ms = 50\n");
    p.send(
        &json!({"jsonrpc": "2.0", "id": "crash", "method": "tools/call",
                   "params": {"name": "crash_once", "arguments": {"marker": marker}}})
        .to_string(),
    );
    let burst = 300;
    for id in 0..burst {
        p.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"n": id}}})
            .to_string(),
        );
    }
    let mut seen = std::collections::HashMap::new();
    while seen.len() < burst + 1 {
        let answer = p.recv();
        *seen.entry(answer["id"].to_string()).or_insert(0) += 1;
    }
    p.assert_quiet(Duration::from_millis(800));
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "answered twice: {twice:?}");
    assert_eq!(
        text(&p.call(json!("after"), "echo", json!({}))),
        "{}",
        "the session goes on"
    );
}

#[test]
fn task_calls_are_never_answered_with_a_call_tool_result_by_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy(
        "[breaker]\nfailures = 1\ncooldown_seconds = 30\n[timeouts]\ndefault_seconds = 0.2\n",
    );
    assert_eq!(
        canonical(&p.call(json!(1), "flaky_plain", json!({"key": "t", "fails": 5})))["ruleId"],
        "fetch-failed"
    );
    // The breaker is open for flaky_plain, but a task call still goes to the upstream.
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flaky_plain","arguments":{"key":"t","fails":5},"task":{"ttl":1000}}}"#);
    let answer = p.recv();
    assert_eq!(answer["id"], 2);
    assert!(
        answer["result"]["_meta"].is_null(),
        "the upstream's own answer, untouched: {answer}"
    );
    // No timeout for a task call, and when the upstream dies it gets a JSON-RPC error.
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hold","arguments":{"text":"x"},"task":{"ttl":1000}}}"#);
    p.assert_quiet(Duration::from_millis(500));
    p.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "crash_once", "arguments": {"marker": marker}}})
        .to_string(),
    );
    let mut answers = [p.recv(), p.recv()];
    answers.sort_by_key(|a| a["id"].to_string());
    assert_eq!(answers[0]["id"], 3);
    assert_eq!(answers[0]["error"]["code"], -32603, "{}", answers[0]);
    assert_eq!(canonical(&answers[1])["ruleId"], "builtin:upstream-gone");
}

#[test]
fn a_timeout_is_answered_even_when_the_upstream_stops_reading() {
    let (mut p, _dir) = proxy("[timeouts]\ndefault_seconds = 0.5\n");
    let started = Instant::now();
    // The fixture sleeps inside its read loop: nothing it is sent is read meanwhile.
    p.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"seconds":6}}}"#);
    // Enough to fill the pipe to the upstream (64 KiB) and block the proxy's write to it, not
    // so much that this test's own writes block (the proxy reads up to 64 KiB ahead, and the
    // pipe to it holds another 64 KiB).
    // Written from a thread: should the pipes hold less than that, it is the writer that
    // waits for the upstream, not the check of the time the TIMEOUT took.
    let padding = "p".repeat(1024);
    let mut stdin = p.take_stdin();
    std::thread::spawn(move || {
        for _ in 0..100 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{padding}"}}}}"#
            );
            if writeln!(stdin, "{line}").is_err() {
                return;
            }
        }
    });
    expect_timeout(&mut p, "slow", started);
}

/// The next answer is `id`'s TIMEOUT, in good time.
fn expect_timeout(p: &mut Running, id: &str, started: Instant) {
    let answer = p.recv();
    assert_eq!(answer["id"], id);
    assert_eq!(canonical(&answer)["errorCode"], "TIMEOUT");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "answered after {:?}",
        started.elapsed()
    );
}

#[test]
fn a_call_whose_request_cannot_be_written_still_times_out() {
    // Only `echo` has a limit: its deadline is the only one the proxy watches.
    let (mut p, _dir) = proxy("[[timeouts.tool]]\ntools = [\"echo\"]\nseconds = 0.5\n");
    let started = Instant::now();
    // The fixture stops reading; the request after it is larger than the pipe to the upstream,
    // so the proxy's write of it blocks until then.
    p.send(r#"{"jsonrpc":"2.0","id":"nap","method":"tools/call","params":{"name":"sleep","arguments":{"seconds":6}}}"#);
    // Written from a thread, as above: this one does block until the upstream reads again.
    let payload = "p".repeat(300_000);
    let mut stdin = p.take_stdin();
    std::thread::spawn(move || {
        let _ = writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"echo","arguments":{{"p":"{payload}"}}}}}}"#
        );
    });
    expect_timeout(&mut p, "big", started);
}

#[test]
fn a_late_answer_too_long_to_read_is_dropped_after_the_timeout() {
    let (mut p, _dir) =
        proxy("max_line_bytes = 4000\n[[timeouts.tool]]\ntools = [\"hold\"]\nseconds = 0.3\n");
    // 2 KB sent; the answer quotes it back as \u00e9 escapes, 6 KB: streamed, unread.
    let text = "é".repeat(1000);
    p.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{{"name":"hold","arguments":{{"text":"{text}"}}}}}}"#
    ));
    let timeout = p.recv();
    assert_eq!(timeout["id"], "h");
    assert_eq!(canonical(&timeout)["errorCode"], "TIMEOUT");
    // `release` makes the upstream answer "h" now, then itself: only its own answer comes.
    let released = p.call(json!("r"), "release", json!({}));
    assert_eq!(released["id"], "r", "{released}");
}

#[test]
fn an_answer_streaming_past_the_deadline_is_the_only_answer() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[timeouts]\ndefault_seconds = 2.0\n").unwrap();
    let config = config.display().to_string();
    // A client that does not read for a while: the answer starts streaming before the
    // deadline, and cannot finish before it. (Two seconds for the upstream to start: on a
    // loaded machine one was not always enough, and the call then rightly timed out.)
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        read_after: Duration::from_millis(5000),
        ..Options::default()
    });
    p.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{"size":5000000,"error":false}}}"#);
    let first = p.recv_raw();
    assert!(first.len() > 5_000_000, "the success, whole");
    let answer: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(answer["id"], 7);
    assert_ne!(answer["result"]["isError"], true, "the success");
    // No TIMEOUT for the call it answered.
    p.assert_quiet(Duration::from_secs(1));
}

#[test]
fn an_oversized_line_during_a_restart_does_not_stop_the_reading() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy("max_line_bytes = 2000\n[restart]\nattempts = 1\nbackoff_ms = 800\n");
    let crashed = p.call(json!(1), "crash_once", json!({"marker": marker}));
    assert_eq!(canonical(&crashed)["ruleId"], "builtin:upstream-gone");
    // During the backoff: a line too large to inspect, then an ordinary call.
    let big = "z".repeat(300_000);
    p.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{big}"}}}}"#
    ));
    assert_eq!(text(&p.call(json!(2), "echo", json!({}))), "{}");
    p.close_stdin();
    assert!(p.wait().success());
}

/// Regression: an upstream that exits because the client closed stdin was restarted when its
/// exit was noticed before the client's EOF.
#[test]
fn an_upstream_that_exits_after_the_client_left_is_not_restarted() {
    for _ in 0..5 {
        let (mut p, _cfg) = proxy("[restart]\nattempts = 2\nbackoff_ms = 10\n");
        p.call(json!(1), "echo", json!({}));
        p.close_stdin();
        assert!(p.wait().success());
        let stderr = p.stderr();
        assert!(!stderr.contains("restarting"), "{stderr}");
    }
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_client_writing_during_a_restart_is_slowed_down_not_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (mut p, _cfg) = proxy("[restart]\nattempts = 1\nbackoff_ms = 2500\n");
    assert_eq!(text(&p.call(json!(0), "echo", json!({}))), "{}");
    let pid = p.child.id();
    let before = rss_kb(pid);
    let crashed = p.call(json!(1), "crash_once", json!({"marker": marker}));
    assert_eq!(canonical(&crashed)["ruleId"], "builtin:upstream-gone");
    // While the proxy waits to restart the upstream, the client writes 16 MiB.
    let padding = "p".repeat(64 << 10);
    let writer = std::thread::spawn(move || {
        for _ in 0..256 {
            p.send(&format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{padding}"}}}}"#
            ));
        }
        p
    });
    std::thread::sleep(Duration::from_millis(1500));
    let grown = rss_kb(pid).saturating_sub(before);
    assert!(
        grown < 10 << 10,
        "the proxy held {grown} KiB for the restarting upstream"
    );
    // Once the upstream is back, everything flows again and the session goes on.
    let mut p = writer.join().unwrap();
    assert_eq!(
        text(&p.call(json!(2), "crash_once", json!({"marker": marker}))),
        "survived"
    );
}

#[test]
fn a_retried_call_keeps_its_deadline_watched() {
    use mcp_errnorm::config::{Flags, Settings};
    use mcp_errnorm::recovery::{BreakerConfig, Policy, RetryConfig, TimeoutConfig};
    use mcp_errnorm::relay::Inspector;

    let retry = RetryConfig {
        tools: vec!["fetch".into()],
        ..RetryConfig::default()
    };
    let timeouts = TimeoutConfig {
        default_seconds: 30.0,
        ..TimeoutConfig::default()
    };
    let policy = Policy::new(retry, timeouts, BreakerConfig::default()).unwrap();
    let rewriter = Settings::load(&Flags::default()).unwrap().rewriter();
    let inspector = Inspector::new(rewriter, policy);
    let sent = inspector.client_line(
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{}}}"#
            .to_vec(),
    );
    let deadline = sent.deadline.expect("the call has a deadline");
    assert_eq!(inspector.next_deadline(), Some(deadline));
    let failed = inspector.upstream_line(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"fetch failed\"}],\"isError\":true}}\n"
            .to_vec(),
    );
    assert_eq!(failed.retries.len(), 1, "retried: {failed:?}");
    // Out of the session while it was classified: whoever watches must look again.
    assert_eq!(failed.deadline, Some(deadline));
    assert_eq!(inspector.next_deadline(), Some(deadline));
}

#[test]
fn a_failure_rewritten_already_passes_and_counts_as_a_failure() {
    use mcp_errnorm::config::{Flags, Settings};
    use mcp_errnorm::recovery::{BreakerConfig, Policy, RetryConfig, TimeoutConfig};
    use mcp_errnorm::relay::Inspector;

    let breaker = BreakerConfig {
        failures: 2,
        cooldown_seconds: 30.0,
    };
    let policy = Policy::new(RetryConfig::default(), TimeoutConfig::default(), breaker).unwrap();
    let rewriter = Settings::load(&Flags::default()).unwrap().rewriter();
    // What an mcp-errnorm nearer the server made of a transient failure.
    let inner = Inspector::new(rewriter.clone(), Policy::without_retries());
    let call = |id: u32| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fetch","arguments":{{}}}}}}"#)
            .into_bytes()
    };
    inner.client_line(call(1));
    let failed = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"fetch failed\"}],\"isError\":true}}\n";
    let rewritten = inner
        .upstream_line(failed.to_vec())
        .to_client
        .pop()
        .unwrap();
    assert_ne!(rewritten, failed.to_vec(), "the inner proxy rewrote it");

    let outer = Inspector::new(rewriter, policy);
    for id in [1, 2] {
        outer.client_line(call(id));
        let line = String::from_utf8(rewritten.clone()).unwrap().replacen(
            "\"id\":1",
            &format!("\"id\":{id}"),
            1,
        );
        let out = outer.upstream_line(line.clone().into_bytes());
        assert_eq!(out.to_client, vec![line.into_bytes()], "passed as it came");
        assert!(out.retries.is_empty(), "not retried a second time");
    }
    // Two transient failures in a row: the outer proxy's breaker opened.
    let refused = outer.client_line(call(3));
    let answer: Value = serde_json::from_slice(&refused.to_client[0]).unwrap();
    assert_eq!(canonical(&answer)["ruleId"], "builtin:circuit-open");
    assert!(
        outer.stats.summary().contains("transient=2"),
        "{}",
        outer.stats.summary()
    );
}

/// A tool that says it is both read-only and destructive is destructive: never retried unless
/// `retry.destructive_tools` names it. A tool a listing names twice, destructive once and
/// read-only once, is taken as destructive whichever comes first.
#[test]
fn destructive_wins_over_read_only_and_a_tool_listed_twice_is_read_the_safer_way() {
    let extra = json!([
        {"name": "flaky_both", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true, "destructiveHint": true}},
        {"name": "flaky_twice", "inputSchema": {"type": "object"},
         "annotations": {"destructiveHint": true}},
        {"name": "flaky_twice", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}},
        {"name": "flaky_allowed", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true, "destructiveHint": true}},
    ])
    .to_string();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\ndestructive_tools = [\"flaky_allowed\"]\n",
    )
    .unwrap();
    let config = config.display().to_string();
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[("FIXTURE_EXTRA_TOOLS", &extra)],
        ..Options::default()
    });
    p.initialize();
    for tool in ["flaky_both", "flaky_twice"] {
        let answer = p.call(json!(tool), tool, json!({"key": tool, "fails": 1}));
        assert_eq!(canonical(&answer)["attempts"], 1, "{tool}: {answer}");
        assert_eq!(count(&mut p, tool), 1, "{tool}: destructive, never retried");
    }
    let answer = p.call(json!(3), "flaky_allowed", json!({"key": "a", "fails": 1}));
    assert_eq!(
        text(&answer),
        "ok after 2 calls",
        "named in destructive_tools"
    );
}

/// A server that writes the same answer twice: the client gets one. With a retry under way,
/// the duplicate of the failure being retried must not reach the client before (or instead
/// of) the retry's success.
#[test]
fn a_second_answer_to_the_same_id_never_reaches_the_client() {
    let (mut p, _dir) = proxy("");
    let answer = p.call(
        json!(1),
        "flaky",
        json!({"key": "k", "fails": 1, "twice": true, "text": "503 Service Unavailable"}),
    );
    assert_eq!(answer["id"], 1);
    assert_eq!(text(&answer), "ok after 2 calls", "{answer}");
    p.assert_quiet(Duration::from_millis(300));

    let line =
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"once"}]}}"#;
    let answer = p.call(json!(2), "emit", json!({"lines": [line, line]}));
    assert_eq!(text(&answer), "once");
    p.assert_quiet(Duration::from_millis(300));
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains("answered a request it had answered already"),
        "{stderr}"
    );
}
