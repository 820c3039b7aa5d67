//! `mcp-errnorm install` / `uninstall` against realistic copies of each client's config
//! (tests/fixtures/clients/), in a sandbox: HOME, APPDATA, XDG_CONFIG_HOME and the current
//! folder all point into a temp dir, so the real home is never touched.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::home::{at_home, Output as Run};
use common::BIN;
use mcp_errnorm::install::jsonc;
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The binary's path as install writes it.
fn program() -> String {
    Path::new(BIN)
        .canonicalize()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let s = Sandbox {
            dir: tempfile::tempdir().unwrap(),
        };
        for d in ["home", "appdata", "xdg", "work"] {
            fs::create_dir_all(s.dir.path().join(d)).unwrap();
        }
        s
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The user-level app data folder of this OS, as the sandbox sets it.
    fn app_data(&self) -> PathBuf {
        if cfg!(target_os = "macos") {
            self.home().join("Library/Application Support")
        } else if cfg!(windows) {
            self.dir.path().join("appdata")
        } else {
            self.dir.path().join("xdg")
        }
    }

    /// Where `client`'s config goes in the sandbox (the first of its locations).
    fn client_path(&self, client: &str) -> PathBuf {
        match client {
            "claude-desktop" => self.app_data().join("Claude/claude_desktop_config.json"),
            "claude-code" => self.home().join(".claude.json"),
            "claude-code-project" => self.work().join(".mcp.json"),
            "cursor" => self.home().join(".cursor/mcp.json"),
            "vscode" => self.work().join(".vscode/mcp.json"),
            "vscode-user" => self.app_data().join("Code/User/mcp.json"),
            "windsurf" => self.home().join(".codeium/windsurf/mcp_config.json"),
            _ => panic!("unknown client {client}"),
        }
    }

    fn put(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Runs the binary and asserts it succeeded.
    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        run
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_as(Path::new(BIN), args)
    }

    /// Runs the binary through `program` (a link to it, say).
    fn run_as(&self, program: &Path, args: &[&str]) -> Run {
        let mut command = Command::new(program);
        command.args(args).current_dir(self.work());
        Run::of(at_home(&mut command, self.dir.path()))
    }
}

