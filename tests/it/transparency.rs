//! Everything that is not a failed tool call passes byte for byte, in both directions.

use crate::common;

use std::time::Duration;

use common::{canonical, Options, Running};
use serde_json::{json, Value};

/// A session with every kind of message a client sends, odd ids and odd spellings included.
/// Every request here is answered exactly once by the fixture; no answer is a failure.
const CLIENT_SESSION: &[&str] = &[
    r#"{"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{},"roots":{"listChanged":true}},"clientInfo":{"name":"odd","version":"0"}},"jsonrpc":"2.0","id":0}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":"list-1","method":"tools/list","params":{"_meta":{"progressToken":"p1"}}}"#,
    r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":"\u0061b","method":"tools/call","params":{"name":"echo","arguments":{"z":1,"a":[1.50,2e3,-0,"é\u00e9"]}}}"#,
    r#"{ "jsonrpc" : "2.0" , "id" : -7 , "method" : "tools/call" , "params" : { "name" : "echo" , "arguments" : { } } }"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"resources/list","x-unknown":{"deep":[true,null]}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":0.5}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"vendor/unknown-method","params":[1,2,3]}"#,
    r#"{"jsonrpc":"2.0","id":99,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"hi"}}}"#,
    r#"{"jsonrpc":"2.0","id":"srv-2","error":{"code":-1,"message":"User rejected sampling request"}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"emit","arguments":{"lines":["{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"log\"}}","{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":1}}","{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}","{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}","{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}","{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Error: looks like a failure but is a success\"}],\"zzz\":1,\"structuredContent\":{\"b\":1,\"a\":2}},\"id\":{ID},\"jsonrpc\":\"2.0\"}"]}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"n":1},"_meta":{"progressToken":7}}}"#,
    r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
];

/// Runs the session and returns (stdout bytes, bytes the upstream received).
fn run(direct: bool) -> (Vec<u8>, Vec<u8>) {
    let mut p = Running::start(Options {
        direct,
        ..Options::default()
    });
    for line in CLIENT_SESSION {
        p.send(line);
    }
    p.close_stdin();
    let status = p.wait();
    let out = p.drain().concat();
    let record = p.recorded();
    let stderr = p.stderr();
    assert!(status.success(), "exit {status:?}: {stderr}");
    (out, record)
}

#[test]
fn a_whole_session_is_byte_for_byte_the_same_as_direct() {
    let (direct_out, direct_in) = run(true);
    let (proxied_out, proxied_in) = run(false);
    let expected_in: Vec<u8> = CLIENT_SESSION
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&direct_in),
        String::from_utf8_lossy(&expected_in)
    );
    assert_eq!(
        String::from_utf8_lossy(&proxied_in),
        String::from_utf8_lossy(&expected_in),
        "the upstream must receive exactly what the client sent"
    );
    assert_eq!(
        direct_out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
        14
    );
    // The fixture never answers a batch: through the proxy, the request in it is answered when
    // the server exits, as any request a server leaves unanswered is. Nothing else differs.
    let direct_out = [
        direct_out,
        br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"mcp-errnorm: the MCP server exited with status 0 before answering 'ping'"}}"#.to_vec(),
        b"\n".to_vec(),
    ]
    .concat();
    assert_eq!(
        String::from_utf8_lossy(&proxied_out),
        String::from_utf8_lossy(&direct_out),
        "the client must receive exactly what the upstream sent"
    );
}

#[test]
fn non_json_from_the_client_passes_to_the_upstream() {
    let mut p = Running::proxy(&[]);
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    for line in ["this is not json", "{\"broken\":", "", "\u{1b}[31m", call] {
        p.send(line);
    }
    assert_eq!(p.recv()["id"], 1);
    p.close_stdin();
    assert!(p.wait().success());
    assert_eq!(
        String::from_utf8_lossy(&p.recorded()),
        format!("this is not json\n{{\"broken\":\n\n\u{1b}[31m\n{call}\n")
    );
}

#[test]
fn non_json_from_the_upstream_goes_to_stderr_not_the_client() {
    let mut p = Running::start(Options {
        env: &[("FIXTURE_BANNER", "Starting legacy server v1 on stdio...")],
        ..Options::default()
    });
    let answer = p.call(
        json!(1),
        "emit",
        json!({"lines": ["DEBUG: a stray print", "{\"jsonrpc\":\"2.0\",\"id\":{ID},\"result\":{\"content\":[]}}"]}),
    );
    assert_eq!(
        answer["id"], 1,
        "the first stdout line must be the answer, not noise"
    );
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains("Starting legacy server v1 on stdio..."),
        "{stderr}"
    );
    assert!(stderr.contains("DEBUG: a stray print"), "{stderr}");
}

#[test]
fn non_json_from_the_upstream_can_be_forwarded_by_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "non_json_upstream_lines = \"forward\"\n").unwrap();
    let config = config.display().to_string();
    let mut p = Running::start(Options {
        proxy_args: &["--config", &config],
        env: &[("FIXTURE_BANNER", "banner")],
        ..Options::default()
    });
    assert_eq!(p.recv_raw(), b"banner\n");
    p.close_stdin();
    p.wait();
}

