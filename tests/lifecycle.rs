//! Start, shutdown and the upstream's death: no request is left without an answer, no process
//! is left behind.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use common::{canonical, Options, Running};
use serde_json::json;

fn config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    (dir, path)
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The pid of the fixture upstream, asked through the proxy.
fn upstream_pid(p: &mut Running) -> i32 {
    let answer = p.call(json!("pid"), "env", json!({"name": "FIXTURE_PID_PROBE"}));
    assert_eq!(answer["result"]["content"][0]["text"], "<unset>");
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", p.child.id())).unwrap();
    children
        .split_whitespace()
        .next()
        .expect("the proxy has a child")
        .parse()
        .unwrap()
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
    let output = std::process::Command::new(common::BIN)
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
    use std::io::{BufRead, BufReader, Write};

    let (_dir, config) = config("[shutdown]\nclose_wait_ms = 200\nterm_wait_ms = 5000\n");
    // `sh -c` stays as the server's parent (it has more to do after), as npx and uvx do.
    let script = format!("{}; echo done", common::fixture_command().join(" "));
    let mut proxy = std::process::Command::new(common::BIN)
        .args(["--config", &config, "--", "sh", "-c", &script])
        .env("FIXTURE_IGNORE_EOF", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).unwrap();
    let mut answer = String::new();
    BufReader::new(proxy.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains("\"id\":1"), "{answer}");
    let children = |pid: u32| -> Vec<i32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    };
    let shell = children(proxy.id())[0];
    let server = children(shell as u32)[0];
    drop(stdin);
    let status = proxy.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
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
    use std::io::{BufRead, BufReader, Write};

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started-once");
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[restart]\nattempts = 1\nbackoff_ms = 50\n").unwrap();
    // The second start exits at once, before it can answer the replayed initialize.
    let script = format!(
        "if [ -e '{m}' ]; then exit 7; fi; touch '{m}'; exec {fixture}",
        m = marker.display(),
        fixture = common::fixture_command().join(" ")
    );
    let started = std::time::Instant::now();
    let mut proxy = std::process::Command::new(common::BIN)
        .arg("--config")
        .arg(&config)
        .args(["--", "sh", "-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"crash","arguments":{{"code":3}}}}}}"#).unwrap();
    let status = proxy.wait().unwrap();
    assert_eq!(status.code(), Some(7), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ended after {:?} (the replay waits up to 10 s)",
        started.elapsed()
    );
}
