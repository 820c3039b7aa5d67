//! The rule tools as a user meets them: check, classify, coverage, init, --log-unmatched and
//! hot reload.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{canonical, Running};
use serde_json::{json, Value};

fn run_in(dir: &Path, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let mut child = common::errnorm()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    run_in(Path::new("."), args, "")
}

/// Runs a command that must refuse its input with 64; returns what it said.
fn refused(args: &[&str]) -> String {
    let (code, _, stderr) = run(args);
    assert_eq!(code, Some(64), "{stderr}");
    stderr
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const GOOD: &str = r#"
[[rule]]
id = "quota"
match = 'quota of (?P<n>\d+) calls used up'
category = "business"
code = "QUOTA_EXHAUSTED"
message = "All {n} calls of this plan are used."
  [[rule.example]]
  text = "Error: quota of 500 calls used up"
  code = "QUOTA_EXHAUSTED"
  retryable = false
"#;

#[test]
fn check_passes_good_files_and_runs_their_examples() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(dir.path(), "r.toml", GOOD);
    let (code, stdout, stderr) = run(&["check", "--rules", &rules]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("(1 from your files)"), "{stdout}");
    assert!(stdout.contains("examples passed"), "{stdout}");
}

#[test]
fn check_reports_a_failing_example_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(
        dir.path(),
        "r.toml",
        &GOOD.replace("retryable = false", "retryable = true"),
    );
    let (code, _, stderr) = run(&["check", "--rules", &rules]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(&format!("{rules}:8:3: rule 'quota': example \"Error: quota of 500 calls used up\": retryable true expected, got false")),
        "{stderr}"
    );
}

#[test]
fn check_refuses_what_would_stop_the_proxy_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "c.toml",
        "log_file = \"no/such/folder/proxy.log\"\n[env]\n\"A=B\" = \"1\"\n",
    );
    let stderr = refused(&["check", "--config", &config]);
    assert!(stderr.contains("[env] 'A=B'"), "{stderr}");
    std::fs::write(&config, "log_file = \"no/such/folder/proxy.log\"\n").unwrap();
    let stderr = refused(&["check", "--config", &config]);
    assert!(
        stderr.contains(&format!("{config}:1:1: log_file: the folder"))
            && stderr.contains("does not exist"),
        "{stderr}"
    );
    // A folder where the log should be, or a file where its folder should be: the start
    // cannot open them either.
    std::fs::write(&config, "profile = \"mcp\"\nlog_file = \".\"\n").unwrap();
    let stderr = refused(&["check", "--config", &config]);
    assert!(
        stderr.contains(&format!("{config}:2:1: log_file: ")) && stderr.contains("is a folder"),
        "{stderr}"
    );
    std::fs::write(&config, "log_unmatched = \"c.toml/u.jsonl\"\n").unwrap();
    let stderr = refused(&["check", "--config", &config]);
    assert!(
        stderr.contains(&format!("{config}:1:1: log_unmatched: "))
            && stderr.contains("is not a folder"),
        "{stderr}"
    );
    // An existing log is only looked at, and a new one is not created.
    let log = write(dir.path(), "proxy.log", "earlier lines\n");
    std::fs::write(
        &config,
        "log_file = \"proxy.log\"\nlog_unmatched = \"new.jsonl\"\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["check", "--config", &config]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "earlier lines\n");
    assert!(!dir.path().join("new.jsonl").exists());
}

