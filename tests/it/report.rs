//! `report` (issue #20, "see what it did"): the real proxy in front of a failing server writes
//! its log (text and JSON, two servers, one file and another), and the report of those files
//! counts what happened.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::common::{self, Options, Running};

/// Runs the proxy as server `name`, its log in `format` appended to `log`, and makes `calls`.
/// The fallback model is off, so that the texts no rule knows stay unclassified whatever the
/// model learns.
fn session(log: &Path, format: &str, name: &str, calls: &[(Value, &str, Value)]) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "fallback_model = false\n[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n\
         [timeouts]\ndefault_seconds = 1\n",
    )
    .unwrap();
    let (config, log) = (config.display().to_string(), log.display().to_string());
    let args = [
        "--config",
        &config,
        "--log-format",
        format,
        "--log-file",
        &log,
        "--name",
        name,
    ];
    let mut p = Running::start(Options {
        proxy_args: &args,
        ..Options::default()
    });
    p.initialize();
    for (id, tool, arguments) in calls {
        let answer = p.call(id.clone(), tool, arguments.clone());
        assert_eq!(answer["id"], *id, "{answer}");
    }
    p.close_stdin();
    p.wait();
}

/// The calls of one session: 2 texts no rule knows (one shape), 1 ENOENT, 1 call recovered
/// after a retry, 1 that fails on every retry, 1 with no answer in time.
fn calls() -> Vec<(Value, &'static str, Value)> {
    vec![
        (
            json!(1),
            "fail",
            json!({"text": "the frobnicator broke on item 42"}),
        ),
        (
            json!(2),
            "fail",
            json!({"text": "the frobnicator broke on item 7"}),
        ),
        (
            json!(3),
            "fail",
            json!({"text": "ENOENT: no such file, open /srv/x"}),
        ),
        (json!(4), "flaky", json!({"key": "a", "fails": 1})),
        (json!(5), "flaky", json!({"key": "b", "fails": 99})),
        (json!(6), "hold", json!({"text": "never"})),
    ]
}

fn report(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let mut child = common::errnorm()
        .arg("report")
        .args(args)
        .env_remove("MCP_ERRNORM_CONFIG")
        .env_remove("MCP_ERRNORM_LOG")
        .env_remove("XDG_CONFIG_HOME")
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

/// The row of `table` (a section of the text report) whose first cells are `first`, split.
fn row<'a>(text: &'a str, section: &str, first: &[&str]) -> Vec<&'a str> {
    let body = text
        .split(&format!("\n{section}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no section {section}: {text}"));
    body.lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.starts_with(first))
        .unwrap_or_else(|| panic!("no row {first:?} in {section}: {text}"))
}

#[test]
fn the_report_of_real_logs_counts_failures_retries_and_texts() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = dir.path().join("mixed.log");
    let other = dir.path().join("other.log");
    // One file: a server logged as text, another as JSON, and lines that are not the proxy's.
    session(&mixed, "text", "alpha", &calls());
    std::fs::OpenOptions::new()
        .append(true)
        .open(&mixed)
        .unwrap()
        .write_all(b"not a log line\n{\"json\": \"but not ours\"}\n\xff\xfe garbage\n")
        .unwrap();
    session(&mixed, "json", "beta", &calls());
    session(&other, "text", "gamma", &calls()[..2]);

    let files = [mixed.to_str().unwrap(), other.to_str().unwrap()];
    let (code, out, err) = report(&["--json", files[0], files[1]], "");
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    // Each full session: 6 calls, 5 failures reach the agent (the recovered one does not).
    assert_eq!(r["runs"], 3, "{r:#}");
    assert_eq!(r["calls"], 6 + 6 + 2);
    assert_eq!(r["failures"], 5 + 5 + 2);
    assert_eq!(r["unclassified"], 2 + 2 + 2, "{r:#}");
    assert_eq!(r["timed_out"], 2);
    assert_eq!(r["skipped_lines"], 3);
    assert_eq!(r["by_category"]["validation"], 2);
    assert_eq!(r["by_category"]["transient"], 2 + 2, "{r:#}");
    assert_eq!(r["by_category"]["unknown"], 6);
    assert_eq!(r["retries"]["retried_calls"], 4);
    assert_eq!(r["retries"]["recovered"], 2);
    assert_eq!(r["retries"]["gave_up"], 2);
    let rows = r["by_tool"].as_array().unwrap();
    let find = |server: &str, tool: &str| -> &Value {
        rows.iter()
            .find(|row| row["server"] == server && row["tool"] == tool)
            .unwrap_or_else(|| panic!("{server}/{tool}: {r:#}"))
    };
    assert_eq!(find("alpha", "fail")["failures"], 3);
    assert_eq!(find("beta", "fail")["unclassified"], 2);
    assert_eq!(find("gamma", "fail")["failures"], 2);
    assert_eq!(find("beta", "flaky")["recovered"], 1);
    assert_eq!(find("beta", "hold")["timed_out"], 1);
    let texts = r["unclassified_texts"].as_array().unwrap();
    assert_eq!(texts[0]["shape"], "the frobnicator broke on item <n>");
    assert_eq!(texts[0]["count"], 6);

    // The tables say the same; stdin (`-`) is read like a file.
    let stdin = std::fs::read_to_string(&other).unwrap();
    let (code, out, err) = report(&[files[0], "-"], &stdin);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("12 failed tool calls, 6 unclassified, 2 with no answer in time; 14 calls in 3 finished runs"),
        "{out}"
    );
    assert_eq!(
        row(&out, "Failures by category", &["unknown"]),
        ["unknown", "6", "50"]
    );
    assert_eq!(
        row(&out, "Failures by server and tool", &["beta", "flaky"]),
        ["beta", "flaky", "1", "0", "0", "2", "1"]
    );
    assert_eq!(row(&out, "Failures by rule", &["enoent"])[1], "2");
    assert_eq!(
        row(&out, "Retries", &["recovered after a retry"]),
        ["recovered after a retry", "2"]
    );
    assert!(out.contains("the frobnicator broke on item <n>"), "{out}");
}

#[test]
fn a_file_that_cannot_be_read_is_a_usage_error_and_no_proxy_line_is_said() {
    let (code, _, err) = report(&["/no/such/file.log"], "");
    assert_eq!(code, Some(64));
    assert!(err.contains("/no/such/file.log: cannot read"), "{err}");

    let (code, out, _) = report(&["-"], "hello\nworld\n");
    assert_eq!(code, Some(0));
    assert!(out.contains("2 skipped"), "{out}");
    assert!(
        out.contains("no line of the proxy's log was found"),
        "{out}"
    );
}
