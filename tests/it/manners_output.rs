//! Manners users expect (issue #20, the rest): the severity word first in every problem,
//! colour only where a person reads it (`--color`, NO_COLOR, CLICOLOR_FORCE), never in JSON,
//! the protocol or the log file; the schemas, the example config and the man pages from the
//! binary alone; `install` naming each server. Every run gets a temporary XDG_CONFIG_HOME and
//! HOME and none of the colour variables of the machine running the tests.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::home::{at_home, Output as Out};
use common::schema::assert_valid;
use common::{canonical, shown, Running, BIN};
use serde_json::{json, Value};

const ESC: char = '\u{1b}';

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Sandbox { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn put(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(BIN);
        command.args(args).current_dir(self.dir.path());
        at_home(&mut command, self.dir.path()).envs(env.iter().copied());
        command
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Out {
        Out::of(&mut self.command(args, env))
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_with(args, &[])
    }

    /// A rule file with a regex that does not compile (line 3, column 9).
    fn bad_rules(&self) -> PathBuf {
        self.put(
            "bad.toml",
            "[[rule]]\nid = \"x\"\nmatch = \"(unclosed\"\ncategory = \"transient\"\n",
        )
    }
}

/// Bold red `error`, as every coloured problem starts.
const RED_ERROR: &str = "\u{1b}[1m\u{1b}[31merror\u{1b}[0m: ";

#[test]
fn every_problem_starts_with_its_severity_and_is_plain_off_a_terminal() {
    let sb = Sandbox::new();
    let bad = sb.bad_rules();
    let bad = bad.to_str().unwrap();
    let located = format!("error: {bad}:3:9: rule 'x': invalid regex in 'match'");

    // check, classify, the rule tools: exit 64, the problem as rustc would say it.
    for args in [
        &["check", "--rules", bad][..],
        &["classify", "--rules", bad, "x"],
        &["rules", "list", "--rules", bad],
    ] {
        let out = sb.run(args);
        assert_eq!(out.code, Some(64), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.lines().any(|l| l.starts_with(&located)),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains(ESC), "{args:?}: {:?}", out.stderr);
        assert!(!out.stderr.contains("error: error:"), "{}", out.stderr);
    }

    // The proxy: nothing started, every line of why starting with its severity.
    let out = sb.run(&["--rules", bad, "--", "true"]);
    assert_eq!(out.code, Some(64), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines[0], "error: invalid configuration, nothing started:");
    assert!(lines[1].starts_with(&located), "{}", out.stderr);

    // A config file with a typo: config loading says it the same way.
    let config = sb.put("config.toml", "profil = \"mcp\"\n");
    let out = sb.run(&["check", "--config", config.to_str().unwrap()]);
    assert_eq!(out.code, Some(64));
    assert!(
        out.stderr.contains(&format!(
            "error: {}:1:1: unknown field `profil`",
            config.display()
        )),
        "{}",
        out.stderr
    );

    // What can be read past is a warning: coverage counts an unreadable line and goes on.
    let records = sb.put("failures.jsonl", "not json\n{\"text\": \"ENOENT: x\"}\n");
    let out = sb.run(&["coverage", records.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!(
            "warning: {}:1: not a failure record",
            records.display()
        )),
        "{}",
        out.stderr
    );

    // Errors that are no file's problem too; rules show names no tool in its message.
    let out = sb.run(&["rules", "show", "no-such-rule"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .starts_with("error: no rule has the id 'no-such-rule'"),
        "{}",
        out.stderr
    );
}

#[test]
fn color_always_colours_the_severity_even_with_no_color_and_never_wins_over_force() {
    let sb = Sandbox::new();
    let bad = sb.bad_rules();
    let bad = bad.to_str().unwrap();
    let coloured = |out: &Out| {
        out.stderr
            .contains(&format!("{RED_ERROR}{bad}:3:9: rule 'x'"))
    };
    let plain = |out: &Out| !out.stderr.contains(ESC) && out.stderr.contains("error: ");

    // Before the subcommand, after it, `=` or not: the same option.
    for args in [
        &["--color", "always", "check", "--rules", bad][..],
        &["check", "--rules", bad, "--color=always"],
    ] {
        let out = sb.run(args);
        assert_eq!(out.code, Some(64), "{args:?}: {}", out.stderr);
        assert!(coloured(&out), "{args:?}: {:?}", out.stderr);
    }
    // --color always wins over NO_COLOR.
    let out = sb.run_with(
        &["--color", "always", "check", "--rules", bad],
        &[("NO_COLOR", "1")],
    );
    assert!(coloured(&out), "{:?}", out.stderr);
    // auto (the default), off a terminal: none; CLICOLOR_FORCE asks for it anyway...
    assert!(plain(&sb.run(&["check", "--rules", bad])));
    let out = sb.run_with(&["check", "--rules", bad], &[("CLICOLOR_FORCE", "1")]);
    assert!(coloured(&out), "{:?}", out.stderr);
    // ...but NO_COLOR (any value but the empty one) wins over it, and --color never over both.
    let force_and_no = [("CLICOLOR_FORCE", "1"), ("NO_COLOR", "yes")];
    assert!(plain(
        &sb.run_with(&["check", "--rules", bad], &force_and_no)
    ));
    let out = sb.run_with(
        &["check", "--rules", bad],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")],
    );
    assert!(
        coloured(&out),
        "an empty NO_COLOR is no NO_COLOR: {:?}",
        out.stderr
    );
    let out = sb.run_with(
        &["--color", "never", "check", "--rules", bad],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(plain(&out), "{:?}", out.stderr);

    // The proxy's own errors too (stderr, for people); its stdout is the protocol's.
    let out = sb.run(&["--color", "always", "--rules", bad, "--", "true"]);
    assert_eq!(out.code, Some(64));
    assert!(
        out.stderr
            .starts_with(&format!("{RED_ERROR}invalid configuration")),
        "{:?}",
        out.stderr
    );
    assert!(out.stdout.is_empty());

    // The check summary: green when all is well.
    let out = sb.run(&["--color", "always", "check"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("\u{1b}[1m\u{1b}[32m") && out.stdout.contains("examples passed"),
        "{:?}",
        out.stdout
    );
    assert!(!sb.run(&["check"]).stdout.contains(ESC));

    // clap's own help and errors follow the same choice.
    let help = sb.run(&["--color", "always", "--help"]);
    assert_eq!(help.code, Some(0));
    assert!(help.stdout.contains(ESC), "{:?}", help.stdout);
    let help = sb.run_with(&["--help"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!help.stdout.contains(ESC), "{:?}", help.stdout);
    let wrong = sb.run(&["check", "--color", "sometimes"]);
    assert_eq!(wrong.code, Some(64));
    assert!(
        wrong
            .stderr
            .contains("invalid value 'sometimes' for '--color <WHEN>'")
            && !wrong.stderr.contains(ESC),
        "{}",
        wrong.stderr
    );
}

#[test]
fn json_the_protocol_and_the_log_file_are_never_coloured() {
    let sb = Sandbox::new();
    let everything = [("CLICOLOR_FORCE", "1")];
    let out = sb.run_with(
        &[
            "--color",
            "always",
            "classify",
            "HTTP 429 Too Many Requests",
        ],
        &everything,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!out.stdout.contains(ESC));
    let error: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(error["errorCode"], "RATE_LIMITED");
    let out = sb.run_with(
        &["--color", "always", "rules", "list", "--json"],
        &everything,
    );
    assert!(!out.stdout.contains(ESC));
    for line in out.stdout.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let out = sb.run(&["--color", "always", "schema", "mcp"]);
    assert!(!out.stdout.contains(ESC));

    // Proxy mode: what the server writes on stdout arrives as it was, the log file is plain.
    let log = sb.path("proxy.log");
    let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error"}}"#;
    let script = format!("echo '{line}'; echo 'error: the server says' >&2");
    let out = sb.run_with(
        &[
            "--color",
            "always",
            "--log-level",
            "debug",
            "--log-file",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        &everything,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, format!("{line}\n"));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("upstream started"), "{logged}");
    assert!(!logged.contains(ESC), "{logged:?}");
    // The server's own stderr is passed on as it wrote it, not painted by us.
    assert_eq!(out.stderr, "error: the server says\n");
}

#[test]
fn install_dry_run_colours_its_diff_only_when_asked_and_names_each_server() {
    let sb = Sandbox::new();
    let original = "{\n  \"mcpServers\": {\n    \"time\": {\n      \"command\": \"uvx\",\n      \
                    \"args\": [\"mcp-server-time\"]\n    }\n  }\n}\n";
    let config = sb.put("mcp.json", original);
    let client = config.to_str().unwrap();

    let plain = sb.run(&["install", "--client", client, "--dry-run"]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert!(!plain.stdout.contains(ESC));
    assert!(
        plain.stdout.contains("\n-      \"command\": \"uvx\",\n"),
        "{}",
        plain.stdout
    );
    assert!(
        plain
            .stdout
            .contains("\"--name\", \"time\", \"--\", \"uvx\", \"mcp-server-time\"]"),
        "{}",
        plain.stdout
    );

    let coloured = sb.run(&[
        "--color",
        "always",
        "install",
        "--client",
        client,
        "--dry-run",
    ]);
    assert_eq!(coloured.code, Some(0), "{}", coloured.stderr);
    let out = &coloured.stdout;
    assert!(
        out.contains("\u{1b}[31m-      \"command\": \"uvx\",\u{1b}[0m\n"),
        "{out:?}"
    );
    assert!(out.contains("\u{1b}[32m+      \"command\": "), "{out:?}");
    assert!(out.contains("\u{1b}[36m@@ -"), "{out:?}");
    // The same diff once the colour is taken out.
    let stripped = strip(out);
    assert_eq!(stripped, plain.stdout);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        original,
        "a dry run"
    );

    // The round trip: named on install, the very bytes of before on uninstall.
    assert_eq!(sb.run(&["install", "--client", client]).code, Some(0));
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let args = &installed["mcpServers"]["time"]["args"];
    assert_eq!(args[0], "--name");
    assert_eq!(args[1], "time");
    assert_eq!(args[2], "--");
    assert_eq!(sb.run(&["uninstall", "--client", client]).code, Some(0));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}

/// `text` without its ANSI colour sequences (`ESC [ ... m`).
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == ESC {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn the_schemas_and_the_example_config_come_from_the_binary() {
    let sb = Sandbox::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let printed = |name: &str| -> String {
        let out = sb.run(&["schema", name]);
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        out.stdout
    };
    for (name, file) in [
        ("mcp", "profile-mcp.schema.json"),
        ("enterprise", "profile-enterprise.schema.json"),
        ("canonical", "structured-error.schema.json"),
    ] {
        let on_disk = std::fs::read_to_string(root.join("schema").join(file)).unwrap();
        assert_eq!(printed(name), on_disk, "{name}");
    }
    // Real errors of both profiles, as the proxy writes them, against what the binary prints.
    let validate = |schema: &str, instance: &Value| {
        let schema: Value = serde_json::from_str(&printed(schema)).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{instance}: {errors:?}");
    };
    for profile in ["mcp", "enterprise"] {
        let mut p = Running::proxy(&["--profile", profile]);
        p.initialize();
        let answer = p.call(json!(1), "fail", json!({"text": "503 Service Unavailable"}));
        validate(profile, &shown(&answer));
        validate("canonical", canonical(&answer));
        assert_valid("structured-error.schema.json", canonical(&answer));
    }
    let out = sb.run(&["schema", "xml"]);
    assert_eq!(out.code, Some(64));

    // The example config: the file in the sources, and a config `check` accepts.
    let out = sb.run(&["init", "--print"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        std::fs::read_to_string(root.join("config.example.toml")).unwrap()
    );
    assert!(!sb.path("xdg").exists(), "--print writes nothing");
    let example = sb.put("config.toml", &out.stdout);
    let out = sb.run(&["check", "--config", example.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(sb.run(&["init", "--print", "--dir", "x"]).code, Some(64));
}

/// Every page name the command line has: `mcp-errnorm`, `mcp-errnorm-install`, ...
fn page_names() -> Vec<String> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        out.push(prefix.to_owned());
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &format!("{prefix}-{}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(&mcp_errnorm::cli::Cli::command(), "mcp-errnorm", &mut out);
    out
}

#[test]
fn every_subcommand_has_a_man_page_with_its_environment_and_exit_statuses() {
    let sb = Sandbox::new();
    let dir = sb.path("man/man1");
    let out = sb.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let names = page_names();
    assert!(names.len() > 10 && names.contains(&"mcp-errnorm-rules-list".to_owned()));
    let man = Command::new("man").arg("--version").output().is_ok();
    for name in &names {
        let file = dir.join(format!("{name}.1"));
        let page = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(page.contains(&format!(".TH {name} 1")), "{page}");
        for section in [".SH ENVIRONMENT\n", ".SH \"EXIT STATUS\"\n"] {
            assert!(page.contains(section), "{name} lacks {section}");
        }
        assert!(page.contains("NO_COLOR"), "{name}");
        assert!(page.contains("\\fB64\\fR"), "{name}: usage errors are 64");
        // One page alone, by the subcommand's words: the same text.
        let words: Vec<&str> = name.split('-').skip(2).collect();
        let mut args = vec!["man"];
        args.extend(&words);
        assert_eq!(sb.run(&args).stdout, page, "{name}");
        if man {
            let shown = Command::new("man")
                .args(["-l", file.to_str().unwrap()])
                .env("MANPAGER", "cat")
                .env("PAGER", "cat")
                .env("MANWIDTH", "100")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&shown.stdout);
            assert!(shown.status.success(), "{name}: {shown:?}");
            assert!(
                text.contains("EXIT STATUS") && text.contains("ENVIRONMENT"),
                "{text}"
            );
        }
    }
    let root = std::fs::read_to_string(dir.join("mcp-errnorm.1")).unwrap();
    for var in ["MCP_ERRNORM_CONFIG", "XDG_CONFIG_HOME", "MCP_ERRNORM_LOG"] {
        assert!(root.contains(var), "{var}");
    }
    assert!(
        root.contains("\\fB69\\fR"),
        "the server could not be started"
    );
    let out = sb.run(&["man", "no-such-command"]);
    assert_eq!(out.code, Some(64));
    assert!(
        out.stderr
            .starts_with("error: no subcommand 'no-such-command'"),
        "{}",
        out.stderr
    );
}