#[test]
fn check_rejects_invalid_files_and_unreachable_rules_with_64() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.toml",
        "[[rule]]\nid = \"x\"\ncategory = \"business\"\nmessage = \"{nope}\"\n",
    );
    let stderr = refused(&["check", "--rules", &bad]);
    assert!(
        stderr.contains(&format!("{bad}:4:11: rule 'x': placeholder '{{nope}}'")),
        "{stderr}"
    );

    let shadow = write(
        dir.path(),
        "shadow.toml",
        "[[rule]]\nid = \"all\"\ncategory = \"transient\"\n[[rule]]\nid = \"never\"\nmatch = \"x\"\ncategory = \"business\"\n",
    );
    let stderr = refused(&["check", "--rules", &shadow]);
    assert!(
        stderr.contains(&format!(
            "{shadow}:5:6: rule 'never': never decides anything: rule 'all'"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("rule 'node-enoent': never decides anything"),
        "defaults hidden: a warning"
    );
}

#[test]
fn enabled_false_switches_a_default_off_and_check_refuses_a_switch_off_of_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let off = write(
        dir.path(),
        "off.toml",
        "[[rule]]\nid = \"enoent\"\nenabled = false\n",
    );
    let (code, stdout, stderr) = run(&["check", "--rules", &off]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("(0 from your files)"), "{stdout}");
    let explain = |rules: &[&str]| {
        let mut args = vec!["classify", "--explain"];
        args.extend(rules);
        args.push("ENOENT: no such file or directory, open '/x'");
        run(&args).2
    };
    assert!(explain(&[]).contains(". enoent ("), "{}", explain(&[]));
    let stderr = explain(&["--rules", &off]);
    assert!(!stderr.contains(". enoent ("), "{stderr}");

    let typo = write(
        dir.path(),
        "typo.toml",
        "[[rule]]\nid = \"enoentt\"\nenabled = false\n",
    );
    let stderr = refused(&["check", "--rules", &typo]);
    assert!(
        stderr.contains(&format!(
            "{typo}:2:6: rule 'enoentt': switches off no rule: there is no default rule \
             'enoentt'; did you mean 'enoent'?"
        )),
        "{stderr}"
    );
}

#[test]
fn classify_prints_the_canonical_error_and_explains() {
    let (code, stdout, stderr) = run(&[
        "classify",
        "--tool",
        "search",
        "--explain",
        "HTTP 429 Too Many Requests, retry after 30s",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let error: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(error["errorCode"], "RATE_LIMITED");
    assert_eq!(error["retryAfterSeconds"], 30);
    assert_eq!(error["attempted_query"]["tool"], "search");
    assert!(
        stderr.contains("decided by rule 'meaning-rate-limit-wait'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("http-429"),
        "the status rule matches too, later: {stderr}"
    );
    assert!(stderr.contains("every rule that matches"), "{stderr}");

    let (_, stdout, _) = run(&[
        "classify",
        "--source",
        "rpc",
        "--code",
        "-32602",
        "Unknown tool: x",
    ]);
    let error: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(error["originalError"]["rpcCode"], -32602);
    assert_eq!(error["ruleId"], "mcp-unknown-tool");

    let (_, stdout, stderr) = run_in(
        Path::new("."),
        &["classify", "-"],
        "the flux compensator is sad\n",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["errorCategory"],
        "unknown"
    );
    assert!(stderr.contains("no rule matched"), "{stderr}");
}

#[test]
fn classify_masks_secrets_as_the_proxy_does() {
    let (code, stdout, stderr) = run(&[
        "classify",
        "connect ECONNREFUSED postgres://admin:S3cr3tPassw0rd@db:5432/prod",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains("S3cr3tPassw0rd"), "{stdout}");
    let error: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        error["originalError"]["text"],
        "connect ECONNREFUSED postgres://admin:[REDACTED]@db:5432/prod"
    );
    let input = "{\"text\":\"401 for Bearer abcdefghijklmnop1234\"}\n";
    let (_, stdout, _) = run_in(Path::new("."), &["classify", "--jsonl"], input);
    assert!(!stdout.contains("abcdefghijklmnop1234"), "{stdout}");
}

#[test]
fn classify_jsonl_answers_each_line_in_order() {
    let input = "{\"text\":\"fetch failed\"}\nnot json\n{\"text\":\"Unknown tool: t\",\"source\":\"rpc\",\"code\":-32602,\"tool\":\"t\"}\n";
    let (code, stdout, stderr) = run_in(Path::new("."), &["classify", "--jsonl"], input);
    assert_eq!(code, Some(1), "a bad line is reported");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["ruleId"], "fetch-failed");
    assert!(lines[1]["error"].as_str().unwrap().starts_with("stdin:2:"));
    assert_eq!(lines[2]["ruleId"], "mcp-unknown-tool");
    assert!(stderr.contains("stdin:2: not a failure record"), "{stderr}");
}

#[test]
fn init_writes_starters_that_check_clean_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, _) = run_in(dir.path(), &["init", "--dir", "."], "");
    assert_eq!(code, Some(0));
    assert!(stdout.contains("config.toml") && stdout.contains("rules.toml"));
    let (code, stdout, stderr) = run_in(dir.path(), &["check", "--config", "config.toml"], "");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("(1 from your files)"), "{stdout}");

    std::fs::write(dir.path().join("rules.toml"), "# mine\n").unwrap();
    let (code, _, stderr) = run_in(dir.path(), &["init", "--dir", "."], "");
    assert_eq!(code, Some(73));
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rules.toml")).unwrap(),
        "# mine\n"
    );
}

