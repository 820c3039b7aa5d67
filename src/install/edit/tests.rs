use super::*;

fn install() -> Action {
    Action::Install(Wrapper {
        program: "/opt/bin/mcp-errnorm".into(),
        launcher: vec![],
        options: vec![],
        name: false,
    })
}

fn install_with(options: &[&str]) -> Action {
    Action::Install(Wrapper {
        program: "/opt/bin/mcp-errnorm".into(),
        launcher: vec![],
        options: options.iter().map(|s| s.to_string()).collect(),
        name: false,
    })
}

fn value(text: &str) -> Value {
    jsonc::parse(text).unwrap().root.to_value(text)
}

#[test]
fn wraps_a_stdio_server_and_keeps_everything_else() {
    let src = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
"fs": {
  "command": "npx",
  "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
  "env": {"A": "1"}
}
  }
}
"#;
    let out = apply(src, &install(), &[]).unwrap();
    assert_eq!(out.servers[0].status, Status::Wrapped);
    let expected = src.replace(
        r#""command": "npx",
  "args": ["-y","#,
        r#""command": "/opt/bin/mcp-errnorm",
  "args": ["--", "npx", "-y","#,
    );
    assert_eq!(out.text, expected);
    let back = apply(&out.text, &Action::Uninstall, &[]).unwrap();
    assert_eq!(back.text, src);
}

#[test]
fn options_go_before_the_dashes() {
    let src =
        r#"{"servers": {"t": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}}}"#;
    let out = apply(src, &install_with(&["--config", "/c.toml"]), &[]).unwrap();
    assert_eq!(
        value(&out.text)["servers"]["t"],
        serde_json::json!({"type": "stdio", "command": "/opt/bin/mcp-errnorm",
            "args": ["--config", "/c.toml", "--", "uvx", "mcp-server-time"]})
    );
    assert_eq!(apply(&out.text, &Action::Uninstall, &[]).unwrap().text, src);
}

#[test]
fn multi_line_args_keep_their_layout() {
    let src = "{\n\t\"mcpServers\": {\n\t\t\"x\": {\n\t\t\t\"command\": \"node\",\n\t\t\t\"args\": [\n\t\t\t\t\"server.js\"\n\t\t\t]\n\t\t}\n\t}\n}";
    let out = apply(src, &install(), &[]).unwrap();
    assert!(
        out.text.contains(
            "\"args\": [\n\t\t\t\t\"--\",\n\t\t\t\t\"node\",\n\t\t\t\t\"server.js\"\n\t\t\t]"
        ),
        "{}",
        out.text
    );
    assert_eq!(apply(&out.text, &Action::Uninstall, &[]).unwrap().text, src);
}

#[test]
fn hand_grouped_args_keep_their_separators() {
    let src = "{\"servers\": {\"g\": {\"command\": \"docker\", \"args\": [\n  \"run\", \"-i\",\n  \"-e\", \"TOKEN\",\n  \"image\",\n]}}}";
    let out = apply(src, &install_with(&["--config", "/c"]), &[]).unwrap();
    assert!(
        out.text.contains(
            "[\n  \"--config\", \"/c\", \"--\", \"docker\", \"run\", \"-i\",\n  \"-e\", \"TOKEN\",\n  \"image\",\n]"
        ),
        "{}",
        out.text
    );
    let again = apply(&out.text, &install_with(&["--config", "/d"]), &[]).unwrap();
    assert_eq!(again.servers[0].status, Status::Rewrapped);
    assert!(again
        .text
        .contains("[\n  \"--config\", \"/d\", \"--\", \"docker\", \"run\""));
    assert_eq!(
        apply(&again.text, &Action::Uninstall, &[]).unwrap().text,
        src
    );
}

#[test]
fn missing_args_are_added_after_command() {
    let src =
        "{\n  \"mcpServers\": {\n    \"x\": {\n      \"command\": \"my-server\"\n    }\n  }\n}\n";
    let out = apply(src, &install(), &[]).unwrap();
    assert!(
        out.text.contains(
            "\"command\": \"/opt/bin/mcp-errnorm\",\n      \"args\": [\"--\", \"my-server\"]\n"
        ),
        "{}",
        out.text
    );
    let back = apply(&out.text, &Action::Uninstall, &[]).unwrap();
    assert_eq!(
        value(&back.text)["mcpServers"]["x"],
        serde_json::json!({"command": "my-server", "args": []})
    );
}

#[test]
fn escapes_and_unicode_survive_the_round_trip() {
    let src = r#"{"mcpServers": {"w": {"command": "C:\\Program Files\\node.exe", "args": ["\u00e9", "a\/b"]}}}"#;
    let out = apply(src, &install(), &[]).unwrap();
    assert_eq!(
        value(&out.text)["mcpServers"]["w"]["args"],
        serde_json::json!(["--", "C:\\Program Files\\node.exe", "é", "a/b"])
    );
    assert_eq!(apply(&out.text, &Action::Uninstall, &[]).unwrap().text, src);
}

#[test]
fn idempotent_and_rewraps_with_new_options() {
    let src = r#"{"mcpServers": {"a": {"command": "x", "args": []}}}"#;
    let once = apply(src, &install(), &[]).unwrap();
    let twice = apply(&once.text, &install(), &[]).unwrap();
    assert_eq!(twice.servers[0].status, Status::AlreadyWrapped);
    assert!(!twice.changed());
    let other = apply(&once.text, &install_with(&["--config", "/c"]), &[]).unwrap();
    assert_eq!(other.servers[0].status, Status::Rewrapped);
    assert_eq!(
        value(&other.text)["mcpServers"]["a"]["args"],
        serde_json::json!(["--config", "/c", "--", "x"])
    );
    assert_eq!(
        apply(&other.text, &Action::Uninstall, &[]).unwrap().text,
        src
    );
}

#[test]
fn rewrapping_keeps_options_set_by_hand_and_replaces_only_the_config() {
    let src = r#"{"mcpServers": {"gh": {"command": "mcp-errnorm", "args": ["--log-file", "/tmp/gh.log", "--config", "/old.toml", "--", "npx", "gh"]}}}"#;
    // No --config given: the server keeps every option it has, only the binary's path moves.
    let plain = apply(src, &install(), &[]).unwrap();
    assert_eq!(plain.servers[0].status, Status::Rewrapped);
    assert_eq!(
        value(&plain.text)["mcpServers"]["gh"]["args"],
        serde_json::json!([
            "--log-file",
            "/tmp/gh.log",
            "--config",
            "/old.toml",
            "--",
            "npx",
            "gh"
        ])
    );
    assert!(!apply(&plain.text, &install(), &[]).unwrap().changed());
    // A new --config takes the old one's place, however the old one was written.
    let eq = src.replace(r#""--config", "/old.toml""#, r#""--config=/old.toml""#);
    for src in [src, eq.as_str()] {
        let config = apply(src, &install_with(&["--config", "/new.toml"]), &[]).unwrap();
        assert_eq!(
            value(&config.text)["mcpServers"]["gh"]["args"],
            serde_json::json!([
                "--log-file",
                "/tmp/gh.log",
                "--config",
                "/new.toml",
                "--",
                "npx",
                "gh"
            ])
        );
    }
}

#[test]
fn a_comment_ending_in_non_ascii_before_command_is_fine() {
    for comment in ["// café", "// café\u{a0}", "/* 東京 */"] {
        let src = format!("{{\n  \"mcpServers\": {{\n    \"a\": {{\n      {comment}\n      \"command\": \"x\"\n    }}\n  }}\n}}\n");
        let out = apply(&src, &install(), &[]).unwrap();
        assert_eq!(
            value(&out.text)["mcpServers"]["a"]["args"],
            serde_json::json!(["--", "x"])
        );
        assert_eq!(
            apply(&out.text, &Action::Uninstall, &[])
                .unwrap()
                .text
                .replace(",\n      \"args\": []", ""),
            src
        );
    }
}

#[test]
fn the_backup_is_restored_only_when_nothing_else_changed() {
    let original = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://h"}}}"#;
    let installed = apply(original, &install(), &[]).unwrap().text;
    assert!(restores_backup(&installed, original, None));
    let edited = installed.replace("https://h", "https://other");
    assert!(!restores_backup(&edited, original, None));
    // A backup that is itself wrapped is never restored.
    assert!(!restores_backup(&installed, &installed, None));
}

#[test]
fn crlf_files_get_crlf() {
    let src = "{\r\n  \"mcpServers\": {\r\n    \"x\": {\r\n      \"command\": \"s\"\r\n    }\r\n  }\r\n}\r\n";
    let out = apply(src, &install(), &[]).unwrap();
    assert!(
        out.text
            .contains("\"/opt/bin/mcp-errnorm\",\r\n      \"args\": [\"--\", \"s\"]\r\n"),
        "{:?}",
        out.text
    );
}

#[test]
fn whole_edit_is_minimal() {
    let e = whole_edit("abcXYdef", "abcZdef");
    assert_eq!((e.range, e.text.as_str()), (3..5, "Z"));
    let e = whole_edit("aaa", "aaaa");
    assert_eq!((e.range, e.text.as_str()), (3..3, "a"));
    let e = whole_edit("é1é", "é2é");
    assert_eq!((e.range, e.text.as_str()), (2..3, "2"));
}

#[test]
fn wrapped_detection() {
    let dashes = [Value::from("--"), Value::from("x")];
    assert!(is_wrapped("/usr/local/bin/mcp-errnorm", &dashes, None));
    assert!(is_wrapped("C:\\bin\\MCP-ERRNORM.EXE", &dashes, None));
    assert!(is_wrapped("mcp-errnorm", &dashes, None));
    assert!(!is_wrapped("mcp-errnorm", &[Value::from("demo")], None));
    assert!(!is_wrapped("/bin/mcp-errnorm-fork", &dashes, None));
    // This binary under another name (a release download, a renamed copy).
    let own = Some("/opt/errnorm-x86_64");
    assert!(is_wrapped("/opt/errnorm-x86_64", &dashes, own));
    assert!(!is_wrapped(
        "/opt/errnorm-x86_64",
        &[Value::from("demo")],
        own
    ));
}

#[test]
fn remote_and_commandless_servers_are_left_alone() {
    let src = r#"{"mcpServers": {
        "a": {"url": "https://x/mcp"},
        "b": {"type": "sse", "command": "ignored"},
        "c": {"serverUrl": "https://y/sse"},
        "d": {"type": "stdio"}}}"#;
    let out = apply(src, &install(), &[]).unwrap();
    let statuses: Vec<_> = out.servers.iter().map(|s| s.status.clone()).collect();
    assert_eq!(
        statuses,
        [
            Status::Remote,
            Status::Remote,
            Status::Remote,
            Status::NoCommand
        ]
    );
    assert!(!out.changed());
}

