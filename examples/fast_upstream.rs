//! A fast MCP upstream for the benchmark (`scripts/bench.sh`): answers `initialize`,
//! `tools/list`, `ping` and `tools/call` as quickly as a stdio server can, so that what the
//! benchmark measures is the transport and the proxy, never the server.
//!
//! Tools:
//! - `echo`: a small success (`{"content":[{"type":"text","text":"ok"}]}`);
//! - `big` (`bytes`): a success whose text is that many bytes (built once per size, then reused);
//! - `fail` (`text`): an `isError` result with that text (default: a Node `ENOENT` message).
//!
//! Requests are read line by line; answers are buffered and flushed whenever no more input is
//! waiting, as a well-written server does. It parses only the envelope it needs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Arguments,
}

#[derive(Deserialize, Default)]
struct Arguments {
    bytes: Option<usize>,
    text: Option<String>,
}

const DEFAULT_FAILURE: &str = "ENOENT: no such file or directory, open '/srv/app/config.yaml'";

fn main() {
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(64 * 1024, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut big: HashMap<usize, String> = HashMap::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if handle(&line, &mut out, &mut big).is_err() {
            return;
        }
        if input.buffer().is_empty() && out.flush().is_err() {
            return;
        }
    }
    let _ = out.flush();
}

fn handle(
    line: &[u8],
    out: &mut impl Write,
    big: &mut HashMap<usize, String>,
) -> std::io::Result<()> {
    let Ok(request) = serde_json::from_slice::<Request>(line) else {
        return Ok(());
    };
    let (Some(id), Some(method)) = (request.id, request.method) else {
        return Ok(()); // notifications
    };
    let id = id.get();
    out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    out.write_all(id.as_bytes())?;
    match method.as_ref() {
        "initialize" => out.write_all(
            br#","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fast-upstream","version":"1.0.0"}}}"#,
        )?,
        "tools/list" => out.write_all(
            br#","result":{"tools":[{"name":"echo","description":"Answers ok.","inputSchema":{"type":"object"}},{"name":"big","description":"Answers a text of the given size.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}},{"name":"fail","description":"Fails with the given text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}"#,
        )?,
        "ping" => out.write_all(br#","result":{}}"#)?,
        "tools/call" => {
            let params: CallParams = request
                .params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default();
            match params.name.as_str() {
                "echo" => out.write_all(br#","result":{"content":[{"type":"text","text":"ok"}]}}"#)?,
                "big" => {
                    let size = params.arguments.bytes.unwrap_or(1 << 20);
                    let text = big.entry(size).or_insert_with(|| make_text(size));
                    out.write_all(br#","result":{"content":[{"type":"text","text":""#)?;
                    out.write_all(text.as_bytes())?;
                    out.write_all(br#""}]}}"#)?;
                }
                "fail" => {
                    let text = params.arguments.text.as_deref().unwrap_or(DEFAULT_FAILURE);
                    out.write_all(br#","result":{"content":[{"type":"text","text":"#)?;
                    serde_json::to_writer(&mut *out, text)?;
                    out.write_all(br#"}],"isError":true}}"#)?;
                }
                other => {
                    out.write_all(br#","error":{"code":-32602,"message":"#)?;
                    serde_json::to_writer(&mut *out, &format!("Unknown tool: {other}"))?;
                    out.write_all(b"}}")?;
                }
            }
        }
        _ => out.write_all(br#","error":{"code":-32601,"message":"Method not found"}}"#)?,
    }
    out.write_all(b"\n")
}

/// Text that needs no JSON escaping and looks like a file listing rather than one repeated byte.
fn make_text(size: usize) -> String {
    const WORDS: &[&str] = &[
        "src/",
        "main.rs ",
        "lib.rs ",
        "README.md ",
        "config ",
        "0644 ",
        "1970-01-01 ",
        "data ",
    ];
    let mut text = String::with_capacity(size + 16);
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(WORDS[i % WORDS.len()]);
        i += 3;
    }
    text.truncate(size);
    text
}