#[test]
fn init_counts_a_link_to_nowhere_as_taken_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", dir.path().join("rules.toml")).unwrap();
    let (code, _, stderr) = run_in(dir.path(), &["init", "--dir", "."], "");
    assert_eq!(code, Some(73), "{stderr}");
    assert!(!dir.path().join("config.toml").exists(), "half written");
}

#[test]
fn classify_jsonl_answers_a_line_that_is_not_utf8_in_its_place_and_goes_on() {
    let mut child = common::errnorm()
        .args(["classify", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: &[u8] = b"{\"text\":\"ENOENT: x\"}\n{\"text\":\"\xff\"}\n{\"text\":\"ETIMEDOUT\"}\n";
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[1]["error"].as_str().unwrap().starts_with("stdin:2:"));
    assert_eq!(lines[2]["errorCode"], "TIMEOUT");
}

#[test]
fn coverage_counts_a_line_that_is_not_utf8_as_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("u.jsonl");
    std::fs::write(&log, b"{\"text\":\"ENOENT: x\"}\n{\"text\":\"\xff\"}\n").unwrap();
    let (code, stdout, stderr) = run(&["coverage", log.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stdout.contains("1 failures, 0 unclassified (0.0%), 1 unreadable lines"),
        "{stdout}"
    );
}

#[test]
fn a_tool_whose_reader_goes_away_ends_quietly() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let mut child = common::errnorm()
        .args(["classify", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..20_000 {
            if stdin.write_all(b"{\"text\":\"ENOENT: x\"}\n").is_err() {
                return;
            }
        }
    });
    // `| head -1`: one line read, then the pipe closed.
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("NOT_FOUND"), "{first}");
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

#[test]
fn unmatched_failures_are_logged_and_coverage_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("unmatched.jsonl").display().to_string();
    let mut p = Running::proxy(&["--log-unmatched", &log]);
    p.call(
        json!(1),
        "fail",
        json!({"text": "the flux compensator is sad"}),
    );
    p.call(json!(2), "fail", json!({"text": "fetch failed"}));
    p.call(
        json!(3),
        "rpc_error",
        json!({"code": -32000, "message": "gremlins"}),
    );
    p.close_stdin();
    p.wait();
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["text"], "the flux compensator is sad");
    assert_eq!(lines[0]["tool"], "fail");
    assert_eq!(lines[1]["source"], "rpc");
    assert_eq!(lines[1]["code"], -32000);
    assert!(lines[1]["time"].as_str().unwrap().ends_with('Z'));

    let (code, stdout, _) = run(&["coverage", &log]);
    assert_eq!(code, Some(1), "unclassified failures make coverage fail");
    assert!(
        stdout.contains("2 failures, 2 unclassified (100.0%)"),
        "{stdout}"
    );

    let rules = write(
        dir.path(),
        "r.toml",
        "[[rule]]\nid = \"sad\"\nmatch = \"compensator|gremlins\"\ncategory = \"transient\"\n",
    );
    let (code, stdout, _) = run(&["coverage", "--rules", &rules, &log]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("sad"), "{stdout}");
}

