//! `doctor` (issue #20, "see what it did"): in a temporary home with a Claude Desktop and a
//! Cursor config, it finds every server, tells the wrapped ones, looks for their commands, and
//! exits 1 for a wrapped server whose command is nowhere. The real `~/.config` is never read:
//! HOME and XDG_CONFIG_HOME point into the temporary folder, MCP_ERRNORM_CONFIG is cleared.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::home::{at_home, Output};
use crate::common::{self, BIN};

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "xdg", "bin", "work"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let server = dir.path().join("bin/my-server");
        std::fs::write(&server, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        Sandbox { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn claude_desktop(&self) -> PathBuf {
        if cfg!(target_os = "macos") {
            self.path("home/Library/Application Support/Claude/claude_desktop_config.json")
        } else {
            self.path("xdg/Claude/claude_desktop_config.json")
        }
    }

    fn put(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn doctor(&self, args: &[&str], env: &[(&str, &Path)]) -> (Option<i32>, String, String) {
        let path = format!("{}:/usr/bin:/bin", self.path("bin").display());
        let mut command = common::errnorm();
        command
            .arg("doctor")
            .args(args)
            .current_dir(self.path("work"))
            .env("PATH", path);
        let out = Output::of(at_home(&mut command, self.dir.path()).envs(env.iter().copied()));
        (out.code, out.stdout, out.stderr)
    }

    fn doctor_json(&self, env: &[(&str, &Path)]) -> (Option<i32>, Value) {
        let (code, out, err) = self.doctor(&["--json"], env);
        let value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (code, value)
    }
}

fn server<'a>(report: &'a Value, client: &str, name: &str) -> &'a Value {
    report["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["client"] == client)
        .flat_map(|c| c["servers"].as_array().unwrap())
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no server {client}/{name}: {report:#}"))
}

#[test]
fn doctor_finds_the_servers_tells_the_wrapped_ones_and_fails_on_a_missing_command() {
    let sandbox = Sandbox::new();
    sandbox.put(
        &sandbox.claude_desktop(),
        &format!(
            r#"{{"mcpServers": {{
  "good": {{"command": "{BIN}", "args": ["--name", "g", "--", "my-server", "/data"]}},
  "broken": {{"command": "{BIN}", "args": ["--", "no-such-server-anywhere"]}}
}}}}"#
        ),
    );
    sandbox.put(
        &sandbox.path("home/.cursor/mcp.json"),
        r#"{
  // Cursor's own
  "mcpServers": {
    "plain": {"command": "my-server"},
    "web": {"url": "https://example.com/mcp"},
  }
}"#,
    );

    let (code, report) = sandbox.doctor_json(&[]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["config"]["from"], "embedded defaults");
    assert_eq!(report["config"]["valid"], true);
    assert!(report["rules"].as_u64().unwrap() > 50, "{report:#}");
    assert!(report["rule_files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["from"] == "embedded"));

    let good = server(&report, "claude-desktop", "good");
    assert_eq!(good["wrapped"], true);
    assert_eq!(good["proxy"]["found"], BIN);
    assert_eq!(good["command"]["command"], "my-server");
    let mine = sandbox.path("bin/my-server").display().to_string();
    assert_eq!(good["command"]["found"], mine.as_str());
    let broken = server(&report, "claude-desktop", "broken");
    assert_eq!(broken["wrapped"], true);
    assert_eq!(broken["command"]["found"], Value::Null);
    let plain = server(&report, "cursor", "plain");
    assert_eq!(plain["wrapped"], false);
    assert_eq!(plain["command"]["found"], mine.as_str());
    assert_eq!(server(&report, "cursor", "web")["kind"], "remote");

    let problems = report["problems"].as_array().unwrap();
    let [problem] = &problems[..] else {
        panic!("one problem: {report:#}")
    };
    let problem = problem.as_str().unwrap();
    assert!(
        problem.contains("\"broken\"") && problem.contains("no-such-server-anywhere"),
        "{problem}"
    );
    let logs = report["logs"].as_array().unwrap();
    let desktop_logs = logs
        .iter()
        .find(|l| l["client"] == "claude-desktop")
        .unwrap();
    let expected = if cfg!(target_os = "macos") {
        sandbox.path("home/Library/Logs/Claude")
    } else {
        sandbox.path("xdg/Claude/logs")
    };
    assert_eq!(desktop_logs["dir"], expected.display().to_string().as_str());

    // The text says the same, the problem last.
    let (code, text, _) = sandbox.doctor(&[], &[]);
    assert_eq!(code, Some(1));
    let problems_at = text
        .find("\nProblems (1)\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        text[problems_at..].contains("no-such-server-anywhere"),
        "{text}"
    );
    assert!(
        text.contains("no-such-server-anywhere (NOT FOUND)"),
        "{text}"
    );
    assert!(text.contains(&format!("my-server -> {mine}")), "{text}");

    // Fixed: all is well.
    sandbox.put(
        &sandbox.claude_desktop(),
        &format!(
            r#"{{"mcpServers": {{"good": {{"command": "{BIN}", "args": ["--", "my-server"]}}}}}}"#
        ),
    );
    let (code, text, err) = sandbox.doctor(&[], &[]);
    assert_eq!(code, Some(0), "{text}{err}");
    assert!(text.ends_with("No problems found.\n"), "{text}");
}

#[test]
fn doctor_says_which_config_is_in_use_and_why() {
    let sandbox = Sandbox::new();
    let default = sandbox.path("xdg/mcp-errnorm/config.toml");
    sandbox.put(&default, "rules = [\"mine.toml\"]\n");
    sandbox.put(
        &default.with_file_name("mine.toml"),
        "[[rule]]\nid = \"mine\"\nmatch = 'quota exceeded'\ncategory = \"business\"\n\
         code = \"QUOTA\"\n",
    );
    let (code, report) = sandbox.doctor_json(&[]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["config"]["from"], "the default location");
    assert_eq!(
        report["config"]["file"],
        default.display().to_string().as_str()
    );
    let mine = report["rule_files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["from"] == "config")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(mine["rules"], 1);

    // MCP_ERRNORM_CONFIG wins; one that names no file is a problem.
    let elsewhere = sandbox.path("elsewhere.toml");
    sandbox.put(&elsewhere, "[retry]\nattempts = 2\n");
    let (code, report) = sandbox.doctor_json(&[("MCP_ERRNORM_CONFIG", &elsewhere)]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["config"]["from"], "MCP_ERRNORM_CONFIG");
    let missing = sandbox.path("missing.toml");
    let (code, report) = sandbox.doctor_json(&[("MCP_ERRNORM_CONFIG", &missing)]);
    assert_eq!(code, Some(1), "{report:#}");
    assert!(report["problems"][0]
        .as_str()
        .unwrap()
        .contains("missing.toml"));

    // An invalid config is a problem, and the text says where.
    sandbox.put(&elsewhere, "[retry]\nattempts = \"many\"\n");
    let (code, text, _) = sandbox.doctor(&["--config", elsewhere.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("does not load"), "{text}");
    assert!(text.contains("elsewhere.toml"), "{text}");
}
