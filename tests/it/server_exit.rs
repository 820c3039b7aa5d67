//! The moments a session most easily loses an answer, through the real binary: a server that
//! exits while the client is slow to read its last answers, one that dies mid-line while a
//! process it started still holds its stdout, broken answers, ids past 64 bits, and a client
//! that hands the proxy non-blocking pipes, or closes stdin right after its last request.
//!
//! As in `faults.rs`: nothing panics, nothing hangs, every request is answered exactly once.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::time::Duration;

use common::{
    answers_by_id, assert_each_answered_once, assert_no_panic, call, config, Options, Running,
};
use serde_json::{json, Value};

/// The proxy in front of one of the fixture's small servers, read `read_after` late.
fn scenario_server(name: &str, read_after: Duration) -> Running {
    let upstream = common::scenario(name);
    Running::start(Options {
        upstream: Some(&upstream),
        read_after,
        ..Options::default()
    })
}

/// How many of `lines` are notifications, as the servers here print them.
fn notifications(lines: &[Vec<u8>]) -> usize {
    lines
        .iter()
        .filter(|l| l.starts_with(b"{\"jsonrpc\": \"2.0\", \"method\""))
        .count()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn a_client_slow_to_read_gets_the_last_answers_of_a_server_that_exited() {
    // The server answers everything and exits at EOF while the client has not read yet: its
    // answers wait in the proxy (70 KB is more than the pipe to the client holds), and must
    // reach the client as they came, none replaced by "the server exited" and none twice.
    let mut p = Running::start(Options {
        read_after: Duration::from_secs(2),
        ..Options::default()
    });
    p.send(INITIALIZE);
    p.send(&call(1, "big", json!({"size": 70_000, "error": false})));
    p.send(&call(2, "echo", json!({"x": 1})));
    p.close_stdin();
    let status = p.wait();
    assert!(status.success(), "{status:?}");
    let lines = p.drain();
    assert_each_answered_once(&lines, &[json!(0), json!(1), json!(2)]);
    let echo: Value = lines
        .iter()
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .find(|v| v["id"] == 2)
        .unwrap();
    assert_eq!(echo["result"]["content"][0]["text"], r#"{"x":1}"#);
    assert_no_panic(&p.stderr());
}

#[test]
fn a_client_that_closes_stdin_after_its_last_request_still_gets_the_answer() {
    // A pipeline (`printf ... | mcp-errnorm -- server`): the server is not hurried while the
    // request waits, however short `close_wait_ms` is.
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\n");
    let mut p = Running::proxy(&["--config", &config]);
    p.initialize();
    p.send(&call(1, "sleep", json!({"seconds": 1})));
    p.close_stdin();
    let status = p.wait();
    assert!(status.success(), "{status:?}");
    let answer: Value = serde_json::from_slice(&p.drain()[0]).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"].get("isError"), None, "{answer}");
}

#[test]
fn a_slow_client_gets_every_line_an_exited_server_left_after_its_answers() {
    // All answered, the server exits with 176 KB of notifications on their way (in the pipes
    // and the proxy's buffer) while the client is not reading: they are the server's, and
    // every one arrives.
    let mut p = scenario_server("notes-after-the-answer", Duration::from_secs(3));
    p.send(&call(1, "any", json!({})));
    let status = p.wait();
    assert!(status.success(), "{status:?}");
    let lines = p.drain();
    assert_each_answered_once(&lines, &[json!(1)]);
    let notes = notifications(&lines);
    assert_eq!(notes, 22);
}

#[test]
fn a_server_that_dies_mid_line_while_its_child_holds_stdout_gets_its_requests_answered() {
    // The child inherits the server's stdout and outlives it: the pipe never ends. The cut
    // line (streamed: it is long) is ended, and the requests are answered anyway.
    let mut p = scenario_server("dies-mid-line", Duration::ZERO);
    p.send(&call(1, "hold", json!({})));
    p.send(&call(2, "cut", json!({})));
    let status = p.wait();
    assert_eq!(status.code(), Some(4));
    let lines = p.drain();
    assert!(
        lines.iter().all(|l| l.ends_with(b"\n")),
        "a line was left cut"
    );
    assert_each_answered_once(&lines, &[json!(1), json!(2)]);
    for id in [1, 2] {
        let answer = lines
            .iter()
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .find(|v| v["id"] == id)
            .unwrap();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
    }
    assert_no_panic(&p.stderr());
}

#[test]
fn a_child_that_floods_a_dead_servers_stdout_does_not_keep_the_proxy() {
    // Its lines never leave the pipe empty, and a call waits: the proxy lets the pump go once
    // it has read more than the dead server could have left in the pipe.
    let mut p = scenario_server("leaves-a-flood", Duration::ZERO);
    p.send(&call(1, "hold", json!({})));
    p.send(&call(2, "flood", json!({})));
    let start = std::time::Instant::now();
    let status = p.wait();
    assert_eq!(status.code(), Some(3));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // The child ends on its own: its next write, to a pipe nobody reads, fails.
    assert_each_answered_once(&p.drain(), &[json!(1), json!(2)]);
}

#[test]
fn a_retry_not_sent_before_the_client_closed_stdin_answers_with_the_failure() {
    // The client closes stdin during the retry's backoff. A server that keeps running cannot be
    // sent the retry (its stdin is closed); one that exits at EOF leaves it unsent. Either way
    // the client gets the failure the call was retried for, not the server's exit.
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 200\n");
    for env in [&[("FIXTURE_IGNORE_EOF", "1")][..], &[]] {
        let mut p = Running::start(Options {
            proxy_args: &["--config", &config],
            env,
            ..Options::default()
        });
        p.initialize();
        let text = "503 Service Unavailable. Retry-After: 1";
        p.send(&call(
            1,
            "flaky",
            json!({"key": "k", "fails": 1, "text": text}),
        ));
        std::thread::sleep(Duration::from_millis(300));
        p.close_stdin();
        let answer = p.recv();
        assert_eq!(answer["id"], 1);
        let error = common::canonical(&answer);
        assert_eq!(error["errorCode"], "SYSTEM_UNAVAILABLE", "{env:?}: {error}");
        assert_eq!(error["originalError"]["text"], text, "{env:?}: {error}");
        p.wait();
        assert!(p.drain().is_empty(), "{env:?}: answered again");
    }
}

#[test]
fn a_client_gone_while_its_requests_wait_ends_the_wait_for_them() {
    // Stdin and stdout closed with a call held: nobody is left to answer, so the proxy does
    // not wait `answer_wait_ms` (30 s) for it.
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 200\n");
    let mut proxy = common::errnorm()
        .args(["--config", &config, "--"])
        .args(common::fixture_command())
        .env("FIXTURE_IGNORE_EOF", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{}", call(1, "hold", json!({}))).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(proxy.stdout.take());
    let start = std::time::Instant::now();
    drop(stdin);
    let deadline = start + Duration::from_secs(10);
    while proxy.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "still waiting");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn an_answer_with_a_null_error_is_a_failure_answered_once() {
    let mut p = Running::proxy(&[]);
    p.initialize();
    let broken = r#"{"jsonrpc":"2.0","id":{ID},"error":null}"#;
    let answer = p.call(json!(7), "emit", json!({ "lines": [broken] }));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let error = common::canonical(&answer);
    assert_eq!(error["errorCode"], "UNCLASSIFIED", "{error}");
    p.close_stdin();
    let status = p.wait();
    assert!(status.success(), "{status:?}");
    // Settled by that answer: not answered again when the server exits.
    assert_eq!(answers_by_id(&p.drain()).get("7"), None);
}

#[test]
fn ids_past_64_bits_are_told_apart() {
    let mut p = Running::proxy(&[]);
    p.initialize();
    // As f64 these two are one number; the client holds two requests.
    let (a, b) = ("12345678901234567890123", "12345678901234567890124");
    for id in [a, b] {
        p.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hold","arguments":{{"text":"held"}}}}}}"#
        ));
    }
    p.send(&call("c", "crash", json!({"code": 3})));
    let status = p.wait();
    assert_eq!(status.code(), Some(3));
    let lines = p.drain();
    let answered = answers_by_id(&lines);
    for id in [a, b] {
        // serde_json reads the echoed id as f64 too: count the id's own digits instead.
        let member = format!("\"id\":{id},");
        let n = lines
            .iter()
            .filter(|l| l.windows(member.len()).any(|w| w == member.as_bytes()))
            .count();
        assert_eq!(n, 1, "id {id}: {answered:?}");
    }
    assert_no_panic(&p.stderr());
}

/// Sets O_NONBLOCK on a pipe end, as a libuv or asyncio parent leaves the ends it shares.
fn nonblocking(fd: &impl AsRawFd) {
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        assert!(flags >= 0);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

#[test]
fn non_blocking_stdin_and_stdout_are_waited_on_not_taken_for_a_client_gone() {
    let (stdin, mut to_proxy) = std::io::pipe().unwrap();
    let (from_proxy, stdout) = std::io::pipe().unwrap();
    nonblocking(&stdin);
    nonblocking(&stdout);
    let proxy = common::errnorm()
        .arg("--")
        .args(common::fixture_command())
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(to_proxy, "{INITIALIZE}").unwrap();
    // The proxy finds stdin empty (EAGAIN), then stdout full (EAGAIN, 300 KB unread).
    std::thread::sleep(Duration::from_millis(500));
    writeln!(
        to_proxy,
        "{}",
        call(1, "big", json!({"size": 300_000, "error": false}))
    )
    .unwrap();
    writeln!(to_proxy, "{}", call(2, "echo", json!({}))).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    drop(to_proxy);
    let lines: Vec<Vec<u8>> = BufReader::new(from_proxy)
        .split(b'\n')
        .map(|l| [l.unwrap(), b"\n".to_vec()].concat())
        .collect();
    let out = proxy.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_each_answered_once(&lines, &[json!(0), json!(1), json!(2)]);
    assert_no_panic(&String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_non_blocking_stderr_loses_no_line_of_the_servers() {
    // 2,000 lines of 60 bytes: more than the pipe holds while the client is not reading yet.
    let (from_proxy, stderr) = std::io::pipe().unwrap();
    nonblocking(&stderr);
    let mut proxy = common::errnorm()
        .arg("--")
        .args(common::scenario("stderr-lines"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    drop(proxy.stdin.take());
    let lines = BufReader::new(from_proxy)
        .lines()
        .map_while(Result::ok)
        .filter(|l| l.starts_with("server line "))
        .count();
    assert!(proxy.wait().unwrap().success());
    assert_eq!(lines, 2000);
}

#[test]
fn a_request_answered_while_the_server_restarts_never_reaches_the_new_one() {
    // Held while the server restarts: one call times out, another is cancelled by the client.
    // The client has its answer (or gave up); the new server must not run either.
    let (_dir, config) =
        config("[restart]\nattempts = 1\nbackoff_ms = 2000\n[timeouts]\ndefault_seconds = 0.5\n");
    let mut p = Running::proxy(&["--config", &config]);
    p.initialize();
    p.send(&call(1, "crash", json!({"code": 3})));
    assert_eq!(p.recv()["id"], 1);
    p.send(&call(2, "echo", json!({"timed": "out"})));
    p.send(&call(3, "echo", json!({"cancelled": "by the client"})));
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let answer = p.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(common::canonical(&answer)["errorCode"], "TIMEOUT");
    // After the restart (2 s), the new server answers a new call: the held lines are before it.
    std::thread::sleep(Duration::from_millis(2500));
    p.send(&call(4, "echo", json!({})));
    assert_eq!(p.recv()["id"], 4);
    let recorded = String::from_utf8_lossy(&p.recorded()).into_owned();
    for gone in ["timed", "cancelled", "\"requestId\":3"] {
        assert!(
            !recorded.contains(gone),
            "{gone} reached the new server:\n{recorded}"
        );
    }
    p.close_stdin();
    p.wait();
    assert!(p.drain().is_empty(), "answered again");
}

#[test]
fn a_server_writing_to_a_slow_client_is_not_hurried_by_close_wait() {
    // The client sent its call and closed stdin; the server answers, then writes 1.3 MB of
    // notifications and exits. The client reads them, slowly: meanwhile the server is blocked
    // on the proxy, which waits for the client, so `close_wait_ms` must not count, or the
    // server is stopped with half of them unwritten (run directly, the client gets them all).
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\n");
    let upstream = common::scenario("long-notes-after-the-answer");
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        upstream: Some(&upstream),
        read_pause: Duration::from_millis(25),
        ..Options::default()
    });
    p.send(&call(1, "any", json!({})));
    p.close_stdin();
    let status = p.wait();
    assert!(status.success(), "{status:?}");
    let lines = p.drain();
    assert_each_answered_once(&lines, &[json!(1)]);
    let notes = notifications(&lines);
    assert_eq!(notes, 40);
    let stderr = p.stderr();
    assert!(!stderr.contains("SIGTERM"), "{stderr}");
    assert_no_panic(&stderr);
}

#[test]
fn a_server_that_closes_its_stdin_and_runs_on_is_closed_and_its_requests_answered() {
    // It answers `initialize`, closes its stdin and goes on writing notifications: it can take
    // no more requests, and the proxy knows once a write to it fails. The calls sent after
    // must not wait on it for ever (nor until the client leaves).
    let mut p = scenario_server("closes-its-stdin", Duration::ZERO);
    p.send(INITIALIZE);
    assert_eq!(p.recv()["id"], 0);
    // Its first notification is written after the close.
    assert_eq!(p.recv()["method"], "notifications/message");
    p.send(&call(1, "echo", json!({"x": 1})));
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    assert_both_answered_as_deaf(p);
}

#[test]
fn requests_a_server_left_unread_in_its_stdin_are_answered_when_it_closes_it() {
    // The calls reach the pipe while the server still holds it, unread; then it closes it and
    // runs on. They vanish with the pipe and no write fails: the proxy must see the close.
    let mut p = scenario_server("closes-its-stdin-unread", Duration::ZERO);
    p.send(INITIALIZE);
    assert_eq!(p.recv()["id"], 0);
    p.send(&call(1, "echo", json!({"x": 1})));
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    assert_both_answered_as_deaf(p);
}

/// Reads until call 1 and ping 2 are answered (the proxy answers both: the server stopped
/// reading its stdin), and checks the answers.
fn assert_both_answered_as_deaf(mut p: Running) {
    let start = std::time::Instant::now();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        // The server's notifications keep coming: `recv` alone would wait for ever.
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "unanswered after {:?}: {answers:?}",
            start.elapsed()
        );
        let line = p.recv();
        if line.get("id").is_some() {
            answers.push(line);
        }
    }
    // close_wait_ms (2 s), then SIGTERM, which the server does not ignore.
    let call = answers.iter().find(|a| a["id"] == 1).unwrap();
    let error = &call["result"]["structuredContent"];
    let error = if error.is_null() {
        serde_json::from_str::<Value>(call["result"]["content"][0]["text"].as_str().unwrap())
            .unwrap()
    } else {
        error.clone()
    };
    assert_eq!(error["errorCategory"], "transient", "{call}");
    let text = call.to_string();
    assert!(text.contains("stopped reading its stdin"), "{text}");
    let ping = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert!(
        ping["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stopped reading its stdin"),
        "{ping}"
    );
    p.close_stdin();
    p.wait();
    assert_no_panic(&p.stderr());
}

/// The requests of a batch pass uninspected, but they are followed: a server that dies without
/// answering them leaves each answered by the proxy, as a single request would be. One that a
/// batch of answers settled is not answered again.
#[test]
fn the_requests_of_a_batch_are_answered_when_the_server_dies() {
    let mut p = Running::proxy(&[]);
    p.initialize();
    // The fixture ignores batches: these wait for ever.
    p.send(
        r#"[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"echo","arguments":{}}},{"jsonrpc":"2.0","id":"b2","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]"#,
    );
    p.send(r#"[{"jsonrpc":"2.0","id":"s1","method":"x/hang"}]"#);
    let settle = r#"[{"jsonrpc":"2.0","id":"s1","result":{}}]"#;
    p.send(&call("emit", "emit", json!({"lines": [settle]})));
    assert_eq!(
        p.recv_raw(),
        format!("{settle}\n").into_bytes(),
        "passed whole"
    );
    p.send(&call("crash", "crash", json!({"code": 3})));
    let status = p.wait();
    assert_eq!(status.code(), Some(3));
    let lines = p.drain();
    // `emit` writes only what it is given: the crash answers it too.
    let ids = [json!("b1"), json!("b2"), json!("emit"), json!("crash")];
    assert_each_answered_once(&lines, &ids);
    assert_eq!(
        answers_by_id(&lines).get("\"s1\""),
        None,
        "answered in a batch already"
    );
    assert_no_panic(&p.stderr());
}
