//! Start, shutdown and the upstream's death: no request is left without an answer, no process
//! is left behind.

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use common::{assert_no_panic, canonical, config, Options, Running};
use serde_json::json;

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The pid of the proxy's child (the fixture upstream, or its wrapper), once it answers.
fn upstream_pid(p: &mut Running) -> i32 {
    let answer = p.call(json!("pid"), "env", json!({"name": "FIXTURE_PID_PROBE"}));
    assert_eq!(answer["result"]["content"][0]["text"], "<unset>");
    children(p.child.id() as i32)[0]
}

fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

#[test]
fn a_crash_answers_every_pending_request_and_exits_with_its_status() {
    let mut p = Running::proxy(&[]);
    p.initialize();
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{"text":"x"}}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"hold","arguments":{"text":"y"}}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"x/hang","params":{}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"crash","arguments":{"code":3}}}"#);
    let status = p.wait();
    assert_eq!(status.code(), Some(3));
    let mut answers: Vec<serde_json::Value> = p
        .drain()
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    answers.sort_by_key(|a| a["id"].to_string());
    let ids: Vec<String> = answers.iter().map(|a| a["id"].to_string()).collect();
    assert_eq!(
        ids,
        ["\"two\"", "1", "3", "4"],
        "every request answered once"
    );
    for answer in &answers {
        if answer["id"] == 3 {
            assert_eq!(answer["error"]["code"], -32603);
            assert!(answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("exited with status 3"));
            continue;
        }
        let error = canonical(answer);
        assert_eq!(error["errorCategory"], "transient", "{answer}");
        assert_eq!(error["isRetryable"], true);
        assert_eq!(error["originalError"]["source"], "proxy");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("exited with status 3"),
            "{error}"
        );
    }
}

#[test]
fn stdin_eof_closes_the_upstream_and_exits_with_its_status() {
    let mut p = Running::proxy(&[]);
    p.initialize();
    let pid = upstream_pid(&mut p);
    let (status, took, _) = p.finish();
    assert!(status.success(), "{status:?}");
    assert!(!alive(pid), "the upstream is gone");
    // Not a speed target: only that no shutdown step's wait (2 s each) was needed.
    assert!(took < Duration::from_millis(1900), "took {took:?}");
}

#[test]
fn an_upstream_that_ignores_eof_gets_sigterm() {
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 5000\n");
    let p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[("FIXTURE_IGNORE_EOF", "1")],
        ..Options::default()
    });
    let (status, took, _) = p.finish();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    assert!(took >= Duration::from_millis(200), "waited {took:?}");
}

#[test]
fn an_upstream_that_ignores_sigterm_gets_sigkill() {
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 100\nterm_wait_ms = 100\n");
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[("FIXTURE_IGNORE_EOF", "1"), ("FIXTURE_IGNORE_TERM", "1")],
        ..Options::default()
    });
    let pid = upstream_pid(&mut p);
    let (status, took, _) = p.finish();
    assert_eq!(status.code(), Some(128 + libc::SIGKILL), "{status:?}");
    assert!(took >= Duration::from_millis(200), "waited {took:?}");
    assert!(!alive(pid));
}

#[test]
fn sigterm_to_the_proxy_reaches_the_upstream() {
    let mut p = Running::proxy(&[]);
    let pid = upstream_pid(&mut p);
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(p.child.id() as i32, libc::SIGTERM) };
    let status = p.wait();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    assert!(
        status.signal().is_none(),
        "the proxy exits, it is not killed"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert!(!alive(pid), "no orphan");
}

#[test]
fn a_client_that_goes_away_ends_the_session_cleanly() {
    let mut p = Running::proxy(&[]);
    let pid = upstream_pid(&mut p);
    // Drop our end of the proxy's stdout, then make the upstream write.
    p.close_stdout();
    // The first answer is the last our reader takes; the next ones meet a closed pipe. Stdin
    // stays open: the proxy must notice on its own that nobody is listening (and may have
    // ended before the last lines, which then cannot be sent).
    for id in 10..13 {
        let _ = p.try_send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{}}}}}}"#));
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = p.wait();
    assert!(status.signal().is_none(), "no crash: {status:?}");
    assert!(!alive(pid));
}

