//! The command line as a user meets it: bad files, usage errors, help, and the demo.

use crate::common;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::errnorm().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_broken_rule_file_names_file_line_col_and_rule_exits_64_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"ok\"\nmatch = \"x\"\ncategory = \"transient\"\n\n\
         [[rule]]\nid = \"broken-regex\"\nmatch = \"(unclosed\"\ncategory = \"transient\"\n",
    )
    .unwrap();
    let marker = dir.path().join("started");
    let (code, stdout, stderr) = run(&[
        "--rules",
        rules.to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(64));
    assert!(stdout.is_empty());
    let expected = format!(
        "{}:8:9: rule 'broken-regex': invalid regex in 'match'",
        rules.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(
        !marker.exists(),
        "the upstream must not start on invalid rules"
    );
}

#[test]
fn a_toml_syntax_error_in_a_rule_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.toml");
    std::fs::write(&rules, "[[rule]]\nid = \"typo\"\ncategory = transient\n").unwrap();
    let (code, _, stderr) = run(&["--rules", rules.to_str().unwrap(), "--", "true"]);
    assert_eq!(code, Some(64));
    assert!(
        stderr.contains(&format!("{}:3:12: rule 'typo':", rules.display())),
        "{stderr}"
    );
}

#[test]
fn a_broken_config_exits_64() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "profile = \"corporate\"\n").unwrap();
    let (code, _, stderr) = run(&["--config", config.to_str().unwrap(), "--", "true"]);
    assert_eq!(code, Some(64));
    assert!(
        stderr.contains(&format!(
            "{}:1:11: unknown variant `corporate`",
            config.display()
        )),
        "{stderr}"
    );
}

#[test]
fn every_problem_of_a_config_is_listed_and_nothing_starts() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"bad\"\nmatch = \"(x\"\ncategory = \"business\"\n",
    )
    .unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        "rules = [\"r.toml\"]\nmax_line_bytes = 10\n\n[redact]\npatterns = [\"(?P<secret>x)?\"]\n\n\
         [env]\n\"PATH=/evil\" = \"x\"\nOK = \"a\\u0000b\"\n",
    )
    .unwrap();
    let marker = dir.path().join("started");
    let (code, _, stderr) = run(&[
        "--config",
        config.to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(!marker.exists(), "nothing starts");
    let c = config.display();
    for expected in [
        format!("{}:3:9: rule 'bad': invalid regex", rules.display()),
        format!("{c}:2:1: max_line_bytes must be at least 1024"),
        format!("{c}:5:1: redaction pattern '(?P<secret>x)?' can match an empty text"),
        format!("{c}:8:1: [env] 'PATH=/evil'"),
        format!("{c}:9:1: [env] 'OK'"),
    ] {
        assert!(
            stderr.contains(&expected),
            "{expected} missing from:\n{stderr}"
        );
    }
}

#[test]
fn usage_errors_exit_64_and_help_exits_0() {
    assert_eq!(run(&["--no-such-flag"]).0, Some(64));
    assert_eq!(run(&[]).0, Some(64), "a command is required");
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("-- <COMMAND>..."), "{stdout}");
    assert!(stdout.contains("Exit codes"), "{stdout}");
    let (code, stdout, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("mcp-errnorm "), "{stdout}");
}

#[test]
fn the_upstream_exit_status_becomes_the_proxys() {
    assert_eq!(run(&["--", "sh", "-c", "exit 7"]).0, Some(7));
}

#[test]
fn the_demo_shows_raw_failures_beside_structured_errors() {
    let (code, stdout, stderr) = run(&["demo"]);
    assert_eq!(code, Some(0), "{stderr}");
    for raw in [
        "ENOENT: no such file or directory",
        "fetch failed",
        "429 Too Many Requests",
        "403 Forbidden",
        "insufficient funds",
        "JSON-RPC error -32602: Unknown tool: send_invoice",
    ] {
        assert!(stdout.contains(raw), "demo lacks '{raw}':\n{stdout}");
    }
    for structured in [
        "\"errorCategory\": \"validation\"",
        "\"errorCategory\": \"transient\"",
        "\"errorCategory\": \"permission\"",
        "\"errorCategory\": \"business\"",
        "\"errorCategory\": \"unknown\"",
        "\"retryAfterSeconds\": 30",
    ] {
        assert!(
            stdout.contains(structured),
            "demo lacks {structured}:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("the same bytes (successes pass untouched)"),
        "{stdout}"
    );
    let (_, enterprise, _) = run(&["demo", "--profile", "enterprise"]);
    assert!(
        enterprise.contains("\"retry_recommended\": true"),
        "{enterprise}"
    );
}

#[test]
fn the_example_config_is_valid_and_shows_the_defaults() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/config.example.toml");
    let (code, _, stderr) = run(&["--config", example, "--", "true"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_servers_command_line_is_logged_with_its_secrets_masked() {
    let out = common::errnorm()
        .arg("--")
        .args(common::fixture_command())
        .arg("postgresql://admin:Sup3rS3cretPw@db.internal/app")
        .args(["--api-key", "CmdApiKey4040abcdef"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("upstream started"), "{stderr}");
    assert!(stderr.contains("admin:[REDACTED]@db.internal"), "{stderr}");
    assert!(!stderr.contains("Sup3rS3cretPw"), "{stderr}");
    // A flag and its value are masked together, as one command line.
    assert!(stderr.contains("--api-key [REDACTED]"), "{stderr}");
}

#[test]
fn a_log_level_that_is_no_level_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    for (level, code) in [("warning", Some(64)), ("mcp_errnorm=debug,warn", Some(0))] {
        std::fs::write(&config, format!("log_level = \"{level}\"\n")).unwrap();
        let out = common::errnorm()
            .args(["check", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), code, "{level}: {stderr}");
        if code == Some(64) {
            assert!(stderr.contains("unknown log level 'warning'"), "{stderr}");
        }
    }
    // From the flag, it is said of the flag, once.
    let (code, _, stderr) = run(&["--log-level", "bogus", "--", "true"]);
    assert_eq!(code, Some(64));
    assert!(
        stderr.contains("--log-level: unknown log level 'bogus'"),
        "{stderr}"
    );
    assert!(!stderr.contains("ignoring"), "{stderr}");
    // From the environment, as from the flag: refused, and said of the variable.
    let from_env = |args: &[&str]| {
        let out = common::errnorm()
            .args(args)
            .env("MCP_ERRNORM_LOG", "loud")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    for args in [&["--", "true"][..], &["check"]] {
        let (code, stderr) = from_env(args);
        assert_eq!(code, Some(64), "{args:?}: {stderr}");
        assert!(
            stderr.contains("MCP_ERRNORM_LOG: unknown log level 'loud'"),
            "{stderr}"
        );
    }
    // A flag's level wins, and the variable is not judged then.
    let (code, stderr) = from_env(&["--log-level", "warn", "--", "true"]);
    assert_eq!(code, Some(0), "{stderr}");
}
