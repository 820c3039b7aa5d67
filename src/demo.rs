//! `mcp-errnorm demo`: a built-in legacy MCP server that fails the way real ones do, run once
//! directly and once through the proxy, with each raw failure printed beside the structured
//! error the agent receives. Printing to stdout is this module's purpose.
#![allow(clippy::print_stdout)]

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::exit;
use crate::render::{Profile, META_KEY};

/// The calls the demo makes: (tool, arguments).
fn demo_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": "/srv/app/config.yaml"})),
        (
            "fetch_url",
            json!({"url": "https://api.example.com/orders"}),
        ),
        (
            "search_orders",
            json!({"customer": "ACME", "since": "2026-01-01"}),
        ),
        ("delete_record", json!({"table": "invoices", "id": 4711})),
        (
            "transfer_funds",
            json!({"from": "ops", "to": "payroll", "amount": 250}),
        ),
        ("create_invoice", json!({"customer": "ACME", "amount": -5})),
        ("get_weather", json!({"city": "Paris"})),
        ("generate_report", json!({"quarter": "Q3"})),
        ("send_invoice", json!({"id": 4711})),
    ]
}

/// What the legacy server answers a tool call with: a text, as a success or as an `isError`
/// result.
enum Answer {
    Success(String),
    Failure(String),
}

/// The legacy server's answer to each tool; `None` an unknown tool (answered as the Python SDK
/// does, with a JSON-RPC error).
fn legacy_behaviour(tool: &str, args: &Value) -> Option<Answer> {
    let arg = |key: &str| args.get(key).map_or(String::new(), |v| v.to_string());
    use Answer::{Failure, Success};
    Some(match tool {
        "read_file" => Failure(format!(
            "ENOENT: no such file or directory, open {}",
            arg("path").replace('"', "'")
        )),
        "fetch_url" => Failure("fetch failed".into()),
        "search_orders" => Failure("429 Too Many Requests: rate limit exceeded, retry after 30s".into()),
        "delete_record" => Failure("Error: 403 Forbidden - token lacks scope records:write".into()),
        "transfer_funds" => Failure("Transfer rejected: insufficient funds (balance 12.00 < 250.00)".into()),
        "create_invoice" => Failure(
            "Error executing tool create_invoice: 1 validation error for create_invoiceArguments\n\
             amount\n  Input should be greater than 0 [type=greater_than, input_value=-5, input_type=int]"
                .into(),
        ),
        "get_weather" => Success(format!("Weather in {}: 14°C, light rain", arg("city").trim_matches('"'))),
        // Says nothing a rule can read, and the model reads it below `MODEL_MIN_CONFIDENCE`:
        // the demo's `unknown` (the CLI test sees to it).
        "generate_report" => Failure("Renderer status 0x2a".into()),
        _ => return None,
    })
}

/// The built-in legacy server: MCP on stdio, line by line, and a start-up banner on stdout as
/// careless servers print one.
pub fn serve() -> i32 {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = writeln!(out, "legacy-demo server 0.1 listening on stdio");
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (request.get("id"), request["method"].as_str()) else {
            continue; // notifications need no answer
        };
        let answer = match method {
            "initialize" => json!({"result": {
                "protocolVersion": request["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-demo", "version": "0.1.0"}
            }}),
            "tools/list" => {
                let tools: Vec<Value> = demo_calls()
                    .iter()
                    .filter(|(name, _)| legacy_behaviour(name, &Value::Null).is_some())
                    .map(|(name, _)| json!({"name": name, "inputSchema": {"type": "object"}}))
                    .collect();
                json!({"result": {"tools": tools}})
            }
            "tools/call" => {
                let tool = request["params"]["name"].as_str().unwrap_or_default();
                let args = &request["params"]["arguments"];
                match legacy_behaviour(tool, args) {
                    Some(Answer::Success(text)) => {
                        json!({"result": {"content": [{"type": "text", "text": text}]}})
                    }
                    Some(Answer::Failure(text)) => json!({"result": {
                        "content": [{"type": "text", "text": text}], "isError": true
                    }}),
                    None => {
                        json!({"error": {"code": -32602, "message": format!("Unknown tool: {tool}")}})
                    }
                }
            }
            "ping" => json!({"result": {}}),
            _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
        };
        let mut message = answer;
        message["jsonrpc"] = json!("2.0");
        message["id"] = id.clone();
        if writeln!(out, "{message}")
            .and_then(|_| out.flush())
            .is_err()
        {
            break;
        }
    }
    0
}

