//! A scriptable MCP upstream for the integration tests (`tests/it`): it fails, crashes, hangs
//! and answers out of order on request, and records every byte it receives. The Rust twin of
//! `tests/fixtures/upstream.py` (which the Node and Python end-to-end tests start), so that
//! `cargo test` needs only Rust; keep the two alike.
//!
//! Why an example: `cargo test` builds examples, `cargo install` never installs them, and its
//! path is known (`target/<profile>/examples/fixture_upstream`); `tests/it/common` builds it
//! first when a narrower command (`cargo test --test it`) did not.
//!
//! Tools (tools/call by name; arguments in parentheses):
//!   echo (any)            success whose text is the arguments as JSON
//!   fail (text)           an isError result with that text
//!   rpc_error (code, message)  a JSON-RPC error
//!   emit (lines)          writes each string of `lines` verbatim as a line; "{ID}" becomes the
//!                         request's id as JSON (so a test can send any answer, notification or
//!                         server-to-client request it likes)
//!   hold (text)           no answer yet; `release` answers every held call, newest first, with
//!                         an isError result of its text
//!   release               answers the held calls, then itself (success)
//!   crash (code)          exits at once with that status, answering nothing
//!   sleep (seconds)       waits, then succeeds
//!   env (name)            success whose text is that environment variable
//!   half_line (code)      writes half a JSON answer line (no newline), then exits with that
//!                         status
//!   emit_hex (lines)      like emit, but each line is hex-encoded bytes (any bytes, even
//!                         invalid UTF-8); the bytes "{ID}" become the request's id as JSON
//!   flaky (key, fails, text, twice, pad), flaky_destructive, flaky_plain
//!                         the first `fails` calls with this key fail (isError, `text`; written
//!                         twice with `twice`), later ones succeed; a progress notification
//!                         first (1 of 2) when the call has a progressToken. flaky is read-only,
//!                         flaky_destructive destructive, flaky_plain unannotated; any other tool
//!                         whose name begins with "flaky" (declared with FIXTURE_EXTRA_TOOLS)
//!                         behaves the same
//!   count (key)           success whose text is how many calls `key` has seen
//!   big (size, error)     a result of about `size` bytes, isError unless error is false
//!   crash_once (marker, code)  exits like crash unless the file `marker` exists; creates it
//!
//! Other requests: initialize, server/discover, tools/list and ping are answered; methods under
//! "x/hang" never are; anything else gets -32601. JSON is written as Python's `json.dumps` with
//! `separators=(",", ":")` writes it (non-ASCII escaped), as the Python twin does.
//!
//! Environment: FIXTURE_RECORD (file that receives every line read, verbatim), FIXTURE_BANNER (a
//! line printed on stdout at start), FIXTURE_STDERR_BANNER (a line printed on stderr at start),
//! FIXTURE_IGNORE_EOF (keep running after stdin closes), FIXTURE_IGNORE_TERM (ignore SIGTERM),
//! FIXTURE_EXTRA_TOOLS (a JSON list of tools appended to tools/list), FIXTURE_DOUBLE_FORK (a
//! file: at start, a grandchild is left behind by a double fork, ignoring SIGTERM and holding
//! the pipes; its pid is written there), FIXTURE_SILENT (read every line, answer nothing).
//! `crash` writes "crashing with status N" on stderr before it exits.
//!
//! With an argument, it is instead one of the small servers a single test needs (see
//! [`scenario`]): `fixture_upstream <scenario>`.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, Read, Write};
use std::time::Duration;

use serde_json::{json, Map, Value};

fn main() {
    if let Some(name) = std::env::args().nth(1) {
        return scenario(&name);
    }
    Fixture::new().run();
}

