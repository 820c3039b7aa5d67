//! Failed tool calls reach the client as structured errors; nothing else is touched.

use crate::common;

use common::schema::assert_valid;
use common::{canonical, shown, Running};
use serde_json::{json, Value};

fn proxy() -> Running {
    let mut p = Running::proxy(&[]);
    p.initialize();
    p
}

/// Checks the contract every rewritten answer keeps, and returns its canonical error.
fn structured(answer: &Value) -> Value {
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(result["content"][0]["type"], "text");
    let canonical = canonical(answer).clone();
    assert_valid("structured-error.schema.json", &canonical);
    assert_valid("profile-mcp.schema.json", &shown(answer));
    canonical
}

#[test]
fn is_error_results_are_classified_with_the_original_text_kept() {
    let mut p = proxy();
    let cases = [
        ("ENOENT: no such file or directory, open '/x/missing.txt'", "validation", "NOT_FOUND", false),
        ("Access denied - path outside allowed directories: /etc/passwd not in /tmp", "permission", "PERMISSION_DENIED", false),
        ("fetch failed", "transient", "SYSTEM_UNAVAILABLE", true),
        ("MCP error -32602: Tool nope not found", "validation", "NOT_FOUND", false),
        ("Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Mars/Olympus'", "validation", "VALIDATION_ERROR", false),
        ("Transfer rejected: insufficient funds", "business", "BUSINESS_RULE", false),
        // Words neither the rules nor the model know. ("capacitor" would not do: the model's
        // six-letter stem of "capacity" reads it as transient, at 0.81.)
        ("The flux compensator is sad", "unknown", "UNCLASSIFIED", false),
    ];
    for (i, (text, category, code, retryable)) in cases.into_iter().enumerate() {
        let answer = p.call(json!(i), "fail", json!({"text": text}));
        assert_eq!(answer["id"], i, "answers keep their ids");
        let error = structured(&answer);
        assert_eq!(error["errorCategory"], category, "{text}");
        assert_eq!(error["errorCode"], code, "{text}");
        assert_eq!(error["isRetryable"], retryable, "{text}");
        assert_eq!(
            error["originalError"],
            json!({"source": "result", "text": text, "rpcCode": null, "rpcData": null})
        );
        assert_eq!(
            error["attempted_query"],
            json!({"tool": "fail", "arguments": {"text": text}})
        );
        assert_eq!(
            answer["result"]["structuredContent"],
            shown(&answer),
            "fail has no outputSchema"
        );
    }
    let unclassified = canonical(&p.call(
        json!(99),
        "fail",
        json!({"text": "The flux compensator is sad"}),
    ))
    .clone();
    assert_eq!(unclassified["ruleId"], Value::Null);
}

#[test]
fn rate_limits_carry_retry_after_from_the_text() {
    let mut p = proxy();
    let answer = p.call(
        json!(1),
        "fail",
        json!({"text": "HTTP 429 Too Many Requests. Retry-After: 120"}),
    );
    let error = structured(&answer);
    assert_eq!(error["errorCode"], "RATE_LIMITED");
    assert_eq!(error["isRetryable"], true);
    assert_eq!(error["retryAfterSeconds"], 120);
}

#[test]
fn json_rpc_errors_to_tool_calls_become_results() {
    let mut p = proxy();
    let answer = p.call(json!("u"), "no_such_tool", json!({}));
    let error = structured(&answer);
    assert!(answer.get("error").is_none());
    assert_eq!(error["errorCode"], "NOT_FOUND");
    assert_eq!(error["ruleId"], "mcp-unknown-tool");
    assert_eq!(error["originalError"]["source"], "rpc");
    assert_eq!(error["originalError"]["rpcCode"], -32602);
    assert_eq!(error["originalError"]["text"], "Unknown tool: no_such_tool");
}

#[test]
fn rpc_error_rewriting_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "rewrite_rpc_errors = false\n").unwrap();
    let mut p = Running::proxy(&["--config", config.to_str().unwrap()]);
    let answer = p.call(json!(1), "no_such_tool", json!({}));
    assert_eq!(answer["error"]["code"], -32602);
}

