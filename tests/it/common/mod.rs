//! Helpers for running the real binary against the fixture upstream
//! (`examples/fixture_upstream.rs`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub mod home;
pub mod schema;

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-errnorm");

/// The binary under test (`MCP_ERRNORM_BIN`, else this build's), blind to the config of the
/// person running the tests: no `MCP_ERRNORM_CONFIG` or `MCP_ERRNORM_LOG`, and a config folder
/// that does not exist, so a `~/.config/mcp-errnorm/config.toml` of theirs changes no result.
pub fn errnorm() -> Command {
    let bin = std::env::var("MCP_ERRNORM_BIN").unwrap_or_else(|_| BIN.to_owned());
    let mut command = Command::new(bin);
    command
        .env_remove("MCP_ERRNORM_CONFIG")
        .env_remove("MCP_ERRNORM_LOG")
        .env("XDG_CONFIG_HOME", "/nonexistent/mcp-errnorm-tests");
    command
}
/// Long enough for a loaded CI machine; only failing tests ever wait this long.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// The fixture upstream: `examples/fixture_upstream.rs`, so that `cargo test` needs only Rust.
/// An example because `cargo test` builds examples and `cargo install` never installs them; it
/// is built here as well (once per run, a no-op when `cargo test` already did), for the
/// narrower commands that do not build examples (`cargo test --test it faults::`).
pub fn fixture() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build_fixture).clone()
}

/// Builds the fixture example into the target directory of this test binary
/// (`<target>/<profile>/deps/it-*`), with the same profile, and returns its path.
fn build_fixture() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lies in <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("a target directory");
    let path = profile_dir.join("examples/fixture_upstream");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--quiet", "--example", "fixture_upstream"])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => {}
        Some("release") => {
            build.arg("--release");
        }
        Some(other) => {
            build.args(["--profile", other]);
        }
        None => {}
    }
    let built = build.status().map(|s| s.success()).unwrap_or(false);
    assert!(
        built || path.exists(),
        "could not build the fixture upstream: `cargo build --example fixture_upstream`"
    );
    path
}

/// The command that starts the fixture upstream.
pub fn fixture_command() -> Vec<String> {
    vec![fixture().display().to_string()]
}

/// The command that starts one of the fixture's small servers for a single test (see
/// `scenario` in `examples/fixture_upstream.rs`).
pub fn scenario(name: &str) -> Vec<String> {
    vec![fixture().display().to_string(), name.to_owned()]
}

/// The fixture run by `sh -c` inside `script`, where `{fixture}` stands for its command: a
/// server behind a wrapper, as `npx` and `uvx` start them.
pub fn fixture_in_shell(script: &str) -> Vec<String> {
    let script = script.replace("{fixture}", &fixture_command().join(" "));
    vec!["sh".into(), "-c".into(), script]
}

/// A running process (the proxy, or the fixture directly) with its stdout and stderr collected.
pub struct Running {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Vec<u8>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    pub record: PathBuf,
    _dir: tempfile::TempDir,
}

#[derive(Default)]
pub struct Options<'a> {
    pub proxy_args: &'a [&'a str],
    pub env: &'a [(&'a str, &'a str)],
    /// Run the fixture directly, without the proxy (for byte-for-byte comparisons).
    pub direct: bool,
    /// Read nothing of stdout for this long after the start (a client slow to read).
    pub read_after: Duration,
    /// Pause this long after each line read (a client that reads, slowly).
    pub read_pause: Duration,
    /// The server command behind the proxy, instead of the fixture alone (a wrapper around it).
    pub upstream: Option<&'a [String]>,
    /// Close the proxy's stderr at once (a client that does not keep it): writes to it fail.
    pub stderr_closed: bool,
}

impl Running {
    pub fn proxy(args: &[&str]) -> Running {
        Running::start(Options {
            proxy_args: args,
            ..Options::default()
        })
    }