/// Runs one session against `command`: initialize, then every demo call. Returns the answers
/// to the calls, by call index.
fn session(command: &mut Command) -> std::io::Result<Vec<Value>> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcp-errnorm-demo", "version": env!("CARGO_PKG_VERSION")}
    }});
    writeln!(stdin, "{init}")?;
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )?;
    for (i, (tool, args)) in demo_calls().into_iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}});
        writeln!(stdin, "{call}")?;
    }
    drop(stdin);
    let output = child.wait_with_output()?;
    let mut answers = vec![Value::Null; demo_calls().len()];
    for line in output.stdout.lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        if let Some(i) = message["id"].as_u64().filter(|&i| i >= 1) {
            if let Some(slot) = answers.get_mut(i as usize - 1) {
                *slot = message;
            }
        }
    }
    Ok(answers)
}

/// What the upstream said, in one line.
fn raw_text(answer: &Value) -> String {
    if let Some(error) = answer.get("error") {
        return format!(
            "JSON-RPC error {}: {}",
            error["code"],
            error["message"].as_str().unwrap_or("")
        );
    }
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    let flag = if answer["result"]["isError"] == json!(true) {
        "isError: "
    } else {
        "success: "
    };
    format!("{flag}{}", text.replace('\n', "\\n"))
}

/// Why the demo could not run (exit code [`exit::INTERNAL`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("demo: cannot find my own executable: {0}")]
    OwnExecutable(#[source] std::io::Error),
    #[error("demo: cannot run the demo server: {0}")]
    Server(#[source] std::io::Error),
}

/// Runs the demo: each call to the legacy server directly and through the proxy, side by side.
pub fn run_demo(profile: Profile) -> Result<i32, Error> {
    let me = std::env::current_exe().map_err(Error::OwnExecutable)?;
    let profile_name = match profile {
        Profile::Mcp => "mcp",
        Profile::Enterprise => "enterprise",
    };
    let direct = session(Command::new(&me).arg("demo-server"));
    let proxied = session(
        Command::new(&me)
            .args(["--log-level", "error", "--profile", profile_name, "--"])
            .arg(&me)
            .arg("demo-server"),
    );
    let (direct, proxied) = match (direct, proxied) {
        (Ok(d), Ok(p)) => (d, p),
        (Err(e), _) | (_, Err(e)) => return Err(Error::Server(e)),
    };
    println!("mcp-errnorm demo: a legacy MCP server, called directly and through the proxy");
    println!(
        "(profile: {profile_name}; the canonical error also rides in _meta[\"{META_KEY}\"])\n"
    );
    for (((tool, args), raw), through) in demo_calls().iter().zip(&direct).zip(&proxied) {
        println!("▶ {tool} {args}");
        println!("  server says:   {}", raw_text(raw));
        let result = &through["result"];
        if result["isError"] == json!(true) {
            let shown = result["content"][0]["text"].as_str().unwrap_or("");
            let pretty = serde_json::from_str::<Value>(shown)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or_else(|_| shown.to_owned());
            println!(
                "  agent gets:    {}",
                pretty.replace('\n', "\n                 ")
            );
        } else if through == raw {
            println!("  agent gets:    the same bytes (successes pass untouched)");
        } else {
            println!("  agent gets:    {through}");
        }
        println!();
    }
    Ok(exit::OK)
}