#[test]
fn control_errors_and_other_methods_errors_pass_untouched() {
    let mut p = proxy();
    for code in [-32042, -32020, -32099] {
        let answer = p.call(
            json!(code),
            "rpc_error",
            json!({"code": code, "message": "steer"}),
        );
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    p.send(r#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"x"}}"#);
    let raw = p.recv_raw();
    assert_eq!(raw, b"{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
}

#[test]
fn successes_tasks_and_input_required_pass_byte_for_byte() {
    let mut p = proxy();
    let lines = [
        // server-everything's demo message, annotated as it sends it.
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"Error: Operation failed","annotations":{"priority":1.0,"audience":["user","assistant"]}}]}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"No errors found."}]}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"ENOENT"}],"isError":false}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"task":{"taskId":"t1","status":"working"},"isError":true}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"resultType":"input_required","isError":true,"inputRequests":{}}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"resultType":"task","task":{"taskId":"t2"}}}"#,
        r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[],"structuredContent":{"items":[]}}}"#,
    ];
    for (i, line) in lines.iter().enumerate() {
        p.send_json(&json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "emit", "arguments": {"lines": [line]}}}));
        assert_eq!(
            p.recv_raw(),
            format!("{}\n", line.replace("{ID}", &i.to_string())).into_bytes()
        );
    }
}

#[test]
fn a_task_augmented_call_is_never_rewritten() {
    let mut p = proxy();
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{"text":"fetch failed"},"task":{"ttl":1000}}}"#);
    assert_eq!(
        p.recv_raw(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"fetch failed\"}],\"isError\":true}}\n"
    );
}

/// The client ignores an answer after its cancel (MCP: "SHOULD ignore"), and SDKs report one as
/// an answer to an unknown request: the proxy drops it.
#[test]
fn answers_to_cancelled_calls_are_dropped() {
    let mut p = proxy();
    p.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hold","arguments":{"text":"fetch failed"}}}"#);
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"release","arguments":{}}}"#);
    assert_eq!(p.recv()["id"], 6, "the held answer to 5 is not passed on");
    p.assert_quiet(std::time::Duration::from_millis(300));
    let recorded = String::from_utf8(p.recorded()).unwrap();
    assert!(
        recorded.contains(r#""requestId":5,"reason":"user""#),
        "the cancel reaches the server"
    );
}

#[test]
fn no_structured_content_for_tools_that_declare_an_output_schema() {
    let mut p = proxy();
    let answer = p.call(
        json!(1),
        "typed_fail",
        json!({"text": "ENOENT: no such file or directory"}),
    );
    structured(&answer);
    assert!(
        answer["result"].get("structuredContent").is_none(),
        "{answer}"
    );
}

#[test]
fn out_of_order_answers_are_matched_to_their_own_calls() {
    let mut p = proxy();
    p.send(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"hold","arguments":{"text":"ENOENT: no such file or directory"}}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"hold","arguments":{"text":"permission denied"}}}"#);
    // The server asks the client something with an id that collides with a pending call.
    p.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "emit", "arguments": {"lines": [
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}"
    ]}}}));
    assert_eq!(
        p.recv_raw(),
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",\"params\":{}}\n"
    );
    assert_eq!(p.recv()["method"], "notifications/progress");
    // The client answers the server's request 0; that is not an answer to the call with id 0.
    p.send(r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"release","arguments":{}}}"#);
    let first = p.recv();
    let second = p.recv();
    assert_eq!(first["id"], 0, "held calls are released newest first");
    assert_eq!(canonical(&first)["errorCategory"], "permission");
    assert_eq!(
        canonical(&first)["attempted_query"]["arguments"]["text"],
        "permission denied"
    );
    assert_eq!(second["id"], "a");
    assert_eq!(canonical(&second)["errorCategory"], "validation");
    assert_eq!(p.recv()["id"], 2);
}

#[test]
fn odd_ids_are_answered_with_their_own_bytes() {
    let mut p = proxy();
    for id in [r#""\u0061\u00e9""#, "12345678901234567890", "-0", "0"] {
        p.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fail","arguments":{{"text":"fetch failed"}}}}}}"#
        ));
        let raw = String::from_utf8(p.recv_raw()).unwrap();
        assert!(
            raw.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":")),
            "{id}: {raw}"
        );
        assert!(raw.contains("mcp-errnorm/error"));
    }
}