#[test]
fn selection_and_claude_code_projects() {
    let src = r#"{"numStartups": 3, "mcpServers": {"a": {"command": "x"}},
        "projects": {"/w": {"allowedTools": [], "mcpServers": {"b": {"command": "y", "args": ["1"]}}},
                     "/v": {"history": []}}}"#;
    let out = apply(src, &install(), &["b".to_string()]).unwrap();
    assert_eq!(out.servers[0].status, Status::NotSelected);
    assert_eq!(out.servers[1].table, "projects[\"/w\"].mcpServers");
    assert_eq!(out.servers[1].status, Status::Wrapped);
    let v = value(&out.text);
    assert_eq!(v["mcpServers"]["a"]["command"], "x");
    assert_eq!(
        v["projects"]["/w"]["mcpServers"]["b"]["args"],
        serde_json::json!(["--", "y", "1"])
    );
}

#[test]
fn comments_outside_args_are_kept_inside_refused() {
    let src = "{\n  // mine\n  \"servers\": {\n    \"t\": { \"command\": \"uvx\", /* keep */ \"args\": [\"a\",], },\n  },\n}\n";
    let out = apply(src, &install(), &[]).unwrap();
    assert!(out.text.contains("// mine") && out.text.contains("/* keep */"));
    assert!(
        out.text.contains("\"args\": [\"--\", \"uvx\", \"a\",]"),
        "{}",
        out.text
    );
    assert_eq!(apply(&out.text, &Action::Uninstall, &[]).unwrap().text, src);
    let inside = "{\"servers\": {\"t\": {\"command\": \"u\", \"args\": [\"a\", // no\n \"b\"]}}}";
    let e = apply(inside, &install(), &[]).unwrap_err();
    assert!(
        e.message.contains("servers.t: a comment inside \"args\""),
        "{e}"
    );
}