/// An environment variable set to something (Python's `os.environ.get(name)` is true).
fn env_set(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `value` as Python's `json.dumps(value, separators=(",", ":"))` writes it: compact, keys in
/// their order, every non-ASCII character escaped.
fn dumps(value: &Value) -> String {
    ascii_only(&value.to_string())
}

/// As [`dumps`], with Python's default separators (`", "` and `": "`), as `print(json.dumps(x))`
/// writes it.
fn dumps_spaced(value: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    serde::Serialize::serialize(value, &mut ser).expect("a value serializes");
    ascii_only(&String::from_utf8(out).expect("JSON is UTF-8"))
}

/// The formatter of Python's default `json.dumps`: `", "` between items, `": "` after keys.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// JSON text with its non-ASCII characters as `\uXXXX` escapes (surrogate pairs past U+FFFF).
fn ascii_only(json: &str) -> String {
    if json.is_ascii() {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// A request's id as the answer writes it: an integer as it came (however long: Python keeps
/// it exact), anything else as [`dumps`] writes it.
fn id_text(raw: &str) -> String {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = digits.trim_start_matches('0');
        return match (trimmed.is_empty(), raw.starts_with('-')) {
            (true, _) => "0".to_owned(),
            (false, true) => format!("-{trimmed}"),
            (false, false) => trimmed.to_owned(),
        };
    }
    serde_json::from_str::<Value>(raw).map_or_else(|_| raw.to_owned(), |v| dumps(&v))
}

/// Python's `int(x)`: a number truncated, a string of digits read; `default` otherwise.
fn int(value: Option<&Value>, default: i64) -> i64 {
    match value {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(default),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        Some(Value::Bool(b)) => i64::from(*b),
        _ => default,
    }
}

/// Python's `bool(x)`.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python's `str(x)` for what a tool's name can be.
fn python_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "None".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(true)) => "True".to_owned(),
        Some(Value::Bool(false)) => "False".to_owned(),
        Some(other) => other.to_string(),
    }
}

/// Writes to stdout and flushes; a client gone (the pipe closed) ends the process with status
/// 1, as Python's unhandled `BrokenPipeError` does.
fn write_out(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        std::process::exit(1);
    }
}