#[test]
fn lines_without_final_newline_and_crlf_pass() {
    let mut p = Running::proxy(&[]);
    let answer = p.call(
        json!(1),
        "emit",
        json!({"lines": ["{\"jsonrpc\":\"2.0\",\"id\":{ID},\"result\":{\"content\":[]}}\r"]}),
    );
    assert_eq!(answer["id"], 1);
    p.assert_quiet(Duration::from_millis(100));
    p.close_stdin();
    p.wait();
}

/// Lines above `max_line_bytes` are streamed through unparsed in both directions, byte for
/// byte, and the request an oversized answer settles is not answered twice.
#[test]
fn oversized_lines_stream_through_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "max_line_bytes = 4096\n").unwrap();
    let mut p = Running::start(Options {
        proxy_args: &["--config", config.to_str().unwrap()],
        ..Options::default()
    });
    let big = "x".repeat(200_000);
    // A failure the proxy would rewrite if it could hold it: it passes as it is.
    let answer_line = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"fetch failed {big}"}}],"isError":true}},"jsonrpc":"2.0","id":{{ID}}}}"#
    );
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "emit", "arguments": {"lines": [answer_line]}}});
    let request_line = request.to_string();
    assert!(request_line.len() > 4096);
    p.send(&request_line);
    let got = p.recv_raw();
    assert_eq!(
        String::from_utf8(got).unwrap(),
        format!("{}\n", answer_line.replace("{ID}", "9")),
        "streamed unchanged"
    );
    // A small request with a big answer: streamed unrewritten, and its request settled.
    p.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"big","arguments":{"size":100000}}}"#);
    let big_answer: Value = p.recv();
    assert_eq!(big_answer["id"], 11);
    assert!(
        big_answer["result"]["_meta"].is_null(),
        "too large to rewrite"
    );
    // Still in step: a small call is inspected and rewritten as usual.
    p.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"fail","arguments":{"text":"fetch failed"}}}"#);
    assert_eq!(p.recv()["result"]["isError"], true);
    // The upstream dies: only requests still waiting get answers, not 11 a second time.
    p.send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#);
    let last = p.recv();
    assert_eq!(last["id"], 12, "{last}");
    p.wait();
    assert!(
        p.drain().is_empty(),
        "the oversized answer settled its request: no second answer"
    );
    let recorded = String::from_utf8(p.recorded()).unwrap();
    assert!(
        recorded.starts_with(&format!("{request_line}\n")),
        "the client's big line reached the upstream unchanged"
    );
}

/// Answers longer than `stream_answers_over` (64 KiB by default) stream to the client as they
/// come, unchanged, unless the proxy must read them: a long failure then passes unrewritten
/// (and the log says so), and a long request from the server never settles a call that happens
/// to share its id.
#[test]
fn long_answers_stream_through_unless_the_proxy_must_read_them() {
    let mut p = Running::start(Options::default());
    p.initialize();
    let long_failure =
        |p: &mut Running, id: u64| p.call(json!(id), "big", json!({"size": 200_000}));
    let streamed = long_failure(&mut p, 1);
    assert_eq!(streamed["result"]["isError"], true);
    assert_eq!(
        streamed["result"]["content"][0]["text"],
        format!("fetch failed {}", "y".repeat(200_000)),
        "passed as the server wrote it"
    );
    assert!(canonical(&streamed).is_null(), "not rewritten");
    let success = p.call(json!(2), "big", json!({"size": 200_000, "error": false}));
    assert!(success["result"].get("isError").is_none());
    // A request from the server, as long and under the same id as a waiting call, is passed on;
    // the call's own (short, failed) answer is still rewritten.
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":{{ID}},"method":"sampling/createMessage","params":{{"messages":[{{"role":"user","content":{{"type":"text","text":"{}"}}}}],"maxTokens":1}}}}"#,
        "q".repeat(100_000)
    );
    let failure = r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"fetch failed"}],"isError":true}}"#;
    p.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "emit", "arguments": {"lines": [request, failure]}}}));
    let forwarded = p.recv();
    assert_eq!(forwarded["method"], "sampling/createMessage");
    let answer = p.recv();
    assert_eq!(answer["id"], 3);
    assert_eq!(
        canonical(&answer)["errorCategory"],
        "transient",
        "the call was still waiting, and its failure is rewritten: {answer}"
    );
    p.close_stdin();
    p.wait();
    let stderr = p.stderr();
    assert!(
        stderr.contains("it mentions isError, so it may be a failure"),
        "the unrewritten failure is logged: {stderr}"
    );

    // Held whole when configured to, and rewritten.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "stream_answers_over = 1048576\n").unwrap();
    let mut p = Running::start(Options {
        proxy_args: &["--config", config.to_str().unwrap()],
        ..Options::default()
    });
    p.initialize();
    let rewritten = long_failure(&mut p, 1);
    assert_eq!(rewritten["result"]["isError"], true);
    assert_eq!(
        canonical(&rewritten)["errorCategory"],
        "transient",
        "{}",
        &rewritten.to_string()[..300]
    );
    p.close_stdin();
    p.wait();
}