#[test]
fn stateless_2026_sessions_get_result_type() {
    let mut p = Running::proxy(&[]);
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#);
    assert_eq!(p.recv()["result"]["supportedVersions"][0], "2026-07-28");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    p.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "no_such_tool", "arguments": {}, "_meta": meta}}));
    let answer = p.recv();
    structured(&answer);
    assert_eq!(answer["result"]["resultType"], "complete");
    // An upstream result that has its own resultType keeps it.
    p.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "emit", "_meta": meta, "arguments": {"lines": [
        "{\"jsonrpc\":\"2.0\",\"id\":{ID},\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"fetch failed\"}],\"isError\":true,\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"s\"}}}}"
    ]}}}));
    let answer = p.recv();
    structured(&answer);
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "s",
        "upstream _meta kept"
    );
}

#[test]
fn old_protocol_sessions_get_no_structured_content() {
    let mut p = Running::proxy(&[]);
    p.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    p.recv();
    let answer = p.call(json!(1), "fail", json!({"text": "fetch failed"}));
    structured(&answer);
    assert!(answer["result"].get("structuredContent").is_none());
}

#[test]
fn tools_never_listed_get_no_structured_content() {
    let mut p = Running::proxy(&[]);
    let answer = p.call(json!(1), "fail", json!({"text": "fetch failed"}));
    structured(&answer);
    assert!(
        answer["result"].get("structuredContent").is_none(),
        "it may declare an outputSchema"
    );
    p.send(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    p.recv();
    let answer = p.call(json!(2), "fail", json!({"text": "fetch failed"}));
    assert_eq!(
        answer["result"]["structuredContent"],
        shown(&answer),
        "listed without a schema"
    );
}

#[test]
fn non_text_blocks_are_kept_after_the_error() {
    let mut p = proxy();
    let answer = p.call(json!(1), "emit", json!({"lines": [
        "{\"jsonrpc\":\"2.0\",\"id\":{ID},\"result\":{\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},{\"type\":\"text\",\"text\":\"timed out after 30s\"}],\"isError\":true,\"structuredContent\":{\"rows\":[1,2]}}}"
    ]}));
    let error = structured(&answer);
    assert_eq!(error["errorCode"], "TIMEOUT");
    assert_eq!(error["partial_results"], json!({"rows": [1, 2]}));
    assert_eq!(answer["result"]["content"][1]["type"], "image");
    assert_eq!(answer["result"]["content"].as_array().unwrap().len(), 2);
}

#[test]
fn enterprise_profile_shows_the_seed_000_envelope() {
    let mut p = Running::proxy(&["--profile", "enterprise"]);
    let answer = p.call(json!(1), "fail", json!({"text": "503 Service Unavailable"}));
    let view = shown(&answer);
    assert_valid("profile-enterprise.schema.json", &view);
    assert_eq!(view["success"], false);
    assert_eq!(view["data"], Value::Null);
    assert_eq!(view["error_code"], "SYSTEM_UNAVAILABLE");
    assert_eq!(view["retry_recommended"], true);
    assert_valid("structured-error.schema.json", canonical(&answer));
    assert_eq!(canonical(&answer)["errorCategory"], "transient");
}

#[test]
fn user_rules_come_before_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("mine.toml");
    std::fs::write(
        &rules,
        r#"
[[rule]]
id = "quota-is-business"
match = 'fetch failed'
tools = ["fa*"]
category = "business"
code = "QUOTA_EXHAUSTED"
message = "{tool} cannot run: the monthly quota is used up"
user_message = "Your plan's monthly quota is used up."
alternatives = ["wait for next month", "upgrade the plan"]
"#,
    )
    .unwrap();
    let mut p = Running::proxy(&["--rules", rules.to_str().unwrap()]);
    let error = structured(&p.call(json!(1), "fail", json!({"text": "fetch failed"})));
    assert_eq!(error["ruleId"], "quota-is-business");
    assert_eq!(error["errorCode"], "QUOTA_EXHAUSTED");
    assert_eq!(
        error["message"],
        "fail cannot run: the monthly quota is used up"
    );
    assert_eq!(
        error["userMessage"],
        "Your plan's monthly quota is used up."
    );
    assert_eq!(
        error["alternatives"],
        json!(["wait for next month", "upgrade the plan"])
    );
    // The same text from another tool falls to the defaults.
    let error = structured(&p.call(json!(2), "typed_fail", json!({"text": "fetch failed"})));
    assert_eq!(error["ruleId"], "fetch-failed");
}