/// Ends the process at once with `code`, stdout flushed first (Python's `os._exit`).
fn exit_now(code: i64) -> ! {
    let _ = std::io::stdout().flush();
    std::process::exit(code as i32)
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn ignore_sigterm() {
    // SAFETY: setting a signal's disposition to "ignore" touches no memory of this process.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}

/// Double-forks a process that ignores SIGTERM and sleeps, as a daemonizing helper would; its
/// pid is written to `pid_file` (by a rename: a reader never sees half of it).
fn leave_a_grandchild(pid_file: &str) {
    // SAFETY: at start, before any thread: the children run only async-signal-safe calls
    // until they write the file (which is what Python's `os.fork` children do too).
    unsafe {
        if libc::fork() == 0 {
            if libc::fork() == 0 {
                ignore_sigterm();
                let tmp = format!("{pid_file}.tmp");
                let _ = std::fs::write(&tmp, libc::getpid().to_string());
                let _ = std::fs::rename(&tmp, pid_file);
                sleep_forever();
            }
            libc::_exit(0);
        }
        let mut status = 0;
        libc::wait(&mut status);
    }
}

/// The scriptable upstream: its tools, the calls it holds and the counts of `flaky` calls.
struct Fixture {
    tools: Vec<Value>,
    counts: HashMap<String, i64>,
    held: Vec<(String, Value)>,
    record: Option<std::fs::File>,
}

impl Fixture {
    fn new() -> Fixture {
        let tools = json!([
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "fail", "inputSchema": {"type": "object"}},
            {
                "name": "typed_fail",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
            },
            {"name": "rpc_error", "inputSchema": {"type": "object"}},
            {"name": "emit", "inputSchema": {"type": "object"}},
            {"name": "hold", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
            {"name": "flaky", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
            {"name": "flaky_destructive", "inputSchema": {"type": "object"},
             "annotations": {"idempotentHint": true, "destructiveHint": true}},
            {"name": "flaky_plain", "inputSchema": {"type": "object"}},
            {"name": "count", "inputSchema": {"type": "object"}},
            {"name": "crash_once", "inputSchema": {"type": "object"}},
        ]);
        let record = env_set("FIXTURE_RECORD").map(|path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("FIXTURE_RECORD opens")
        });
        Fixture {
            tools: tools.as_array().cloned().unwrap_or_default(),
            counts: HashMap::new(),
            held: Vec::new(),
            record,
        }
    }

    fn run(mut self) {
        if let Some(extra) = env_set("FIXTURE_EXTRA_TOOLS") {
            let extra: Vec<Value> =
                serde_json::from_str(&extra).expect("FIXTURE_EXTRA_TOOLS is a JSON list");
            self.tools.extend(extra);
        }
        if env_set("FIXTURE_IGNORE_TERM").is_some() {
            ignore_sigterm();
        }
        if let Some(pid_file) = env_set("FIXTURE_DOUBLE_FORK") {
            leave_a_grandchild(&pid_file);
        }
        let stdin = std::io::stdin();
        if env_set("FIXTURE_SILENT").is_some() {
            let _ = std::io::copy(&mut stdin.lock(), &mut std::io::sink());
            if env_set("FIXTURE_IGNORE_EOF").is_some() {
                sleep_forever();
            }
            return;
        }
        if let Some(banner) = env_set("FIXTURE_BANNER") {
            write_out(format!("{banner}\n").as_bytes());
        }
        if let Some(banner) = env_set("FIXTURE_STDERR_BANNER") {
            eprintln!("{banner}");
        }
        let mut input = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if let Some(record) = self.record.as_mut() {
                let _ = record.write_all(&line);
            }
            self.handle(&line);
        }
        if env_set("FIXTURE_IGNORE_EOF").is_some() {
            sleep_forever();
        }
    }

    fn send(&self, message: &Value) {
        write_out(format!("{}\n", dumps(message)).as_bytes());
    }

    /// Writes `{"jsonrpc":"2.0","id":<id>,<member>:<value>}` with the id as it came.
    fn answer(&self, id: &str, member: &str, value: &Value) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"{member}\":{}}}\n",
            dumps(value)
        );
        write_out(line.as_bytes());
    }

    fn text_result(&self, id: &str, text: Value, is_error: bool) {
        let mut result = json!({"content": [{"type": "text", "text": text}]});
        if is_error {
            result["isError"] = Value::Bool(true);
        }
        self.answer(id, "result", &result);
    }

    fn handle(&mut self, line: &[u8]) {
        // Notifications, responses to our requests, batches and non-JSON lines are read, not
        // answered.
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let (Some(method), Some(id)) = (message.get("method"), message.get("id")) else {
            return;
        };
        if id.is_null() {
            return;
        }
        let id = id_of(line).unwrap_or_else(|| dumps(id));
        let method = method.as_str().unwrap_or_default();
        let empty = Value::Object(Map::new());
        let params = message
            .get("params")
            .filter(|p| truthy(p))
            .unwrap_or(&empty);
        let server_info = json!({"name": "fixture", "version": "1.0"});
        match method {
            "initialize" => {
                let version = params
                    .get("protocolVersion")
                    .cloned()
                    .unwrap_or_else(|| json!("2025-11-25"));
                let result = json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": server_info,
                });
                self.answer(&id, "result", &result);
            }
            "server/discover" => {
                let result = json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "serverInfo": server_info,
                    "resultType": "complete",
                });
                self.answer(&id, "result", &result);
            }
            "tools/list" => self.answer(&id, "result", &json!({"tools": self.tools})),
            "ping" => self.answer(&id, "result", &json!({})),
            "tools/call" => {
                let arguments = params
                    .get("arguments")
                    .filter(|a| truthy(a))
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                let name = python_str(params.get("name"));
                self.call_tool(&id, &name, &arguments, params);
            }
            m if m.starts_with("x/hang") => {}
            _ => {
                let error = json!({"code": -32601, "message": "Method not found"});
                self.answer(&id, "error", &error);
            }
        }
    }

    /// Answers a `tools/call`: one short arm per tool, in the order of the Python twin's
    /// `call_tool`, so that the two are read side by side (hence its length).
    fn call_tool(&mut self, id: &str, name: &str, args: &Value, params: &Value) {
        let arg = |key: &str| args.get(key);
        let text_or =
            |key: &str, default: &str| arg(key).cloned().unwrap_or_else(|| json!(default));
        if name.starts_with("flaky") {
            return self.flaky(id, name, args, params);
        }
        match name {
            "big" => {
                let size = int(arg("size"), 100_000).max(0) as usize;
                let is_error = arg("error").is_none_or(truthy);
                let text = format!("fetch failed {}", "y".repeat(size));
                self.text_result(id, json!(text), is_error);
            }
            "count" => {
                let key = arg("key").map_or_else(String::new, |k| python_str(Some(k)));
                let n = self.counts.get(&key).copied().unwrap_or(0);
                self.text_result(id, json!(n.to_string()), false);
            }
            "crash_once" => {
                let marker = arg("marker").and_then(Value::as_str).unwrap_or_default();
                if !std::path::Path::new(marker).exists() {
                    let _ = std::fs::File::create(marker);
                    exit_now(int(arg("code"), 3));
                }
                self.text_result(id, json!("survived"), false);
            }
            "fail" | "typed_fail" => self.text_result(id, text_or("text", ""), true),
            "echo" => self.text_result(id, json!(dumps(args)), false),
            "rpc_error" => {
                let error = json!({"code": arg("code").cloned().unwrap_or(json!(-32603)),
                                   "message": text_or("message", "")});
                self.answer(id, "error", &error);
            }
            "emit" => {
                let mut out = Vec::new();
                for line in lines(args) {
                    if let Some(line) = line.as_str() {
                        out.extend_from_slice(line.replace("{ID}", id).as_bytes());
                        out.push(b'\n');
                    }
                }
                write_out(&out);
            }
            "hold" => self.held.push((id.to_owned(), text_or("text", ""))),
            "release" => {
                while let Some((held, text)) = self.held.pop() {
                    self.text_result(&held, text, true);
                }
                self.text_result(id, json!("released"), false);
            }
            "crash" => {
                let code = int(arg("code"), 3);
                let _ = std::io::stdout().flush();
                eprintln!("crashing with status {code}");
                exit_now(code);
            }
            "sleep" => {
                let seconds = match arg("seconds") {
                    Some(Value::Number(n)) => n.as_f64().unwrap_or(1.0),
                    Some(Value::String(s)) => s.trim().parse().unwrap_or(1.0),
                    _ => 1.0,
                };
                std::thread::sleep(Duration::from_secs_f64(seconds.max(0.0)));
                self.text_result(id, json!("slept"), false);
            }
            "env" => {
                let name = arg("name").map_or_else(String::new, |n| python_str(Some(n)));
                let value = std::env::var(name).unwrap_or_else(|_| "<unset>".to_owned());
                self.text_result(id, json!(value), false);
            }
            "half_line" => {
                let head = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"te"
                );
                write_out(head.as_bytes());
                exit_now(int(arg("code"), 5));
            }
            "emit_hex" => {
                let mut out = Vec::new();
                for line in lines(args) {
                    let bytes = line.as_str().map(from_hex).unwrap_or_default();
                    out.extend_from_slice(&replace_bytes(&bytes, b"{ID}", id.as_bytes()));
                    out.push(b'\n');
                }
                write_out(&out);
            }
            _ => {
                let error = json!({"code": -32602, "message": format!("Unknown tool: {name}")});
                self.answer(id, "error", &error);
            }
        }
    }

    /// The `flaky` tools: the first `fails` calls with a key fail, later ones succeed.
    fn flaky(&mut self, id: &str, name: &str, args: &Value, params: &Value) {
        let arg = |key: &str| args.get(key);
        let text_or =
            |key: &str, default: &str| arg(key).cloned().unwrap_or_else(|| json!(default));
        let key = arg("key").map_or_else(|| name.to_owned(), |k| python_str(Some(k)));
        let count = {
            let n = self.counts.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| !t.is_null());
        if let Some(token) = token {
            let progress = json!({"progressToken": token, "progress": 1, "total": 2});
            self.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": progress}),
            );
        }
        if count <= int(arg("fails"), 1) {
            let times = if arg("twice").is_some_and(truthy) {
                2
            } else {
                1
            };
            for _ in 0..times {
                self.text_result(id, text_or("text", "fetch failed"), true);
            }
        } else {
            let pad = "z".repeat(int(arg("pad"), 0).max(0) as usize);
            self.text_result(id, json!(format!("ok after {count} calls{pad}")), false);
        }
    }
}