#[test]
fn broken_and_unknown_files_are_errors() {
    let e = apply("{\"mcpServers\": {", &install(), &[]).unwrap_err();
    assert!(e.message.contains("not valid JSON"), "{e}");
    let e = apply("{\"editor.fontSize\": 12}", &install(), &[]).unwrap_err();
    assert!(
        e.message.contains("no \"mcpServers\" or \"servers\""),
        "{e}"
    );
    let e = apply("[1]", &install(), &[]).unwrap_err();
    assert!(e.message.contains("not a JSON object"), "{e}");
    let e = apply("{\"mcpServers\": []}", &install(), &[]).unwrap_err();
    assert!(e.message.contains("\"mcpServers\" is not an object"), "{e}");
    let e = apply(
        "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"-y\"}}}",
        &install(),
        &[],
    )
    .unwrap_err();
    assert_eq!(e.message, "mcpServers.a: \"args\" is not an array");
}

fn install_via(program: &str, launcher: &[&str], options: &[&str]) -> Action {
    Action::Install(Wrapper {
        program: program.into(),
        launcher: launcher.iter().map(|s| s.to_string()).collect(),
        options: options.iter().map(|s| s.to_string()).collect(),
        name: false,
    })
}

fn first_server(text: &str) -> (Value, Value) {
    let v = value(text);
    let s = &v["mcpServers"]["time"];
    (s["command"].clone(), s["args"].clone())
}

