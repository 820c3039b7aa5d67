//! What the proxy's log says of a session at the default level: one line per rewritten failure
//! with every part a field (`--log-format json` too), its text masked, and the statistics at
//! exit as fields.

use serde_json::{json, Value};

use crate::common::{config, Options, Running};

/// A failure whose text shows a secret, and spans two lines.
const SECRET_FAILURE: &str =
    "ENOENT: no such file or directory, open /srv/x\n    (api_key=sk-live-1234567890abcdef)";
const SECRET: &str = "1234567890abcdef";

/// Runs the proxy with `args` (and retries quick), makes the client's calls, and returns the
/// proxy's stderr once it exited.
fn session(args: &[&str], calls: &[(Value, &str, Value)]) -> String {
    // The fallback model is off, so that a text no rule knows stays unclassified whatever the
    // model learns.
    let (_dir, path) =
        config("fallback_model = false\n[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n");
    let mut all = vec!["--config", path.as_str()];
    all.extend_from_slice(args);
    let mut p = Running::start(Options {
        proxy_args: &all,
        ..Options::default()
    });
    p.initialize();
    for (id, tool, arguments) in calls {
        let answer = p.call(id.clone(), tool, arguments.clone());
        assert_eq!(answer["id"], *id, "{answer}");
    }
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        !stderr.contains(SECRET),
        "a secret reached the log: {stderr}"
    );
    stderr
}

fn failing_call() -> (Value, &'static str, Value) {
    (json!("req-7"), "fail", json!({ "text": SECRET_FAILURE }))
}

/// The JSON log lines whose message is `message`.
fn json_lines(stderr: &str, message: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|v| v["fields"]["message"] == message)
        .collect()
}

#[test]
fn a_rewritten_failure_logs_one_line_with_every_field_at_the_default_level() {
    let stderr = session(&[], &[failing_call()]);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("rewrote a failed tool call"))
        .collect();
    let [line] = lines[..] else {
        panic!("one line per rewritten failure: {stderr}")
    };
    assert!(line.contains(" INFO "), "{line}");
    for field in [
        // The fixture's command is its path: its basename names it.
        "server=\"fixture_upstream\"",
        "tool=\"fail\"",
        "request_id=\"req-7\"",
        "rule=\"enoent\"",
        "category=validation",
        "code=NOT_FOUND",
        "retryable=false",
        "attempts=1",
        // The head of the upstream's own text, on one line, masked.
        "text=\"ENOENT: no such file or directory, open /srv/x (api_key=[REDACTED])\"",
    ] {
        assert!(line.contains(field), "{field} missing: {line}");
    }
}

#[test]
fn in_json_each_part_of_the_line_is_a_field_and_name_names_the_server() {
    let stderr = session(
        &["--log-format", "json", "--name", "files"],
        &[
            failing_call(),
            (json!(8), "fail", json!({"text": "the frobnicator broke"})),
        ],
    );
    let lines = json_lines(&stderr, "rewrote a failed tool call");
    let [first, second] = &lines[..] else {
        panic!("one line per rewritten failure: {stderr}")
    };
    assert_eq!(first["level"], "INFO");
    let fields = &first["fields"];
    assert_eq!(fields["server"], "files", "{first}");
    assert_eq!(fields["tool"], "fail");
    assert_eq!(
        fields["request_id"], "\"req-7\"",
        "the client's id as JSON text"
    );
    assert_eq!(fields["rule"], "enoent");
    assert_eq!(fields["category"], "validation");
    assert_eq!(fields["code"], "NOT_FOUND");
    assert_eq!(fields["retryable"], false);
    assert_eq!(fields["attempts"], 1);
    assert_eq!(
        fields["text"],
        "ENOENT: no such file or directory, open /srv/x (api_key=[REDACTED])"
    );
    // What no rule decided says so.
    assert_eq!(second["fields"]["request_id"], "8");
    assert_eq!(second["fields"]["rule"], "(none)", "{second}");
    assert_eq!(second["fields"]["text"], "the frobnicator broke");
}

#[test]
fn the_text_in_the_line_is_a_head_of_at_most_200_characters() {
    let long = format!("ENOENT: {}", "x".repeat(5000));
    let stderr = session(
        &["--log-format", "json"],
        &[(json!(1), "fail", json!({ "text": long }))],
    );
    let lines = json_lines(&stderr, "rewrote a failed tool call");
    let text = lines[0]["fields"]["text"].as_str().unwrap();
    assert_eq!(text.chars().count(), 200, "{text}");
    assert!(
        text.starts_with("ENOENT: xxx") && text.ends_with('…'),
        "{text}"
    );
}

#[test]
fn a_retry_that_succeeded_names_the_server_and_the_request() {
    let stderr = session(
        &["--log-format", "json", "--name", "flaky-one"],
        &[(json!(3), "flaky", json!({"key": "k", "fails": 1}))],
    );
    let lines = json_lines(&stderr, "a retry succeeded");
    let [line] = &lines[..] else {
        panic!("one line: {stderr}")
    };
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["fields"]["server"], "flaky-one", "{line}");
    assert_eq!(line["fields"]["request_id"], "3");
    assert_eq!(line["fields"]["tool"], "flaky");
    assert_eq!(line["fields"]["attempts"], 2);
    assert!(
        json_lines(&stderr, "rewrote a failed tool call").is_empty(),
        "a failure retried away is not a rewrite: {stderr}"
    );
}

#[test]
fn the_statistics_at_exit_are_fields_with_counts_by_category_rule_and_tool() {
    let calls = [
        failing_call(),
        (json!(2), "fail", json!({"text": "ENOENT: gone"})),
        (
            json!(3),
            "typed_fail",
            json!({"text": "the frobnicator broke"}),
        ),
    ];
    let stderr = session(&["--log-format", "json"], &calls);
    let lines = json_lines(&stderr, "statistics");
    let [stats] = &lines[..] else {
        panic!("one statistics line at exit: {stderr}")
    };
    let fields = &stats["fields"];
    assert_eq!(fields["calls"], 3, "{stats}");
    assert_eq!(fields["rewritten"], 3);
    assert_eq!(fields["validation"], 2);
    assert_eq!(fields["unknown"], 1);
    assert_eq!(fields["transient"], 0);
    assert_eq!(fields["unclassified"], 1);
    let by = |key: &str| -> Value {
        serde_json::from_str(
            fields[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key}: {stats}")),
        )
        .unwrap()
    };
    assert_eq!(by("by_rule"), json!({"enoent": 2, "(none)": 1}));
    assert_eq!(by("by_tool"), json!({"fail": 2, "typed_fail": 1}));

    // The text format shows the same fields.
    let stderr = session(&[], &calls);
    let line = stderr
        .lines()
        .find(|l| l.contains("statistics"))
        .unwrap_or_else(|| panic!("{stderr}"));
    for field in [
        "calls=3",
        "validation=2",
        "unknown=1",
        "rewritten=3",
        r#"by_rule={"(none)":1,"enoent":2}"#,
        r#"by_tool={"fail":2,"typed_fail":1}"#,
    ] {
        assert!(line.contains(field), "{field} missing: {line}");
    }
}
