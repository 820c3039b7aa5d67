//! Manners users expect (issue #20, section 3): the config found where it is usually kept,
//! a tip when `--` is forgotten, the rules readable from the binary alone. Every run gets a
//! temporary XDG_CONFIG_HOME and HOME: the real `~/.config` is never read nor written.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::home::{at_home, Output};
use common::BIN;
use serde_json::Value;

/// A temporary home: `xdg` (XDG_CONFIG_HOME, not created) and `home` (HOME).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Home { dir }
    }

    fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// Where the proxy looks for its config by default.
    fn default_config(&self) -> PathBuf {
        self.xdg().join("mcp-errnorm/config.toml")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command.args(args).current_dir(self.dir.path());
        at_home(&mut command, self.dir.path());
        command
    }

    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        output(self.command(args))
    }

    fn run_with_env(&self, config: &Path, args: &[&str]) -> (Option<i32>, String, String) {
        let mut command = self.command(args);
        command.env("MCP_ERRNORM_CONFIG", config);
        output(command)
    }
}

fn output(mut command: Command) -> (Option<i32>, String, String) {
    let out = Output::of(&mut command);
    (out.code, out.stdout, out.stderr)
}

/// A config file at `path` whose one rule file holds the rule `id`.
fn config_with_rule(path: &Path, id: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "rules = [\"rules.toml\"]\n").unwrap();
    std::fs::write(
        path.with_file_name("rules.toml"),
        format!(
            "# Mine.\n[[rule]]\nid = \"{id}\"\nmatch = 'quota of {id} exceeded'\n\
             category = \"business\"\ncode = \"QUOTA\"\n  [[rule.example]]\n  \
             text = \"quota of {id} exceeded\"\n  code = \"QUOTA\"\n"
        ),
    )
    .unwrap();
}