#[test]
fn an_upstream_that_cannot_start_is_a_clear_error() {
    let output = common::errnorm()
        .args(["--", "/nonexistent/server", "--flag"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot start the upstream server '/nonexistent/server'"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn config_env_reaches_the_upstream() {
    let (_dir, config) = config("[env]\nMY_TOKEN = \"s3cret\"\n");
    let mut p = Running::proxy(&["--config", &config]);
    let answer = p.call(json!(1), "env", json!({"name": "MY_TOKEN"}));
    assert_eq!(answer["result"]["content"][0]["text"], "s3cret");
}

#[test]
fn logs_never_reach_stdout() {
    let mut p = Running::proxy(&["--log-level", "trace"]);
    p.initialize();
    let answer = p.call(json!(1), "fail", json!({"text": "fetch failed"}));
    assert_eq!(canonical(&answer)["ruleId"], "fetch-failed");
    p.close_stdin();
    p.wait();
    assert!(p.drain().is_empty());
    let stderr = p.stderr();
    assert!(stderr.contains("rewrote a failed tool call"), "{stderr}");
    assert!(stderr.contains("fetch-failed"), "{stderr}");
}

#[test]
fn a_server_behind_a_wrapper_is_not_left_behind() {
    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 5000\n");
    // `sh -c` stays as the server's parent (it has more to do after), as npx and uvx do.
    let upstream = common::fixture_in_shell("{fixture}; echo done");
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[("FIXTURE_IGNORE_EOF", "1")],
        upstream: Some(&upstream),
        ..Options::default()
    });
    let shell = upstream_pid(&mut p);
    let server = children(shell)[0];
    // Not `finish`: a server left behind would hold the proxy's stderr open, and waiting for
    // it would hang this test instead of failing it.
    p.close_stdin();
    let status = p.wait();
    // The server gets SIGTERM first (deepest first), then the shell; on a loaded machine the
    // shell may finish its `echo` and exit 0 in between.
    assert!(matches!(status.code(), Some(0) | Some(143)), "{status:?}");
    // Gone, or a zombie nobody has reaped yet (in a container, pid 1 may never reap it).
    let running = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| Some(stat.rsplit_once(')')?.1.trim_start().starts_with('Z')))
            .is_some_and(|zombie| !zombie)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while running(server) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let outlived = running(server);
    if outlived {
        // SAFETY: the test's own grandchild; not left running after the test either way.
        unsafe { libc::kill(server, libc::SIGKILL) };
    }
    assert!(!outlived, "the server under the wrapper outlived the proxy");
}

#[test]
fn a_restarted_server_that_dies_at_once_does_not_stall_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started-once").display().to_string();
    let (_cfg, config) = config("[restart]\nattempts = 1\nbackoff_ms = 50\n");
    // The second start exits at once, before it can answer the replayed initialize.
    let upstream = common::fixture_in_shell(&format!(
        "if [ -e '{marker}' ]; then exit 7; fi; touch '{marker}'; exec {{fixture}}"
    ));
    let started = std::time::Instant::now();
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        upstream: Some(&upstream),
        ..Options::default()
    });
    p.initialize();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{"code":3}}}"#);
    let status = p.wait();
    assert_eq!(status.code(), Some(7), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ended after {:?} (the replay waits up to 10 s)",
        started.elapsed()
    );
}

/// A proxy with one restart after `backoff_ms`, whose server has just crashed with status 3 and
/// whose call got its transient error; the restart now waits out its backoff.
fn crashed_awaiting_restart(backoff_ms: u64) -> (tempfile::TempDir, Running) {
    let (cfg, config) = config(&format!(
        "[restart]\nattempts = 1\nbackoff_ms = {backoff_ms}\n"
    ));
    let mut p = Running::proxy(&["--config", &config]);
    let crashed = p.call(json!(1), "crash", json!({"code": 3}));
    assert_eq!(canonical(&crashed)["errorCode"], "SYSTEM_UNAVAILABLE");
    assert_eq!(canonical(&crashed)["isRetryable"], true);
    (cfg, p)
}

#[test]
fn a_request_sent_while_a_restart_waits_is_answered_when_the_proxy_is_stopped() {
    let (_cfg, mut p) = crashed_awaiting_restart(2000);
    // The restart waits out its backoff: this request is held for the next server...
    p.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
    );
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    std::thread::sleep(Duration::from_millis(300));
    // ...which never comes: the proxy is told to stop meanwhile.
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(p.child.id() as i32, libc::SIGTERM) };
    // In either order.
    let mut answers = [p.recv(), p.recv()];
    answers.sort_by_key(|a| a["id"].as_u64());
    let [call, ping] = answers;
    assert_eq!(call["id"], 2, "{call}");
    assert_eq!(canonical(&call)["isRetryable"], true);
    assert_eq!(
        canonical(&call)["message"],
        "The MCP server exited with status 3 and was not restarted before answering this call."
    );
    assert_eq!(ping["id"], 3, "{ping}");
    assert!(ping["error"]["message"].is_string(), "{ping}");
    p.wait();
}

#[test]
fn a_client_that_leaves_while_a_restart_waits_ends_it_with_the_servers_status() {
    let (_cfg, mut p) = crashed_awaiting_restart(3000);
    let left = std::time::Instant::now();
    p.close_stdin();
    let status = p.wait();
    assert_eq!(status.code(), Some(3), "the crashed server's status");
    assert!(
        left.elapsed() < Duration::from_secs(2),
        "no new server for nobody: {:?}",
        left.elapsed()
    );
}