#[test]
fn planted_secrets_never_reach_the_agent_or_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("unmatched.jsonl");
    let mut p = Running::start(common::Options {
        proxy_args: &["--log-unmatched", log.to_str().unwrap()],
        env: &[("FIXTURE_BANNER", "connecting with password=hunter2222")],
        ..common::Options::default()
    });
    let text = "401 Unauthorized: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.secretpart for postgres://app:pa55w0rd@db:5432 (key AKIAIOSFODNN7EXAMPLE)";
    let answer = p.call(
        json!(1),
        "fail",
        json!({"text": text, "api_key": "sk-proj-abcdefghijklmnopqrstuvwx"}),
    );
    let odd = "gremlins ate token=abcd1234efgh5678";
    p.call(json!(2), "fail", json!({"text": odd}));
    p.close_stdin();
    p.wait();
    let everything = format!(
        "{answer}\n{}\n{}",
        std::fs::read_to_string(&log).unwrap(),
        p.stderr()
    );
    for secret in [
        "eyJhbGciOiJIUzI1NiJ9",
        "pa55w0rd",
        "AKIAIOSFODNN7EXAMPLE",
        "sk-proj-abc",
        "hunter2222",
        "abcd1234efgh5678",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked:\n{everything}"
        );
    }
    let error = canonical(&answer);
    assert_eq!(
        error["errorCategory"], "permission",
        "classified on the real text"
    );
    assert!(error["originalError"]["text"]
        .as_str()
        .unwrap()
        .contains("Bearer [REDACTED]"));
    assert_eq!(
        error["attempted_query"]["arguments"]["api_key"],
        "[REDACTED]"
    );
}

/// Secrets of every common kind, planted in failure texts as servers print them: none reaches
/// the agent in any field of the rewritten answer.
#[test]
fn planted_secrets_of_every_common_kind_are_masked() {
    let planted = [
        (
            "invalid token {}",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
        ),
        (
            "Incorrect API key provided: {}",
            "sk-proj-AbCdEf1234567890AbCdEf1234567890",
        ),
        (
            "connect ECONNREFUSED postgres://admin:{}@db.internal:5432/prod",
            "S3cr3tPassw0rd",
        ),
        (
            "Slack API error: invalid_auth for {}",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
        ),
        (
            "Bad credentials for {}",
            "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        (
            "AccessKeyId AKIAIOSFODNN7EXAMPLE secret {} rejected",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "API key not valid. key={}",
            "AIzaSyD-abcdefghijklmnopqrstuvwxyz12345",
        ),
        (
            "fetch https://api.example.com/items?access_token={}&page=2 failed",
            "abc123def456ghi789",
        ),
        (
            "HTTP 403 with X-API-Key: {}",
            "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        ),
        (
            "Authorization: Basic {} refused",
            "dXNlcjpzdXBlcnNlY3JldHBhc3N3b3Jk",
        ),
        (
            "rejected Cookie: sessionid={}; theme=dark",
            "abcdef0123456789abcdef",
        ),
        (
            r#"login failed for {{"user":"bob","password":"{}"}}"#,
            "hunter2hunter2",
        ),
        (
            "Error: {}\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----",
        ),
        (
            "NOAUTH for redis://:{}@cache.internal:6379",
            "myRedisPass99",
        ),
        ("auth token {} invalid", "0123456789abcdef0123456789abcdef"),
        (
            "your authentication token seems to be invalid: {}",
            "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        ("GitLab: {} rejected", "glpat-AbCdEfGhIjKlMnOpQrSt"),
        (
            "Hugging Face: {} is invalid",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        ),
        (
            "SendGrid: {} invalid",
            "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        ),
        (
            "GET https://b.s3.amazonaws.com/k?X-Amz-Signature={} 403",
            "4d3c2b1a0f9e8d7c6b5a",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core",
            "bXlBenVyZUtleQ+abc/def==",
        ),
        (
            r#"token endpoint said 400 to "{\"client_secret\":\"{}\",\"grant_type\":\"x\"}""#,
            "cs-9aQ2wE4rT6yU",
        ),
        (
            "Login failed: Server=tcp:db,1433;User ID=sa;Password={};Encrypt=True",
            "Blue Horse 42!",
        ),
        (
            "redirect=postgres%3A%2F%2Fapp%3A{}%40db%3A5432 failed",
            "EncUrlPw99",
        ),
        (
            "    r = requests.get(url, auth=('admin', '{}'))",
            "Tr0ub4dor&3",
        ),
        (
            "headers={'X-Amz-Security-Token': b'{}'}",
            "IQoJb3JpZ2luX2VjEJr//////////wEaCXVz",
        ),
    ];
    let mut p = Running::proxy(&[]);
    for (id, (shape, secret)) in planted.iter().enumerate() {
        let text = shape.replace("{}", secret);
        let answer = p.call(json!(id), "fail", json!({ "text": text }));
        assert!(
            !answer.to_string().contains(secret),
            "{secret} leaked from {text:?}:\n{answer}"
        );
        assert!(
            canonical(&answer)["originalError"]["text"]
                .as_str()
                .unwrap()
                .contains("[REDACTED]"),
            "{answer}"
        );
    }
}

/// A failed `write_file` of a large file: the answer repeats the error three times (text,
/// structuredContent, _meta), and must not become larger than clients read (the TypeScript SDK
/// closes the connection on a line of 10 MiB).
#[test]
fn a_failure_of_a_call_with_huge_arguments_stays_small() {
    let mut p = Running::proxy(&[]);
    let content = "a\"".repeat(1_800_000);
    let line = serde_json::to_string(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "fail", "arguments": {"text": "EACCES: permission denied, open '/x'", "content": content}}
    }))
    .unwrap();
    p.send(&line);
    let answer = p.recv_raw();
    assert!(answer.len() < 64 << 10, "{} bytes", answer.len());
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let error = canonical(&answer);
    assert_eq!(error["errorCode"], "PERMISSION_DENIED");
    let shown = error["attempted_query"]["arguments"]["content"]
        .as_str()
        .unwrap();
    assert!(shown.starts_with("a\"a\""), "{shown}");
    assert!(shown.ends_with("… [3600000 bytes in all]"), "{shown}");
}