/// The `lines` argument of `emit` and `emit_hex`.
fn lines(args: &Value) -> Vec<Value> {
    args.get("lines")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The raw text of a message's top-level `id`, so that an integer of any length is written back
/// as it came.
fn id_of(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    Some(id_text(envelope.id?.get()))
}

/// Python's `bytes.fromhex`: pairs of hex digits, spaces between them allowed.
fn from_hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .filter_map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// The small servers single tests need, by name (each was a few lines of Python in its test).
fn scenario(name: &str) {
    match name {
        "silent" => read_to_end(),
        "child-holds-stdin" => child_holds_stdin(),
        "answers-at-the-id" => answers_at_the_id(),
        "long-banner" => long_banner(),
        "notes-after-the-answer" => notes_after_the_answer(22, 8000),
        "long-notes-after-the-answer" => notes_after_the_answer(40, 32_000),
        "dies-mid-line" => dies_mid_line(),
        "leaves-a-flood" => leaves_a_flood(),
        "noise" => loop {
            write_out("noise\n".repeat(100).as_bytes());
        },
        "stderr-lines" => stderr_lines(),
        "closes-its-stdin" => closes_its_stdin(Duration::ZERO),
        "closes-its-stdin-unread" => closes_its_stdin(Duration::from_secs(1)),
        other => panic!("no scenario {other:?}"),
    }
}

/// Reads everything, answers nothing.
fn read_to_end() {
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
}

/// Answers each request with an empty result, after leaving a child (`sleep 30`) that inherits
/// its stdin and never reads it; a call to `exit` ends it with status 5.
fn child_holds_stdin() {
    let _child = std::process::Command::new("sleep").arg("30").spawn();
    for_each_request(|message| {
        if tool_name(message) == Some("exit") {
            exit_now(5);
        }
        answer_empty(message);
    });
}

/// A line of 200,000 `Z` (no message), then a notification; then reads everything.
fn long_banner() {
    let mut out = "Z".repeat(200_000);
    out.push('\n');
    out.push_str(r#"{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after"}}"#);
    out.push('\n');
    write_out(out.as_bytes());
    read_to_end();
}

/// Answers the first request, writes `count` notifications of `size` bytes, exits.
fn notes_after_the_answer(count: usize, size: usize) {
    if let Some(message) = read_request() {
        answer_empty(&message);
        notes(count, size);
    }
}

/// Leaves a child (`sleep 30`) holding its stdout; `cut` writes half of a 200 KB answer and
/// exits with status 4; `hold` is never answered; anything else is, empty.
fn dies_mid_line() {
    let _child = std::process::Command::new("sleep").arg("30").spawn();
    for_each_request(|message| match tool_name(message) {
        Some("cut") => {
            let id = id_text(&message.get("id").map_or("null".into(), Value::to_string));
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            );
            write_out(format!("{head}{}", "x".repeat(200_000)).as_bytes());
            exit_now(4);
        }
        Some("hold") => {}
        _ => answer_empty(message),
    });
}

/// `flood` leaves a child writing `noise` lines to its stdout for ever (until the pipe closes)
/// and exits with status 3; nothing is answered.
fn leaves_a_flood() {
    for_each_request(|message| {
        if tool_name(message) == Some("flood") {
            let me = std::env::current_exe().expect("own path");
            let _child = std::process::Command::new(me).arg("noise").spawn();
            exit_now(3);
        }
    });
}

/// 2,000 lines of 60 bytes on stderr, then reads everything.
fn stderr_lines() {
    let mut err = String::new();
    for i in 0..2000 {
        err.push_str(&format!("server line {i:04} {}\n", "x".repeat(40)));
    }
    let _ = std::io::stderr().write_all(err.as_bytes());
    read_to_end();
}

/// Answers `initialize`, waits `unread` without reading (what comes meanwhile stays in the
/// pipe), closes its stdin, and writes a notification every 0.2 s (until the pipe closes).
fn closes_its_stdin(unread: Duration) {
    let Some(request) = read_request() else {
        return;
    };
    let id = id_text(&request.get("id").map_or("null".into(), Value::to_string));
    let result = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                        "serverInfo": {"name": "deaf", "version": "1"}});
    let answer = format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": {id}, \"result\": {}}}\n",
        dumps_spaced(&result)
    );
    write_out(answer.as_bytes());
    std::thread::sleep(unread);
    // SAFETY: closing our own stdin, which nothing else in this process reads now.
    unsafe {
        libc::close(0);
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "still here"}});
    loop {
        write_out(format!("{}\n", dumps_spaced(&note)).as_bytes());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The next line of stdin as a JSON object, or `None` at its end.
fn read_request() -> Option<Map<String, Value>> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    match serde_json::from_str(&line) {
        Ok(Value::Object(message)) => Some(message),
        _ => None,
    }
}