fn backup(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.mcp-errnorm.bak", path.display()))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

fn value(text: &str) -> Value {
    jsonc::parse(text).unwrap().root.to_value(text)
}

/// Every client format: (client, sandbox location, fixture).
const FORMATS: [(&str, &str, &str); 7] = [
    (
        "claude-desktop",
        "claude-desktop",
        "claude_desktop_config.json",
    ),
    ("claude-code", "claude-code", "claude.json"),
    (
        "claude-code",
        "claude-code-project",
        "claude_code_project.mcp.json",
    ),
    ("cursor", "cursor", "cursor_mcp.json"),
    ("vscode", "vscode", "vscode_mcp.json"),
    ("vscode", "vscode-user", "vscode_mcp.json"),
    ("windsurf", "windsurf", "windsurf_mcp_config.json"),
];

/// The server tables of a parsed config, by their report names.
fn tables(v: &Value) -> Vec<(String, serde_json::Map<String, Value>)> {
    let mut out = Vec::new();
    for key in ["mcpServers", "servers"] {
        if let Some(Value::Object(t)) = v.get(key) {
            out.push((key.to_owned(), t.clone()));
        }
    }
    if let Some(Value::Object(projects)) = v.get("projects") {
        for (path, p) in projects {
            if let Some(Value::Object(t)) = p.get("mcpServers") {
                out.push((format!("projects.{path}"), t.clone()));
            }
        }
    }
    out
}

fn is_remote(server: &Value) -> bool {
    server.get("url").is_some()
        || server.get("serverUrl").is_some()
        || matches!(server["type"].as_str(), Some("http" | "sse"))
}

#[test]
fn wraps_every_stdio_server_of_every_format_and_keeps_the_rest() {
    for (client, location, file) in FORMATS {
        let sb = Sandbox::new();
        let path = sb.client_path(location);
        let original = fixture(file);
        sb.put(&path, &original);
        let run = sb.run(&["install", "--client", client]);
        assert_eq!(run.code, Some(0), "{file}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        let before = value(&original);
        let after_text = read(&path);
        let after = value(&after_text);
        let mut wrapped = 0;
        for ((name, old), (_, new)) in tables(&before).iter().zip(tables(&after)) {
            for (server, old) in old {
                let new = &new[server];
                if is_remote(old) {
                    assert_eq!(new, old, "{file}: {name}.{server} is remote");
                    assert!(
                        run.stderr
                            .contains(&format!("{server}: HTTP/SSE server, left alone")),
                        "{}",
                        run.stderr
                    );
                    continue;
                }
                wrapped += 1;
                assert_eq!(new["command"], program(), "{file}: {server}");
                // Named after its key, for the logs.
                let mut expected_args = vec![
                    json!("--name"),
                    json!(server),
                    json!("--"),
                    old["command"].clone(),
                ];
                expected_args.extend(old["args"].as_array().cloned().unwrap_or_default());
                assert_eq!(new["args"], Value::Array(expected_args), "{file}: {server}");
                // Every other key (env, type, envFile, disabledTools...) as it was, in order.
                let others = |v: &Value| -> Vec<(String, Value)> {
                    v.as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| *k != "command" && *k != "args")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                };
                assert_eq!(others(new), others(old), "{file}: {server}");
                assert!(run.stderr.contains(&format!("{server}: wrapped")));
            }
        }
        assert!(wrapped >= 1, "{file}");
        // Outside the servers, the text is untouched: comments, indentation, other keys.
        for line in original.lines() {
            let t = line.trim();
            if t.contains("\"command\"") || t.starts_with("\"args\"") || t.starts_with('"') {
                continue;
            }
            assert!(after_text.contains(line), "{file}: lost line {line:?}");
        }
        let mut stripped_before = before.clone();
        let mut stripped_after = after.clone();
        for v in [&mut stripped_before, &mut stripped_after] {
            let o = v.as_object_mut().unwrap();
            o.remove("mcpServers");
            o.remove("servers");
            if let Some(Value::Object(projects)) = o.get_mut("projects") {
                for p in projects.values_mut() {
                    p.as_object_mut().unwrap().remove("mcpServers");
                }
            }
        }
        assert_eq!(stripped_after, stripped_before, "{file}");
    }
}

#[test]
fn install_then_uninstall_gives_back_the_original_bytes() {
    for (client, location, file) in FORMATS {
        for keep_backup in [true, false] {
            let sb = Sandbox::new();
            let path = sb.client_path(location);
            let original = fixture(file);
            sb.put(&path, &original);
            let config = sb.dir.path().join("errnorm.toml");
            fs::write(&config, "profile = \"enterprise\"\n").unwrap();
            sb.ok(&[
                "install",
                "--client",
                client,
                "--config",
                config.to_str().unwrap(),
            ]);
            let installed = read(&path);
            assert_ne!(installed, original);
            assert!(installed.contains(&serde_json::to_string(config.to_str().unwrap()).unwrap()));
            if !keep_backup {
                fs::remove_file(backup(&path)).unwrap();
            }
            sb.ok(&["uninstall", "--client", client]);
            let restored = read(&path);
            if keep_backup || !original.contains("\"notes\"") {
                assert_eq!(restored, original, "{file} (backup kept: {keep_backup})");
            } else {
                // Without the backup, a server that had no "args" gets an empty one.
                assert_eq!(value(&restored)["mcpServers"]["notes"]["args"], json!([]));
                assert_eq!(
                    restored.replace(",\n      \"args\": []", ""),
                    original,
                    "{file}"
                );
            }
            // The backup still holds the version from before mcp-errnorm; one deleted by
            // hand is made again from what uninstall replaced.
            let expected = if keep_backup { &original } else { &installed };
            assert_eq!(&fs::read_to_string(backup(&path)).unwrap(), expected);
        }
    }
}

#[test]
fn a_second_install_changes_nothing() {
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    let original = fixture("cursor_mcp.json");
    sb.put(&path, &original);
    sb.ok(&["install", "--client", "cursor"]);
    let once = read(&path);
    let run = sb.run(&["install", "--client", "cursor"]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stderr
            .contains("mcpServers.everything: already wrapped, unchanged"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing to change"), "{}", run.stderr);
    assert_eq!(read(&path), once);
    // The backup still holds the original: a run that changes nothing writes nothing.
    assert_eq!(fs::read_to_string(backup(&path)).unwrap(), original);
    // Other options wrap again, never twice.
    let config = sb.dir.path().join("c.toml");
    fs::write(&config, "").unwrap();
    let run = sb.ok(&[
        "install",
        "--client",
        "cursor",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(run.stderr.contains("wrapped again with the new options"));
    let v = value(&read(&path));
    assert_eq!(
        v["mcpServers"]["everything"]["args"],
        json!([
            "--name",
            "everything",
            "--config",
            config.to_str().unwrap(),
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything"
        ])
    );
}

#[test]
fn the_backup_holds_the_original_bytes_and_permissions_are_kept() {
    let sb = Sandbox::new();
    let path = sb.client_path("claude-code");
    let original = fixture("claude.json");
    sb.put(&path, &original);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    }
    let run = sb.ok(&["install", "--client", "claude-code"]);
    assert_eq!(fs::read_to_string(backup(&path)).unwrap(), original);
    assert!(run.stderr.contains(&backup(&path).display().to_string()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&backup(&path)), 0o600, "the backup may hold secrets");
    }
    // No temp file left behind.
    let leftovers: Vec<_> = fs::read_dir(sb.home())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Claude Code: user servers and per-project servers, HTTP/SSE ones left alone.
    let v = value(&read(&path));
    assert_eq!(v["mcpServers"]["time"]["command"], program());
    assert_eq!(
        v["mcpServers"]["sentry"],
        json!({"type": "http", "url": "https://mcp.sentry.dev/mcp"})
    );
    assert_eq!(
        v["projects"]["/home/me/src/shop"]["mcpServers"]["postgres"]["args"][3],
        "npx"
    );
    assert!(run
        .stderr
        .contains("projects[\"/home/me/src/shop\"].mcpServers.postgres: wrapped"));
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let sb = Sandbox::new();
    let path = sb.client_path("claude-desktop");
    let original = fixture("claude_desktop_config.json");
    sb.put(&path, &original);
    let run = sb.ok(&["install", "--client", "claude-desktop", "--dry-run"]);
    assert_eq!(read(&path), original);
    assert!(!backup(&path).exists());
    let label = path.display().to_string();
    assert!(
        run.stdout
            .starts_with(&format!("--- {label}\n+++ {label}\n@@ -")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\n-      \"command\": \"npx\",\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!(
        "\n+      \"command\": {},\n",
        serde_json::to_string(&program()).unwrap()
    )));
    assert!(
        run.stdout
            .contains("\n+        \"--\",\n+        \"npx\",\n         \"-y\",\n"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("dry run: nothing written"));

    // The same for uninstall.
    sb.ok(&["install", "--client", "claude-desktop"]);
    let installed = read(&path);
    let run = sb.run(&["uninstall", "--client", "claude-desktop", "--dry-run"]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("\n+      \"command\": \"npx\",\n"),
        "{}",
        run.stdout
    );
    assert_eq!(read(&path), installed);
}

#[test]
fn only_the_servers_named_are_wrapped_or_unwrapped() {
    let sb = Sandbox::new();
    let path = sb.client_path("windsurf");
    sb.put(&path, &fixture("windsurf_mcp_config.json"));
    let run = sb.ok(&["install", "--client", "windsurf", "--server", "git"]);
    assert!(run
        .stderr
        .contains("mcpServers.puppeteer: not selected, unchanged"));
    let v = value(&read(&path));
    assert_eq!(v["mcpServers"]["git"]["command"], program());
    assert_eq!(v["mcpServers"]["puppeteer"]["command"], "npx");

    sb.ok(&["install", "--client", "windsurf"]);
    sb.ok(&["uninstall", "--client", "windsurf", "--server", "puppeteer"]);
    let v = value(&read(&path));
    assert_eq!(v["mcpServers"]["git"]["command"], program());
    assert_eq!(v["mcpServers"]["puppeteer"]["command"], "npx");
    assert_eq!(
        v["mcpServers"]["puppeteer"]["args"],
        json!(["-y", "@modelcontextprotocol/server-puppeteer"])
    );

    // A name that is nowhere: an error, nothing touched.
    let before = read(&path);
    let run = sb.run(&["uninstall", "--client", "windsurf", "--server", "gti"]);
    assert_eq!(run.code, Some(64));
    assert!(
        run.stderr.contains("no server named 'gti'")
            && run.stderr.contains("git, puppeteer, figma"),
        "{}",
        run.stderr
    );
    assert_eq!(read(&path), before);
}

#[test]
fn vscode_comments_and_trailing_commas_survive() {
    let sb = Sandbox::new();
    let path = sb.client_path("vscode");
    let original = fixture("vscode_mcp.json");
    sb.put(&path, &original);
    sb.ok(&["install", "--client", "vscode"]);
    let text = read(&path);
    for comment in [
        "// MCP servers for this workspace",
        "/* the time server from PyPI */",
        "// asked once, stored by VS Code",
        "// remote: left alone",
    ] {
        assert!(text.contains(comment), "{comment}");
    }
    // Hand-grouped args keep their grouping; tabs stay tabs.
    assert!(text.contains(&format!(
        "\t\t\t\"command\": {},\n\t\t\t\"args\": [\n\t\t\t\t\"--name\", \"github\", \"--\", \"docker\", \"run\", \"-i\", \"--rm\",\n\t\t\t\t\"-e\", \"GITHUB_PERSONAL_ACCESS_TOKEN\",\n",
        serde_json::to_string(&program()).unwrap()
    )), "{text}");
    let v = value(&text);
    assert_eq!(
        v["servers"]["memory"]["dev"],
        json!({"watch": "src/**/*.ts"})
    );
    assert_eq!(v["inputs"][0]["id"], "github-token");
}

#[test]
fn a_broken_or_unknown_file_is_an_error_and_left_untouched() {
    let sb = Sandbox::new();
    for (file, expected) in [
        ("broken.json", ":5:64: expected ',' or ']' (not valid JSON)"),
        (
            "not_a_client_config.json",
            ": not an MCP client config: no \"mcpServers\" or \"servers\" object",
        ),
    ] {
        let path = sb.work().join(file);
        let original = fixture(file);
        fs::write(&path, &original).unwrap();
        for cmd in ["install", "uninstall"] {
            let run = sb.run(&[cmd, "--client", path.to_str().unwrap()]);
            assert_eq!(run.code, Some(64), "{}", run.stderr);
            assert!(
                run.stderr
                    .contains(&format!("{}{expected}", path.display())),
                "{}",
                run.stderr
            );
            assert!(run.stderr.contains("nothing changed"));
            assert_eq!(read(&path), original);
            assert!(!backup(&path).exists());
        }
    }
    // A known client whose file is broken: the same.
    let path = sb.client_path("cursor");
    sb.put(&path, "{\"mcpServers\": {\"a\": {\"command\": 3}}}");
    let run = sb.run(&["install", "--client", "cursor"]);
    assert_eq!(run.code, Some(64));
    assert!(run.stderr.contains(&format!(
        "{}: mcpServers.a: \"command\" is not a string",
        path.display()
    )));
}

#[test]
fn a_file_given_by_path_is_told_by_its_keys() {
    let sb = Sandbox::new();
    let path = sb.dir.path().join("some-client.json");
    fs::write(
        &path,
        "{\"servers\": {\"t\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}}}",
    )
    .unwrap();
    sb.ok(&["install", "--client", path.to_str().unwrap()]);
    let v = value(&read(&path));
    assert_eq!(
        v["servers"]["t"]["args"],
        json!(["--name", "t", "--", "uvx", "mcp-server-time"])
    );
}

#[test]
fn missing_configs_name_the_paths_looked_at() {
    let sb = Sandbox::new();
    let run = sb.run(&["install", "--client", "cursor"]);
    assert_eq!(run.code, Some(64));
    assert!(
        run.stderr
            .contains("no cursor MCP config found; looked at:"),
        "{}",
        run.stderr
    );
    assert!(run
        .stderr
        .contains(&sb.client_path("cursor").display().to_string()));
    assert!(run
        .stderr
        .contains(&sb.work().join(".cursor/mcp.json").display().to_string()));

    let run = sb.run(&["install"]);
    assert_eq!(run.code, Some(64));
    assert!(run
        .stderr
        .contains("no MCP client config found; looked at:"));
    assert!(run
        .stderr
        .contains(&sb.client_path("windsurf").display().to_string()));

    let run = sb.run(&["install", "--client", "claude"]);
    assert_eq!(run.code, Some(64));
    assert!(
        run.stderr
            .contains("claude: neither a client (claude-desktop, claude-code, cursor, vscode, windsurf) nor an existing file"),
        "{}",
        run.stderr
    );
}

#[test]
fn without_client_the_one_client_found_is_used_several_are_an_error() {
    let sb = Sandbox::new();
    let windsurf = sb.client_path("windsurf");
    sb.put(&windsurf, &fixture("windsurf_mcp_config.json"));
    let run = sb.ok(&["install", "--dry-run"]);
    assert!(run.stdout.contains(&windsurf.display().to_string()));

    let cursor = sb.client_path("cursor");
    sb.put(&cursor, &fixture("cursor_mcp.json"));
    let run = sb.run(&["install"]);
    assert_eq!(run.code, Some(64));
    assert!(
        run.stderr.contains("choose one with --client"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&cursor.display().to_string()));
    assert!(!backup(&windsurf).exists() && !backup(&cursor).exists());
}

#[test]
fn a_client_with_two_configs_gets_both() {
    let sb = Sandbox::new();
    let user = sb.client_path("vscode-user");
    let project = sb.client_path("vscode");
    sb.put(&user, &fixture("vscode_mcp.json"));
    sb.put(
        &project,
        "{\"servers\": {\"x\": {\"command\": \"x-mcp\", \"args\": []}}}\n",
    );
    sb.ok(&["install", "--client", "vscode", "--server", "x"]);
    assert_eq!(read(&user), fixture("vscode_mcp.json"));
    assert_eq!(
        value(&read(&project))["servers"]["x"]["args"],
        json!(["--name", "x", "--", "x-mcp"])
    );
}

#[test]
fn an_invalid_proxy_config_is_refused_before_any_change() {
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    sb.put(&path, &fixture("cursor_mcp.json"));
    let config = sb.dir.path().join("bad.toml");
    fs::write(&config, "profil = \"mcp\"\n").unwrap();
    let run = sb.run(&[
        "install",
        "--client",
        "cursor",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(64));
    assert!(
        run.stderr.contains("unknown field `profil`"),
        "{}",
        run.stderr
    );
    assert_eq!(read(&path), fixture("cursor_mcp.json"));
}

#[test]
fn uninstall_keeps_later_edits_and_works_on_hand_wrapped_servers() {
    let sb = Sandbox::new();
    let path = sb.client_path("claude-desktop");
    let original = fixture("claude_desktop_config.json");
    sb.put(&path, &original);
    sb.ok(&["install", "--client", "claude-desktop"]);
    // The user changes something after installing: uninstall unwraps in place, keeping it.
    let edited = fs::read_to_string(&path)
        .unwrap()
        .replace("\"menuBarEnabled\": false", "\"menuBarEnabled\": true");
    fs::write(&path, &edited).unwrap();
    sb.ok(&["uninstall", "--client", "claude-desktop"]);
    let restored = read(&path);
    assert!(restored.contains("\"menuBarEnabled\": true"));
    assert_eq!(
        value(&restored)["mcpServers"]["filesystem"],
        value(&original)["mcpServers"]["filesystem"]
    );

    // Wrapped by hand, as the README shows (a bare `mcp-errnorm` on PATH, with options).
    let hand = sb.dir.path().join("hand.json");
    fs::write(
        &hand,
        "{\"mcpServers\": {\"t\": {\"command\": \"mcp-errnorm\", \"args\": [\"--profile\", \"enterprise\", \"--\", \"uvx\", \"mcp-server-time\"]}}}",
    )
    .unwrap();
    sb.ok(&["uninstall", "--client", hand.to_str().unwrap()]);
    assert_eq!(
        read(&hand),
        "{\"mcpServers\": {\"t\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}}}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_stays_a_symlink() {
    let sb = Sandbox::new();
    let real = sb.dir.path().join("dotfiles/cursor-mcp.json");
    sb.put(&real, &fixture("cursor_mcp.json"));
    let link = sb.client_path("cursor");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    sb.ok(&["install", "--client", "cursor"]);
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        value(&read(&real))["mcpServers"]["everything"]["command"],
        program()
    );
    assert_eq!(
        fs::read_to_string(backup(&link)).unwrap(),
        fixture("cursor_mcp.json")
    );
}

#[test]
fn the_backup_keeps_the_version_from_before_mcp_errnorm() {
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    let original = fixture("cursor_mcp.json");
    sb.put(&path, &original);
    sb.ok(&["install", "--client", "cursor"]);
    let config = sb.dir.path().join("c.toml");
    fs::write(&config, "").unwrap();
    let config = config.to_str().unwrap();
    let run = sb.ok(&["install", "--client", "cursor", "--config", config]);
    assert!(
        run.stderr.contains("from before mcp-errnorm stays in"),
        "{}",
        run.stderr
    );
    assert_eq!(read(&backup(&path)), original, "a rewrap keeps it");
    sb.ok(&["uninstall", "--client", "cursor", "--server", "everything"]);
    sb.ok(&["uninstall", "--client", "cursor"]);
    assert_eq!(read(&backup(&path)), original, "so does an uninstall");
    // A later install over a file the user changed since starts a new backup.
    let edited = read(&path).replace("everything", "everything-else");
    sb.put(&path, &edited);
    sb.ok(&["install", "--client", "cursor"]);
    assert_eq!(read(&backup(&path)), edited);
}

#[test]
fn the_binary_is_written_as_it_was_run_and_known_under_any_name() {
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    let original = fixture("cursor_mcp.json");
    sb.put(&path, &original);
    let bin = sb.dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    // A package manager's stable link to a versioned path: the link is what must be written.
    let stable = bin.join("mcp-errnorm");
    std::os::unix::fs::symlink(program(), &stable).unwrap();
    let run = sb.run_as(&stable, &["install", "--client", "cursor"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let command = |sb: &Sandbox| {
        value(&read(&sb.client_path("cursor")))["mcpServers"]["everything"]["command"].clone()
    };
    assert_eq!(command(&sb), stable.to_str().unwrap());
    sb.ok(&["uninstall", "--client", "cursor"]);
    assert_eq!(read(&path), original);
    // Under another name (a release download): never wrapped twice, and uninstalled.
    let renamed = bin.join("errnorm-x86_64-linux");
    std::os::unix::fs::symlink(program(), &renamed).unwrap();
    for _ in 0..2 {
        let run = sb.run_as(&renamed, &["install", "--client", "cursor"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    assert_eq!(command(&sb), renamed.to_str().unwrap());
    let args = &value(&read(&path))["mcpServers"]["everything"]["args"];
    assert_eq!(
        args.as_array()
            .unwrap()
            .iter()
            .filter(|a| *a == "--")
            .count(),
        1,
        "{args}"
    );
    let run = sb.run_as(&renamed, &["uninstall", "--client", "cursor"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read(&path), original);
}

#[test]
fn run_as_root_the_users_file_stays_theirs() {
    // SAFETY: getuid(2) has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    sb.put(&path, &fixture("cursor_mcp.json"));
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    sb.ok(&["install", "--client", "cursor"]);
    for file in [path.clone(), backup(&path)] {
        let meta = fs::metadata(&file).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (65534, 65534),
            "{}",
            file.display()
        );
    }
}

#[test]
fn a_read_only_config_is_refused_and_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let path = sb.client_path("cursor");
    let original = fixture("cursor_mcp.json");
    sb.put(&path, &original);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let run = sb.run(&["install", "--client", "cursor"]);
    assert_eq!(run.code, Some(64), "{}", run.stderr);
    assert!(run.stderr.contains("read-only"), "{}", run.stderr);
    assert_eq!(read(&path), original);
    assert!(!backup(&path).exists());
    // A dry run only shows.
    let run = sb.run(&["install", "--client", "cursor", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}