/// Calls until the failure is decided by `rule`, for at most a few seconds.
fn await_rule(p: &mut Running, id: &mut i64, rule: Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        *id += 1;
        let answer = p.call(json!(*id), "fail", json!({"text": "widget jammed"}));
        let got = canonical(&answer)["ruleId"].clone();
        if got == rule || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A proxy whose one rule file holds one rule, `first`, seen deciding a failure.
fn proxy_with_rule(first: &str) -> (tempfile::TempDir, String, Running, i64) {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(
        dir.path(),
        "r.toml",
        &format!("[[rule]]\nid = \"{first}\"\nmatch = \"jammed\"\ncategory = \"transient\"\n"),
    );
    let mut p = Running::proxy(&["--rules", &rules]);
    let mut id = 0;
    assert_eq!(await_rule(&mut p, &mut id, json!(first)), first);
    (dir, rules, p, id)
}

#[test]
fn rules_reload_when_their_file_changes_and_bad_changes_are_refused() {
    let (dir, rules, mut p, mut id) = proxy_with_rule("v1");

    // Saved as editors do: a new file renamed over the old one.
    let tmp = write(
        dir.path(),
        "r.toml.tmp",
        "[[rule]]\nid = \"v2\"\nmatch = \"jammed\"\ncategory = \"business\"\n",
    );
    std::fs::rename(&tmp, &rules).unwrap();
    assert_eq!(await_rule(&mut p, &mut id, json!("v2")), "v2");

    std::fs::write(
        &rules,
        "[[rule]]\nid = \"v3\"\nmatch = \"(jammed\"\ncategory = \"business\"\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        await_rule(&mut p, &mut id, json!("v2")),
        "v2",
        "an invalid change keeps the rules"
    );

    std::fs::write(
        &rules,
        "[[rule]]\nid = \"v4\"\nmatch = \"jammed\"\ncategory = \"permission\"\n",
    )
    .unwrap();
    assert_eq!(await_rule(&mut p, &mut id, json!("v4")), "v4");
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains(&format!("{rules}:3:9: rule 'v3': invalid regex")),
        "{stderr}"
    );
    assert!(stderr.contains("reloaded the rules"), "{stderr}");
}

#[test]
fn a_rule_file_named_by_a_refused_config_is_watched_until_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let rule = |id: &str, pattern: &str| {
        format!("[[rule]]\nid = \"{id}\"\nmatch = \"{pattern}\"\ncategory = \"business\"\n")
    };
    write(dir.path(), "a.toml", &rule("a", "jammed"));
    let config = write(dir.path(), "c.toml", "rules = [\"a.toml\"]\n");
    let mut p = Running::proxy(&["--config", &config]);
    let mut id = 0;
    assert_eq!(await_rule(&mut p, &mut id, json!("a")), "a");
    // The config now names a second file, which does not load yet: refused.
    let new = write(dir.path(), "new.toml", &rule("new", "(jammed"));
    std::fs::write(&config, "rules = [\"new.toml\", \"a.toml\"]\n").unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(await_rule(&mut p, &mut id, json!("a")), "a");
    // Fixing that file alone is enough.
    std::fs::write(&new, rule("new", "jammed")).unwrap();
    assert_eq!(await_rule(&mut p, &mut id, json!("new")), "new");
    p.close_stdin();
    p.wait();
}

#[test]
fn a_rule_file_replaced_by_a_fifo_is_refused_and_the_proxy_still_shuts_down() {
    let (_dir, rules, mut p, mut id) = proxy_with_rule("kept");
    // Reading a FIFO waits for a writer: the reload must not, nor hold up the shutdown.
    std::fs::remove_file(&rules).unwrap();
    let path = std::ffi::CString::new(rules.as_str()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(await_rule(&mut p, &mut id, json!("kept")), "kept");
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains(&format!("{rules}: cannot read: not a regular file")),
        "{stderr}"
    );
}

#[test]
fn sighup_reloads() {
    let (_dir, _rules, mut p, mut id) = proxy_with_rule("before");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(p.child.id() as i32, libc::SIGHUP) };
    // The proxy keeps serving while it reloads; give the reload time to finish and log.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(await_rule(&mut p, &mut id, json!("before")), "before");
    p.close_stdin();
    p.wait();
    assert!(p.stderr().contains("reloaded the rules (SIGHUP)"));
}