    pub fn start(options: Options) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("record.bin");
        let mut command = if options.direct {
            let fixture = fixture_command();
            let mut c = Command::new(&fixture[0]);
            c.args(&fixture[1..]);
            c
        } else {
            let mut c = errnorm();
            c.args(options.proxy_args).arg("--");
            match options.upstream {
                Some(upstream) => c.args(upstream),
                None => c.args(fixture_command()),
            };
            c
        };
        command
            .env("FIXTURE_RECORD", &record)
            .envs(options.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn");
        let stdin = child.stdin.take();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        let (read_after, read_pause) = (options.read_after, options.read_pause);
        std::thread::spawn(move || {
            std::thread::sleep(read_after);
            loop {
                std::thread::sleep(read_pause);
                let mut line = Vec::new();
                match out.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let closed = options.stderr_closed;
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            if !closed {
                let _ = err.read_to_string(&mut s);
            }
            s
        });
        Running {
            child,
            stdin,
            stdout: rx,
            stderr: Some(stderr),
            record,
            _dir: dir,
        }
    }

    pub fn send(&mut self, line: &str) {
        self.try_send(line).unwrap();
    }

    /// Sends a line to a proxy that may already have ended.
    pub fn try_send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    pub fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string());
    }

    /// The next line on stdout, with its line ending.
    pub fn recv_raw(&mut self) -> Vec<u8> {
        self.stdout
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no line on stdout within {PATIENCE:?}"))
    }

    pub fn recv(&mut self) -> Value {
        let line = self.recv_raw();
        serde_json::from_slice(&line).unwrap_or_else(|e| {
            panic!(
                "stdout line is not JSON ({e}): {}",
                String::from_utf8_lossy(&line)
            )
        })
    }

    /// Nothing more arrives on stdout within `wait`.
    pub fn assert_quiet(&mut self, wait: Duration) {
        match self.stdout.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            Ok(line) => panic!("unexpected line: {}", String::from_utf8_lossy(&line)),
        }
    }

    /// Initializes a 2025-11-25 session and lists tools, consuming the answers.
    pub fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        assert_eq!(self.recv()["id"], "init");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        self.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
        assert_eq!(self.recv()["id"], "list");
    }

    /// Calls a tool and returns the whole answer.
    pub fn call(&mut self, id: Value, tool: &str, arguments: Value) -> Value {
        self.send_json(&serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        }));
        self.recv()
    }

    /// Stops reading the process's stdout, as a client that went away.
    pub fn close_stdout(&mut self) {
        let (_, empty) = mpsc::channel();
        drop(std::mem::replace(&mut self.stdout, empty));
    }

    /// The process's stdin, for writes that may block (from a thread of their own), while
    /// this end goes on reading.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin still open")
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Closes stdin and waits for the exit; returns the status, the time it took and stderr.
    pub fn finish(mut self) -> (ExitStatus, Duration, String) {
        self.close_stdin();
        let start = Instant::now();
        let status = self.wait();
        let took = start.elapsed();
        (status, took, self.join_stderr())
    }

    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "process did not exit within {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every remaining stdout line, after the process exited.
    pub fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        while let Ok(line) = self.stdout.recv_timeout(Duration::from_secs(2)) {
            lines.push(line);
        }
        lines
    }

    pub fn stderr(mut self) -> String {
        self.close_stdin();
        self.join_stderr()
    }

    fn join_stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default()
    }
    pub fn recorded(&self) -> Vec<u8> {
        std::fs::read(&self.record).unwrap_or_default()
    }
}

/// A test that fails before the process exits leaves nothing running.
impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The structured error a rewritten answer carries in `_meta`.
pub fn canonical(answer: &Value) -> &Value {
    &answer["result"]["_meta"]["mcp-errnorm/error"]
}

/// The object the model reads in `content[0]`.
pub fn shown(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in content[0]: {answer}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("content[0] is not JSON ({e}): {text}"))
}

/// A `tools/call` request line.
pub fn call(id: impl Into<Value>, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

/// Bytes as hex, for the fixture's `emit_hex`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Counts the answers per id among `lines`, and checks each is one JSON object.
pub fn answers_by_id(lines: &[Vec<u8>]) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for line in lines {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v.get("result").is_some() || v.get("error").is_some() {
            *seen.entry(v["id"].to_string()).or_insert(0) += 1;
        }
    }
    seen
}

pub fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "the proxy panicked; stderr:\n{stderr}"
    );
}

/// Every id in `ids` answered exactly once.
pub fn assert_each_answered_once(lines: &[Vec<u8>], ids: &[Value]) {
    let seen = answers_by_id(lines);
    for id in ids {
        let n = seen.get(&id.to_string()).copied().unwrap_or(0);
        assert_eq!(
            n,
            1,
            "id {id} answered {n} times; output:\n{}",
            lines
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect::<String>()
        );
    }
}

/// A config file with `text`, in a directory that lives as long as the returned guard.
pub fn config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path.display().to_string())
}
