//! Command-line manners: help with examples for every subcommand, shell completions, the man
//! page, and the log options (`--log-format json`, `--log-file`), which never touch stdout.

use crate::common;

use std::process::Stdio;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::errnorm()
        .args(args)
        .env_remove("MCP_ERRNORM_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SUBCOMMANDS: [&str; 8] = [
    "schema",
    "demo",
    "install",
    "uninstall",
    "completions",
    "man",
    "init",
    "rules",
];

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        "install",
        "uninstall",
        "completions",
        "man",
        "init",
        "rules",
        "schema",
    ] {
        let (code, stdout, _) = run(&[sub, "--help"]);
        assert_eq!(code, Some(0), "{sub}");
        assert!(stdout.contains("Examples:"), "{sub} --help:\n{stdout}");
        assert!(stdout.contains(&format!("mcp-errnorm {sub}")), "{sub}");
    }
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    for sub in SUBCOMMANDS {
        assert!(stdout.contains(sub), "{sub} missing from --help");
    }
    assert!(stdout.contains("--log-format") && stdout.contains("--log-file"));
    assert!(
        stdout.contains("--name <NAME>") && stdout.contains("The server's name in the log"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("mcp-errnorm "));
}

#[test]
fn completions_for_every_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, stdout, stderr) = run(&["completions", shell]);
        assert_eq!(code, Some(0), "{shell}: {stderr}");
        for sub in ["install", "uninstall", "completions", "man"] {
            assert!(stdout.contains(sub), "{shell} completions lack {sub}");
        }
        assert!(stdout.contains("dry-run"), "{shell}");
    }
    let (code, _, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, Some(64), "{stderr}");
}

#[test]
fn the_man_page_is_roff_and_names_the_subcommands() {
    let (code, stdout, _) = run(&["man"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("\n.TH mcp-errnorm 1 "), "{stdout}");
    assert!(stdout.contains("\n.SH SYNOPSIS\n"), "{stdout}");
    for sub in SUBCOMMANDS {
        assert!(stdout.contains(sub), "{sub} missing from the man page");
    }
}

#[test]
fn json_logs_go_to_the_log_file_never_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("proxy.log");
    std::fs::write(&log, "an older line\n").unwrap();
    let (code, stdout, stderr) = run(&[
        "--log-format",
        "json",
        "--log-file",
        log.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.is_empty(), "the log went to the file: {stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("an older line"),
        "appended, not truncated"
    );
    let started = lines
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["fields"]["message"] == "upstream started")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(started["level"], "INFO");
    assert!(started["timestamp"].is_string());
}

#[test]
fn the_servers_stderr_reaches_the_log_file_masked_whatever_the_level_and_stays_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("proxy.log");
    let (code, stdout, stderr) = run(&[
        "--log-format",
        "json",
        "--log-level",
        "error",
        "--log-file",
        log.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo 'connecting to postgres://app:pa55w0rd@db/x' >&2; echo 'fatal: out of cheese' >&2; exit 3",
    ]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr,
        "connecting to postgres://app:[REDACTED]@db/x\nfatal: out of cheese\n"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let from_server: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["fields"]["stream"] == "server stderr")
        .map(|v| v["fields"]["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        from_server,
        [
            "connecting to postgres://app:[REDACTED]@db/x",
            "fatal: out of cheese"
        ],
        "{text}"
    );
}

#[test]
fn log_settings_come_from_the_config_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "log_format = \"json\"\nlog_file = \"proxy.log\"\n").unwrap();
    let (code, stdout, stderr) = run(&["--config", config.to_str().unwrap(), "--", "true"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty() && stderr.is_empty(), "{stdout}{stderr}");
    let text = std::fs::read_to_string(dir.path().join("proxy.log")).unwrap();
    assert!(text.lines().all(|l| l.starts_with('{')), "{text}");

    // Text to stderr is the default; a log file that cannot be opened starts nothing.
    let (code, _, stderr) = run(&["--", "true"]);
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("upstream started") && !stderr.starts_with('{'),
        "{stderr}"
    );
    let marker = dir.path().join("started");
    let (code, _, stderr) = run(&[
        "--log-file",
        dir.path().join("no/such/dir/x.log").to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(64));
    assert!(stderr.contains("cannot open the log file"), "{stderr}");
    assert!(!marker.exists());

    // Why nothing started reaches the log file too, for clients that discard stderr.
    let log = dir.path().join("errors.log");
    let (code, _, _) = run(&[
        "--log-file",
        log.to_str().unwrap(),
        "--",
        "/nonexistent/mcp-server",
    ]);
    assert_eq!(code, Some(69));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("/nonexistent/mcp-server"), "{text}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "profil = 1\n").unwrap();
    let (code, _, _) = run(&[
        "--config",
        bad.to_str().unwrap(),
        "--log-file",
        log.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(code, Some(64));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("unknown field `profil`"), "{text}");
}