fn rule_ids(home: &Home, args: &[&str], env: Option<&Path>) -> Vec<String> {
    let mut all = vec!["rules", "list", "--json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = match env {
        Some(config) => home.run_with_env(config, &all),
        None => home.run(&all),
    };
    assert_eq!(code, Some(0), "{stderr}");
    stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_config_is_the_flags_then_the_environments_then_the_default_locations() {
    let home = Home::new();
    let (code, _, stderr) = home.run(&["check"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("no config file: embedded defaults"),
        "{stderr}"
    );

    config_with_rule(&home.default_config(), "from-xdg");
    let elsewhere = home.dir.path().join("elsewhere/config.toml");
    config_with_rule(&elsewhere, "from-env");
    let flagged = home.dir.path().join("flagged/config.toml");
    config_with_rule(&flagged, "from-flag");

    let (code, _, stderr) = home.run(&["check"]);
    assert_eq!(code, Some(0), "{stderr}");
    let said = format!(
        "config file: {} (from the default location)",
        home.default_config().display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(rule_ids(&home, &[], None)[0], "from-xdg");

    let (code, _, stderr) = home.run_with_env(&elsewhere, &["check"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("(from MCP_ERRNORM_CONFIG)"), "{stderr}");
    let ids = rule_ids(&home, &[], Some(&elsewhere));
    assert_eq!(ids[0], "from-env");
    assert!(!ids.contains(&"from-xdg".to_owned()));

    let flag = flagged.to_str().unwrap();
    let ids = rule_ids(&home, &["--config", flag], Some(&elsewhere));
    assert_eq!(ids[0], "from-flag");
    assert!(!ids.iter().any(|id| id == "from-env" || id == "from-xdg"));
    let (_, _, stderr) = home.run_with_env(&elsewhere, &["check", "--config", flag]);
    assert!(stderr.contains("(from --config)"), "{stderr}");

    // classify and coverage read it too.
    let (code, stdout, stderr) = home.run(&["classify", "quota of from-xdg exceeded"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("from-xdg"), "{stdout}");
    let failures = home.dir.path().join("failures.jsonl");
    std::fs::write(&failures, "{\"text\":\"quota of from-xdg exceeded\"}\n").unwrap();
    let (code, stdout, stderr) = home.run(&["coverage", failures.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("from-xdg"), "{stdout}");
}

#[test]
fn a_missing_file_named_by_the_environment_is_an_error_not_the_defaults() {
    let home = Home::new();
    config_with_rule(&home.default_config(), "from-xdg");
    let missing = home.dir.path().join("no-such.toml");
    for args in [
        &["check"][..],
        &["rules", "list"],
        &["--", "/bin/sh", "-c", "exit 0"],
    ] {
        let (code, stdout, stderr) = home.run_with_env(&missing, args);
        assert_eq!(code, Some(64), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "MCP_ERRNORM_CONFIG: {} does not exist",
                missing.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
    }
}

#[test]
fn the_proxy_reads_the_default_location_and_runs_without_any_home() {
    let home = Home::new();
    std::fs::create_dir_all(home.default_config().parent().unwrap()).unwrap();
    std::fs::write(home.default_config(), "profile = \"nonsense\"\n").unwrap();
    let (code, _, stderr) = home.run(&["--", "/bin/sh", "-c", "exit 3"]);
    assert_eq!(code, Some(64), "the proxy read it: {stderr}");
    assert!(
        stderr.contains(&home.default_config().display().to_string()),
        "{stderr}"
    );

    // MCP clients may start the proxy with next to no environment: the embedded defaults.
    let mut bare = Command::new(BIN);
    bare.args(["--", "/bin/sh", "-c", "exit 3"])
        .env_clear()
        .stdin(Stdio::null());
    let (code, _, stderr) = output(bare);
    assert_eq!(code, Some(3), "the server's own status: {stderr}");
}

#[test]
fn init_writes_into_the_default_folder_creating_it_and_never_overwrites() {
    let home = Home::new();
    let (code, stdout, stderr) = home.run(&["init"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(home.default_config().is_file(), "{stdout}");
    assert!(home.xdg().join("mcp-errnorm/rules.toml").is_file());
    assert!(stdout.contains("next: mcp-errnorm check"), "{stdout}");
    let (code, stdout, stderr) = home.run(&["check"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("(1 from your files)"), "{stdout}");

    std::fs::write(home.default_config(), "# mine\n").unwrap();
    let (code, _, stderr) = home.run(&["init"]);
    assert_eq!(code, Some(73), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(home.default_config()).unwrap(),
        "# mine\n"
    );

    // --dir still writes elsewhere; without a home to tell the folder, init asks for one.
    let (code, _, stderr) = home.run(&["init", "--dir", "deep/er"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(home.dir.path().join("deep/er/config.toml").is_file());
    let mut bare = Command::new(BIN);
    bare.arg("init")
        .current_dir(home.dir.path())
        .env_clear()
        .stdin(Stdio::null());
    let (code, _, stderr) = output(bare);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("--dir"), "{stderr}");
}

#[test]
fn a_server_command_without_the_separator_gets_a_tip_and_the_usage_code() {
    let home = Home::new();
    let (code, stdout, stderr) = home.run(&["npx", "-y", "@scope/server", "/tmp"]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("unexpected argument 'npx'"), "{stderr}");
    assert!(
        stderr.contains(
            "put '--' before the server's command: mcp-errnorm -- npx -y @scope/server /tmp"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = home.run(&["--profile", "enterprise", "uvx", "mcp-server-time"]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(
        stderr.contains("mcp-errnorm --profile enterprise -- uvx mcp-server-time"),
        "{stderr}"
    );
    // A subcommand's stray argument is not a server's command.
    let (code, _, stderr) = home.run(&["check", "extra"]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(!stderr.contains("put '--'"), "{stderr}");
}

#[test]
fn rules_list_shows_every_rule_in_the_order_tried_in_aligned_columns() {
    let home = Home::new();
    let mine = home.dir.path().join("mine/config.toml");
    config_with_rule(&mine, "mine-first");
    let rules = mine.with_file_name("rules.toml");
    let (code, stdout, stderr) = home.run(&["rules", "list", "--rules", rules.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines[0];
    assert!(header.starts_with("id "), "{header}");
    let tier_at = header.find("tier").unwrap();
    let category_at = header.find("category").unwrap();
    let file_at = header.find("file").unwrap();
    for line in &lines[1..] {
        assert_eq!(line.as_bytes()[tier_at - 1], b' ', "{line}");
        assert_ne!(line.as_bytes()[tier_at], b' ', "tier column: {line}");
        assert_ne!(
            line.as_bytes()[category_at],
            b' ',
            "category column: {line}"
        );
        assert_ne!(line.as_bytes()[file_at], b' ', "file column: {line}");
    }
    assert!(
        lines[1].starts_with("mine-first "),
        "yours first: {}",
        lines[1]
    );
    assert!(
        lines[1].contains(&format!("{}:3", rules.display())),
        "{}",
        lines[1]
    );
    let tls = lines
        .iter()
        .find(|l| l.starts_with("tls-certificate "))
        .unwrap();
    assert!(
        tls.contains("specific") && tls.contains("permission"),
        "{tls}"
    );
    assert!(tls.contains("(embedded) rules/auth.toml:"), "{tls}");

    // As many as check counts, each once; the JSON says the same in the same order.
    let (_, check, _) = home.run(&["check", "--rules", rules.to_str().unwrap()]);
    let count: usize = check.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(lines.len() - 1, count, "{check}");
    let ids = rule_ids(&home, &["--rules", rules.to_str().unwrap()], None);
    assert_eq!(ids.len(), count);
    let listed: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(ids, listed);
    let (_, json, _) = home.run(&["rules", "list", "--json"]);
    let first: Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    for key in ["id", "tier", "category", "code", "file", "line", "user"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
}

#[test]
fn rules_show_prints_a_rule_as_written_with_its_examples() {
    let home = Home::new();
    let (code, stdout, stderr) = home.run(&["rules", "show", "tls-certificate"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("# (embedded) rules/auth.toml:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[[rule]]\nid = \"tls-certificate\"\n"),
        "{stdout}"
    );
    assert!(stdout.contains("[[rule.example]]"), "{stdout}");
    assert!(
        !stdout.contains("auth-credentials"),
        "the next rule: {stdout}"
    );
    // It is TOML.
    let parsed: toml::Value = toml::from_str(&stdout).unwrap();
    assert_eq!(parsed["rule"][0]["id"].as_str(), Some("tls-certificate"));

    config_with_rule(&home.default_config(), "mine");
    let (code, stdout, stderr) = home.run(&["rules", "show", "mine"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("# Mine.\n[[rule]]\nid = \"mine\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  text = \"quota of mine exceeded\""),
        "{stdout}"
    );

    let (code, stdout, stderr) = home.run(&["rules", "show", "no-such-rule"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no rule has the id 'no-such-rule'"),
        "{stderr}"
    );
}