/// Calls `f` with each request line read, as a JSON object, until stdin ends.
fn for_each_request(mut f: impl FnMut(&Map<String, Value>)) {
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        match serde_json::from_slice(&line) {
            Ok(Value::Object(message)) => f(&message),
            // Python's `json.loads` would raise and end the server.
            _ => std::process::exit(1),
        }
    }
}

fn tool_name(message: &Map<String, Value>) -> Option<&str> {
    message.get("params")?.get("name")?.as_str()
}

/// `{"jsonrpc": "2.0", "id": <id>, "result": {}}`, spaced as Python prints it.
/// Without an id, the process ends (status 1), as Python's `m["id"]` raising does.
fn answer_empty(message: &Map<String, Value>) {
    let Some(id) = message.get("id") else {
        std::process::exit(1);
    };
    let id = id_text(&id.to_string());
    write_out(format!("{{\"jsonrpc\": \"2.0\", \"id\": {id}, \"result\": {{}}}}\n").as_bytes());
}

/// `count` notifications whose data is their number and `size` `x`s.
fn notes(count: usize, size: usize) {
    for i in 0..count {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": format!("{i:02} {}", "x".repeat(size))}});
        write_out(format!("{}\n", dumps_spaced(&note)).as_bytes());
    }
}

/// Reads stdin in chunks and answers each line's first `"id":<digits>` as soon as it is read,
/// before the line's end.
fn answers_at_the_id() {
    let mut input = std::io::stdin().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut answered = false;
    let mut chunk = vec![0u8; 65536];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&chunk[..n]);
        loop {
            if !answered {
                if let Some(id) = first_numeric_id(&pending) {
                    let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
                    write_out(answer.as_bytes());
                    answered = true;
                }
            }
            let Some(end) = pending.iter().position(|&b| b == b'\n') else {
                if answered {
                    pending.clear();
                }
                break;
            };
            pending.drain(..=end);
            answered = false;
        }
    }
}

/// The digits of the first `"id":<digits>` in `bytes`.
fn first_numeric_id(bytes: &[u8]) -> Option<String> {
    let key = b"\"id\":";
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(key.len()).position(|w| w == key) {
        let start = from + at + key.len();
        let digits: Vec<u8> = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .copied()
            .collect();
        if !digits.is_empty() {
            return String::from_utf8(digits).ok();
        }
        from = start;
    }
    None
}