#[test]
fn a_client_that_leaves_a_request_waiting_for_the_restart_gets_it_answered() {
    let (_cfg, mut p) = crashed_awaiting_restart(3000);
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":2}}}"#);
    let left = std::time::Instant::now();
    p.close_stdin();
    let answer = p.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(
        answer["result"]["content"][0]["text"], r#"{"n":2}"#,
        "{answer}"
    );
    assert!(
        left.elapsed() < Duration::from_secs(2),
        "the new server starts at once: {:?}",
        left.elapsed()
    );
    assert_eq!(p.wait().code(), Some(0));
}

#[test]
fn the_servers_stderr_reaches_the_log_masked_and_whole() {
    let mut p = Running::start(Options {
        env: &[(
            "FIXTURE_STDERR_BANNER",
            "connecting to postgres://app:pa55w0rd@db:5432/x with \u{1b}[32mcolour\u{1b}[0m",
        )],
        ..Options::default()
    });
    p.initialize();
    // Its last words before it dies are not lost to the proxy's exit.
    p.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"crash","arguments":{"code":4}}}"#);
    assert_eq!(p.recv()["id"], 9);
    assert_eq!(p.wait().code(), Some(4));
    let log = p.stderr();
    assert!(!log.contains("pa55w0rd"), "{log}");
    // A coloured line that shows a secret is masked without its colours (they can hide one).
    assert!(
        log.contains("connecting to postgres://app:[REDACTED]@db:5432/x with colour\n"),
        "{log}"
    );
    assert!(log.contains("crashing with status 4\n"), "{log}");
}

/// How a session with a hard-to-stop process tree ends.
#[derive(Debug, Clone, Copy)]
enum Ending {
    /// SIGTERM to the proxy.
    Sigterm,
    /// The client closes stdin with nothing waiting.
    StdinClosed,
    /// The client closes stdin with a request still waiting (`answer_wait_ms` passes).
    StdinClosedWithACallWaiting,
    /// The server crashes.
    ServerCrash,
}

/// A server that ignores SIGTERM behind a wrapper that does not (`sh -c "server; other"`, no
/// `exec`), which left a grandchild (a double fork) that ignores SIGTERM too: whatever ends
/// the session, when the proxy has exited none of them runs any more.
fn nothing_outlives_the_proxy(ending: Ending) {
    let (dir, config) =
        config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 300\nanswer_wait_ms = 500\n");
    let pid_file = dir.path().join("grandchild.pid");
    let pid_file = pid_file.display().to_string();
    let upstream = common::fixture_in_shell("{fixture}; echo done >&2");
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[
            ("FIXTURE_IGNORE_EOF", "1"),
            ("FIXTURE_IGNORE_TERM", "1"),
            ("FIXTURE_DOUBLE_FORK", &pid_file),
        ],
        upstream: Some(&upstream),
        ..Options::default()
    });
    let shell = upstream_pid(&mut p);
    let server = children(shell)[0];
    // Written by the grandchild itself, which may come after the server's first answer.
    let deadline = std::time::Instant::now() + common::PATIENCE;
    let grandchild: i32 = loop {
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            break pid.parse().unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no grandchild started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let started = [shell, server, grandchild];
    let t0 = std::time::Instant::now();
    match ending {
        // SAFETY: signalling our own child process.
        Ending::Sigterm => unsafe {
            libc::kill(p.child.id() as i32, libc::SIGTERM);
        },
        Ending::StdinClosed => p.close_stdin(),
        Ending::StdinClosedWithACallWaiting => {
            p.send(r#"{"jsonrpc":"2.0","id":"w","method":"x/hang"}"#);
            p.close_stdin();
        }
        Ending::ServerCrash => p.send(&common::call("c", "crash", json!({"code": 3}))),
    }
    p.wait();
    let took = t0.elapsed();
    let left: Vec<i32> = started.into_iter().filter(|&pid| running(pid)).collect();
    for &pid in &left {
        // SAFETY: the test's own descendants; not left running after the test either way.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    eprintln!("{ending:?}: the proxy and everything it started gone after {took:?}");
    assert!(
        left.is_empty(),
        "{ending:?}: {left:?} of {started:?} (shell, server, grandchild) outlived the proxy"
    );
    assert_no_panic(&p.stderr());
}

/// Whether `pid` runs: gone, or a zombie nobody reaped (in a container, pid 1 may never reap
/// it), is not running.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(stat.rsplit_once(')')?.1.trim_start().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn nothing_outlives_a_proxy_told_to_stop() {
    nothing_outlives_the_proxy(Ending::Sigterm);
}

#[test]
fn nothing_outlives_a_proxy_whose_client_closed_stdin() {
    nothing_outlives_the_proxy(Ending::StdinClosed);
}

#[test]
fn nothing_outlives_a_proxy_whose_client_closed_stdin_with_a_call_waiting() {
    nothing_outlives_the_proxy(Ending::StdinClosedWithACallWaiting);
}

#[test]
fn nothing_outlives_a_proxy_whose_server_crashed() {
    nothing_outlives_the_proxy(Ending::ServerCrash);
}