#[test]
fn attempted_queries_can_be_limited_to_the_tool_or_left_out() {
    let dir = tempfile::tempdir().unwrap();
    for (detail, expected) in [
        ("tool", json!({"tool": "fail", "arguments": null})),
        ("none", Value::Null),
    ] {
        let config = dir.path().join(format!("{detail}.toml"));
        std::fs::write(
            &config,
            format!("[redact]\nattempted_query = \"{detail}\"\n"),
        )
        .unwrap();
        let mut p = Running::proxy(&["--config", config.to_str().unwrap()]);
        let answer = p.call(
            json!(1),
            "fail",
            json!({"text": "fetch failed", "q": "private"}),
        );
        assert_eq!(canonical(&answer)["attempted_query"], expected, "{detail}");
        assert!(!answer.to_string().contains("private"), "{detail}");
    }
}

/// A server that answers a failure as a success, which nobody wrote a rule for: caught by its
/// shape, classified, and sent as an `isError` result; with `hidden_failures = false` it passes.
#[test]
fn a_failure_answered_as_a_success_is_caught_by_its_shape() {
    let failure = r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"Error executing query: Can't connect to MySQL server on '10.0.0.5:3306' (111 Connection refused)"}],"isError":false}}"#;
    let mut p = proxy();
    let answer = p.call(json!(1), "emit", json!({"lines": [failure]}));
    let error = structured(&answer);
    assert_eq!(error["errorCategory"], "transient", "{answer}");
    assert_eq!(error["isRetryable"], true);
    assert_eq!(error["originalError"]["source"], "success");

    // A genuine result that only mentions an error passes as it came.
    let fine = r#"{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"3 open incidents; latest: 'Error: disk full' on node-3 (resolved)"}]}}"#;
    p.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "emit", "arguments": {"lines": [fine]}}}));
    assert_eq!(
        p.recv_raw(),
        format!("{}\n", fine.replace("{ID}", "2")).into_bytes()
    );

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "hidden_failures = false\n").unwrap();
    let mut p = Running::proxy(&["--config", config.to_str().unwrap()]);
    p.initialize();
    p.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "emit", "arguments": {"lines": [failure]}}}));
    assert_eq!(
        p.recv_raw(),
        format!("{}\n", failure.replace("{ID}", "3")).into_bytes()
    );
}