#[test]
fn runner_wrapped_servers_are_recognised() {
    let args = |a: &[&str]| a.iter().map(|s| Value::from(*s)).collect::<Vec<_>>();
    let npx = args(&["-y", "mcp-errnorm@0.1.0", "--", "uvx", "mcp-server-time"]);
    assert!(is_wrapped("npx", &npx, None));
    assert_eq!(runner_prefix("npx", &npx), Some(2));
    let uvx = args(&["mcp-errnorm@0.1.0", "--log-file", "/l", "--", "x"]);
    assert!(is_wrapped("/usr/bin/uvx", &uvx, None));
    assert_eq!(runner_prefix("/usr/bin/uvx", &uvx), Some(1));
    let pipx = args(&[
        "run",
        "--spec",
        "mcp-errnorm==0.1.0",
        "mcp-errnorm",
        "--",
        "x",
    ]);
    assert_eq!(runner_prefix("pipx", &pipx), Some(4));
    assert!(is_wrapped("pipx", &pipx, None));
    let from = args(&["--from=mcp-errnorm==0.1.0", "mcp-errnorm", "--", "x"]);
    assert_eq!(runner_prefix("uvx", &from), Some(2));
    // Other packages through a runner are servers, `--` or not; so is mcp-errnorm after `--`.
    for other in [
        args(&[
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "--",
            "/tmp",
        ]),
        args(&["-y", "mcp-errnorm-fork", "--", "x"]),
        args(&["-y", "some-server", "--", "mcp-errnorm"]),
        args(&["mcp-errnorm@0.1.0", "demo"]),
    ] {
        assert!(!is_wrapped("npx", &other, None), "{other:?}");
    }
    assert_eq!(runner_prefix("node", &npx), None);
}

#[test]
fn installs_through_a_package_runner_and_back() {
    let src = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
    let npx = install_via("npx", &["-y", "mcp-errnorm@0.1.0"], &[]);
    let wrapped = apply(src, &npx, &[]).unwrap();
    assert_eq!(wrapped.servers[0].status, Status::Wrapped);
    assert_eq!(
        first_server(&wrapped.text),
        (
            Value::from("npx"),
            serde_json::json!(["-y", "mcp-errnorm@0.1.0", "--", "uvx", "mcp-server-time"])
        )
    );
    // Again from npx: nothing to do; the same servers are not wrapped twice.
    let again = apply(&wrapped.text, &npx, &[]).unwrap();
    assert_eq!(again.servers[0].status, Status::AlreadyWrapped);
    assert!(!again.changed());

    // A newer version through uvx, with a config: the runner's arguments are replaced, the
    // options set by hand stay.
    let by_hand = wrapped.text.replace(
        r#""mcp-errnorm@0.1.0", "--""#,
        r#""mcp-errnorm@0.1.0", "--log-file", "/tmp/l", "--""#,
    );
    let uvx = install_via("uvx", &["mcp-errnorm@0.2.0"], &["--config", "/c.toml"]);
    let moved = apply(&by_hand, &uvx, &[]).unwrap();
    assert_eq!(moved.servers[0].status, Status::Rewrapped);
    assert_eq!(
        first_server(&moved.text),
        (
            Value::from("uvx"),
            serde_json::json!([
                "mcp-errnorm@0.2.0",
                "--log-file",
                "/tmp/l",
                "--config",
                "/c.toml",
                "--",
                "uvx",
                "mcp-server-time"
            ])
        )
    );

    // Then from an installed binary: the runner goes away.
    let binary = apply(&moved.text, &install(), &[]).unwrap();
    assert_eq!(
        first_server(&binary.text),
        (
            Value::from("/opt/bin/mcp-errnorm"),
            serde_json::json!([
                "--log-file",
                "/tmp/l",
                "--config",
                "/c.toml",
                "--",
                "uvx",
                "mcp-server-time"
            ])
        )
    );

    // Uninstall takes the runner away with the rest: the original bytes come back.
    let back = apply(&wrapped.text, &Action::Uninstall, &[]).unwrap();
    assert_eq!(back.servers[0].status, Status::Unwrapped);
    assert_eq!(back.text, src);
    let back = apply(&moved.text, &Action::Uninstall, &[]).unwrap();
    assert_eq!(back.text, src);
}