/// An unmatched log as `--log-unmatched` writes it, from a session with a server nobody wrote
/// rules for: the same few failures again and again with other names and numbers, one that
/// neither a rule nor the model can read, and one a rule decides.
fn unmatched_log() -> String {
    let mut lines = Vec::new();
    let mut push = |tool: &str, text: String| {
        lines.push(
            serde_json::json!({"time": "2026-12-02T10:00:00Z", "tool": tool, "source": "result", "code": null, "text": text})
                .to_string(),
        );
    };
    for (n, env) in ["staging", "prod", "qa", "dev", "eu-1"].iter().enumerate() {
        push(
            "deploy_service",
            format!(
                "Pipeline 'svc-{n}' on '{env}' halted at stage {} of 7",
                n + 2
            ),
        );
    }
    for n in 0..3 {
        push(
            "run_report",
            format!(
                "Report job {} rejected: the scheduler queue wh-{n} is paused for maintenance",
                4100 + n
            ),
        );
    }
    push(
        "lookup",
        "Spline #77: reticulation returned 0x2a".to_owned(),
    );
    push(
        "read_file",
        "ENOENT: no such file or directory, open '/srv/a.yaml'".to_owned(),
    );
    lines.join("\n") + "\n"
}

#[test]
fn coverage_groups_what_no_rule_decided_and_drafts_rules_check_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "unmatched.jsonl", &unmatched_log());
    let drafts = dir.path().join("drafts.toml");
    let (code, stdout, stderr) = run(&["coverage", "--suggest", drafts.to_str().unwrap(), &log]);
    assert_eq!(
        code,
        Some(1),
        "not every failure was decided by a rule: {stderr}"
    );
    // Grouped by shape, most frequent first, with their tools and an example.
    let frozen = stdout
        .find("Pipeline '…' on ")
        .unwrap_or_else(|| panic!("{stdout}"));
    let report = stdout
        .find("Report job <n> rejected")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(frozen < report, "most frequent first:\n{stdout}");
    assert!(stdout.contains("deploy_service"), "{stdout}");
    assert!(
        stdout.contains("e.g. Pipeline 'svc-0' on 'staging'"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("e.g. ENOENT"),
        "a rule decided it:\n{stdout}"
    );

    // The drafts pass `check` as written, and decide the failures they were drafted from.
    let text = std::fs::read_to_string(&drafts).unwrap();
    assert!(text.contains("# GUESS: the fallback model says"), "{text}");
    let (code, stdout, stderr) = run(&["check", "--rules", drafts.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}\n{stdout}\n{stderr}");
    let (_, stdout, _) = run(&["coverage", "--rules", drafts.to_str().unwrap(), &log]);
    assert!(stdout.contains("10 failures, 0 unclassified"), "{stdout}");
    assert!(!stdout.contains("failures no rule decided"), "{stdout}");

    // Never overwritten.
    let (code, _, stderr) = run(&["coverage", "--suggest", drafts.to_str().unwrap(), &log]);
    assert_eq!(code, Some(73), "{stderr}");
}

/// A rule file caught empty (an editor truncates, pauses, then writes; or `: > rules.toml`)
/// does not drop its rules: the reload waits for the next write, and refuses a file that stays
/// empty. A file that holds only a comment empties it on purpose.
#[test]
fn a_truncated_rule_file_keeps_its_rules_until_it_is_written_or_emptied_on_purpose() {
    let (_dir, rules, mut p, mut id) = proxy_with_rule("kept");

    // Mid-save: empty for 700 ms (the proxy looks every 250 ms), then written.
    std::fs::File::create(&rules).unwrap();
    let pause = Instant::now();
    while pause.elapsed() < Duration::from_millis(700) {
        id += 1;
        let answer = p.call(json!(id), "fail", json!({"text": "widget jammed"}));
        assert_eq!(
            canonical(&answer)["ruleId"],
            "kept",
            "the rules vanished while the file was being saved"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"after\"\nmatch = \"jammed\"\ncategory = \"transient\"\n",
    )
    .unwrap();
    assert_eq!(await_rule(&mut p, &mut id, json!("after")), "after");

    // Truncated for good: refused, with a warning.
    std::fs::File::create(&rules).unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(await_rule(&mut p, &mut id, json!("after")), "after");

    // A comment alone: emptied on purpose.
    std::fs::write(&rules, "# no rules of our own for now\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        id += 1;
        let answer = p.call(json!(id), "fail", json!({"text": "widget jammed"}));
        if canonical(&answer)["ruleId"] != "after" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a comment-only file was not loaded"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains(&format!("{rules} is empty but had 1 rule(s)")),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("reloaded the rules").count(),
        2,
        "once for the written file, once for the comment: {stderr}"
    );
}