#[test]
fn declared_lists_each_server_wrapped_or_not_with_its_own_command() {
    let src = r#"{
  // a comment
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"]},
    "db": {"command": "/opt/bin/mcp-errnorm", "args": ["--log-file", "/l", "--", "uvx", "db"],
           "env": {"PATH": "/x/bin"}},
    "web": {"url": "https://example.com/mcp"},
    "pinned": {"command": "npx", "args": ["-y", "mcp-errnorm@0.1.0", "--", "srv"]},
  },
  "projects": {"/p": {"mcpServers": {"local": {"command": "./run.sh"}}}}
}"#;
    let servers = declared(src, None).unwrap();
    let brief: Vec<(&str, &str, bool, bool, Option<&str>)> = servers
        .iter()
        .map(|s| {
            (
                s.table.as_str(),
                s.name.as_str(),
                s.remote,
                s.wrapped,
                s.inner.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            ("mcpServers", "fs", false, false, None),
            ("mcpServers", "db", false, true, Some("uvx")),
            ("mcpServers", "web", true, false, None),
            ("mcpServers", "pinned", false, true, Some("srv")),
            ("projects[\"/p\"].mcpServers", "local", false, false, None),
        ]
    );
    assert_eq!(servers[1].path_env.as_deref(), Some("/x/bin"));
    assert!(declared("{", None).is_err());
}

fn install_named(options: &[&str]) -> Action {
    Action::Install(Wrapper {
        program: "/opt/bin/mcp-errnorm".into(),
        launcher: vec![],
        options: options.iter().map(|s| s.to_string()).collect(),
        name: true,
    })
}

#[test]
fn each_server_is_named_after_its_key_and_unwrapped_cleanly() {
    let src = r#"{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
  "my \"time\"": {"command": "uvx", "args": ["mcp-server-time"]}
}}"#;
    let out = apply(src, &install_named(&["--config", "/c.toml"]), &[]).unwrap();
    let v = value(&out.text);
    assert_eq!(
        v["mcpServers"]["files"]["args"],
        serde_json::json!([
            "--config",
            "/c.toml",
            "--name",
            "files",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/tmp"
        ])
    );
    assert_eq!(
        v["mcpServers"]["my \"time\""]["args"],
        serde_json::json!([
            "--config",
            "/c.toml",
            "--name",
            "my \"time\"",
            "--",
            "uvx",
            "mcp-server-time"
        ])
    );
    // Installed again: nothing to do; uninstalled: the very bytes of before.
    assert!(
        !apply(&out.text, &install_named(&["--config", "/c.toml"]), &[])
            .unwrap()
            .changed()
    );
    assert_eq!(apply(&out.text, &Action::Uninstall, &[]).unwrap().text, src);
    assert!(restores_backup(&out.text, src, None));
}

#[test]
fn a_server_wrapped_without_a_name_gets_one_and_a_name_given_by_hand_stays() {
    let src = r#"{"mcpServers": {"a": {"command": "mcp-errnorm", "args": ["--", "x"]},
  "b": {"command": "mcp-errnorm", "args": ["--name", "mine", "--", "y"]},
  "c": {"command": "mcp-errnorm", "args": ["--name=mine", "--", "z"]}}}"#;
    let out = apply(src, &install_named(&[]), &[]).unwrap();
    let status: Vec<_> = out.servers.iter().map(|s| s.status.clone()).collect();
    assert_eq!(
        status,
        [Status::Rewrapped, Status::Rewrapped, Status::Rewrapped],
        "the binary's path changed"
    );
    let v = value(&out.text);
    assert_eq!(
        v["mcpServers"]["a"]["args"],
        serde_json::json!(["--name", "a", "--", "x"])
    );
    assert_eq!(
        v["mcpServers"]["b"]["args"],
        serde_json::json!(["--name", "mine", "--", "y"])
    );
    assert_eq!(
        v["mcpServers"]["c"]["args"],
        serde_json::json!(["--name=mine", "--", "z"])
    );
}
