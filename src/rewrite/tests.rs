//! Tests of the rewriter.

use super::*;
use crate::diagnostic::SourceFile;
use crate::session::{Protocol, ToolCall, ToolInfo};

fn rewriter(profile: Profile) -> Rewriter {
    let rules = RuleSet::load(
        &[SourceFile::new(
            "t.toml",
            r#"
            [[rule]]
            id = "enoent"
            match = "ENOENT"
            code = "NOT_FOUND"
            [[rule]]
            id = "unknown-tool"
            source = "rpc"
            match = "Unknown tool"
            code = "NOT_FOUND"
            "#,
        )],
        &[],
    )
    .unwrap();
    Rewriter {
        rules: Arc::new(rules),
        profile,
        rewrite_rpc_errors: true,
        not_found_is_empty: globset::GlobSet::empty(),
        redactor: Redactor::defaults(),
        hidden_failures: true,
    }
}

fn answered(version: Option<&str>, has_output_schema: bool) -> AnsweredCall {
    AnsweredCall {
        id: raw("1"),
        upstream_id: None,
        attempt: 1,
        call: ToolCall {
            name: "read".into(),
            params: raw(r#"{"name":"read","arguments":{"path":"/x"}}"#),
            protocol_version: None,
            task: false,
            seq: 1,
            deadline: None,
            progress: None,
        },
        tool: Some(ToolInfo {
            has_output_schema,
            ..ToolInfo::default()
        }),
        protocol: Protocol(version.map(Into::into)),
    }
}

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn rewrite_result(r: &Rewriter, a: &AnsweredCall, result: &str) -> Option<Value> {
    r.rewrite(a, Answer::Result(&raw(result))).map(|r| r.result)
}

#[test]
fn a_result_rewritten_already_is_not_rewritten_again() {
    let r = rewriter(Profile::Mcp);
    let a = answered(Some("2025-11-25"), false);
    let once = rewrite_result(
        &r,
        &a,
        r#"{"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true}"#,
    )
    .expect("rewritten");
    assert_eq!(rewrite_result(&r, &a, &once.to_string()), None);
    // Another server's `_meta`, or the key without the error, does not count.
    for meta in [
        r#"{"x/mcp-errnorm/error":{"errorCategory":"transient"}}"#,
        r#"{"mcp-errnorm/error":{}}"#,
    ] {
        let other = format!(
            r#"{{"content":[{{"type":"text","text":"ENOENT"}}],"isError":true,"_meta":{meta}}}"#
        );
        assert!(rewrite_result(&r, &a, &other).is_some(), "{meta}");
    }
}

#[test]
fn is_error_result_becomes_structured() {
    let r = rewriter(Profile::Mcp);
    let out = rewrite_result(
        &r,
        &answered(Some("2025-11-25"), false),
        r#"{"content":[{"type":"text","text":"ENOENT: no such file"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true,"_meta":{"x/y":1}}"#,
    )
    .unwrap();
    assert_eq!(out["isError"], true);
    let shown: Value = serde_json::from_str(out["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(shown["errorCategory"], "validation");
    assert_eq!(shown["errorCode"], "NOT_FOUND");
    assert_eq!(shown["isRetryable"], false);
    assert_eq!(out["content"][1]["type"], "image");
    assert_eq!(out["structuredContent"], shown);
    assert_eq!(out["_meta"]["x/y"], 1);
    let canonical = &out["_meta"][META_KEY];
    assert_eq!(canonical["originalError"]["text"], "ENOENT: no such file");
    assert_eq!(
        canonical["attempted_query"],
        json!({"tool": "read", "arguments": {"path": "/x"}})
    );
    assert_eq!(canonical["ruleId"], "enoent");
    assert!(out.get("resultType").is_none());
}

#[test]
fn successes_tasks_and_input_required_pass() {
    let r = rewriter(Profile::Mcp);
    let a = answered(None, false);
    for result in [
        r#"{"content":[{"type":"text","text":"ENOENT"}]}"#,
        r#"{"content":[{"type":"text","text":"ENOENT"}],"isError":false}"#,
        r#"{"task":{"taskId":"1"},"isError":true}"#,
        r#"{"resultType":"input_required","isError":true,"content":[]}"#,
        r#"{"resultType":"task","isError":true,"content":[]}"#,
    ] {
        assert_eq!(rewrite_result(&r, &a, result), None, "{result}");
    }
}

#[test]
fn no_structured_content_unless_the_tool_is_listed_without_schema() {
    let r = rewriter(Profile::Mcp);
    let failed = r#"{"content":[{"type":"text","text":"ENOENT"}],"isError":true,"structuredContent":{"partial":1}}"#;
    let out = rewrite_result(&r, &answered(None, true), failed).unwrap();
    assert!(out.get("structuredContent").is_none());
    assert_eq!(
        out["_meta"][META_KEY]["partial_results"],
        json!({"partial": 1})
    );
    let out = rewrite_result(&r, &answered(Some("2025-03-26"), false), failed).unwrap();
    assert!(out.get("structuredContent").is_none());
    let mut unlisted = answered(None, false);
    unlisted.tool = None;
    let out = rewrite_result(&r, &unlisted, failed).unwrap();
    assert!(
        out.get("structuredContent").is_none(),
        "a tool never listed may have a schema"
    );
}

#[test]
fn rpc_errors_become_results_with_result_type_in_2026() {
    let r = rewriter(Profile::Enterprise);
    let a = answered(Some("2026-07-28"), false);
    let out = r
        .rewrite(
            &a,
            Answer::Error(&raw(
                r#"{"code":-32602,"message":"Unknown tool: x","data":{"d":1}}"#,
            )),
        )
        .unwrap()
        .result;
    assert_eq!(out["resultType"], "complete");
    let shown: Value = serde_json::from_str(out["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(shown["success"], false);
    assert_eq!(shown["error_code"], "NOT_FOUND");
    let canonical = &out["_meta"][META_KEY];
    assert_eq!(canonical["errorCategory"], "validation");
    assert_eq!(canonical["originalError"]["rpcCode"], -32602);
    assert_eq!(canonical["originalError"]["rpcData"], json!({"d": 1}));
}

#[test]
fn control_errors_and_disabled_rpc_rewriting_pass() {
    let mut r = rewriter(Profile::Mcp);
    let a = answered(None, false);
    for code in [-32042, -32020, -32099] {
        let error = raw(&format!(r#"{{"code":{code},"message":"m"}}"#));
        assert!(r.rewrite(&a, Answer::Error(&error)).is_none(), "{code}");
    }
    r.rewrite_rpc_errors = false;
    assert!(r
        .rewrite(
            &a,
            Answer::Error(&raw(r#"{"code":-32602,"message":"Unknown tool"}"#))
        )
        .is_none());
}

#[test]
fn bare_string_content_is_read_as_text() {
    let r = rewriter(Profile::Mcp);
    let out = rewrite_result(
        &r,
        &answered(None, false),
        r#"{"isError":true,"content":"ENOENT"}"#,
    )
    .unwrap();
    assert_eq!(out["_meta"][META_KEY]["ruleId"], "enoent");
    assert!(out["content"].is_array());
}

#[test]
fn successes_become_failures_only_by_a_success_rule_for_the_tool() {
    let rules = RuleSet::load(
        &[SourceFile::new(
            "s.toml",
            "[[rule]]\nid = \"db\"\nsource = \"success\"\ntools = [\"query\"]\n\
             match = '^Database error: '\ncategory = \"transient\"\n\
             [[rule]]\nid = \"any\"\nmatch = 'Database'\ncategory = \"business\"\n",
        )],
        &[],
    )
    .unwrap();
    let r = Rewriter {
        rules: Arc::new(rules),
        // About the rules' scope: the shape alone would catch this text from any tool.
        hidden_failures: false,
        ..rewriter(Profile::Mcp)
    };
    let mut a = answered(None, false);
    let success = r#"{"content":[{"type":"text","text":"Database error: disk I/O error"}]}"#;
    assert!(
        rewrite_result(&r, &a, success).is_none(),
        "the rule is for another tool"
    );
    a.call.name = "query".into();
    let out = rewrite_result(&r, &a, success).unwrap();
    assert_eq!(out["isError"], true);
    assert_eq!(out["_meta"][META_KEY]["ruleId"], "db");
    assert_eq!(out["_meta"][META_KEY]["originalError"]["source"], "success");
    let fine = r#"{"content":[{"type":"text","text":"3 rows; Database error: none"}]}"#;
    assert!(
        rewrite_result(&r, &a, fine).is_none(),
        "other rules never look at successes"
    );
}

#[test]
fn not_found_can_be_a_valid_empty_result_for_configured_tools() {
    let mut r = rewriter(Profile::Mcp);
    let mut builder = globset::GlobSetBuilder::new();
    builder.add(globset::Glob::new("search*").unwrap());
    r.not_found_is_empty = builder.build().unwrap();
    let failure = r#"{"content":[{"type":"text","text":"ENOENT: nothing"}],"isError":true}"#;
    let mut a = answered(Some("2026-07-28"), false);
    assert_eq!(
        rewrite_result(&r, &a, failure).unwrap()["isError"],
        true,
        "read is not configured"
    );
    a.call.name = "search_docs".into();
    let out = rewrite_result(&r, &a, failure).unwrap();
    assert!(out.get("isError").is_none(), "{out}");
    assert_eq!(out["content"][0]["text"], "No results found.");
    assert_eq!(out["resultType"], "complete");
    assert_eq!(out["_meta"][EMPTY_META_KEY]["reason"], "NOT_FOUND");
    a.tool = None;
    assert_eq!(
        rewrite_result(&r, &a, failure).unwrap()["isError"],
        true,
        "unknown schema: stays an error"
    );
}

#[test]
fn attempts_are_reported() {
    let r = rewriter(Profile::Mcp);
    let mut a = answered(None, false);
    a.attempt = 3;
    let out = rewrite_result(&r, &a, r#"{"content":[],"isError":true}"#).unwrap();
    assert_eq!(out["_meta"][META_KEY]["attempts"], 3);
}

#[test]
fn upstream_gone_is_transient_and_retryable() {
    let r = rewriter(Profile::Mcp);
    let out = r.upstream_gone(&answered(None, false), "exited with status 3");
    assert_eq!(out.error.category, Category::Transient);
    assert!(out.error.retryable);
    assert!(out.error.message.contains("exited with status 3"));
}

/// The result as it was first assembled, over a `Value` tree: the reference `write_result` must
/// match byte for byte. `error` is the one the rewrite returned (redacted, attempts counted).
fn reference(r: &Rewriter, a: &AnsweredCall, answer: Answer, error: &StructuredError) -> String {
    let (mut result, kept_blocks) = match answer {
        Answer::Result(raw) => {
            let Ok(Value::Object(mut result)) = serde_json::from_str::<Value>(raw.get()) else {
                unreachable!()
            };
            let (_, _, kept) = plain::split_content(result.get("content"));
            result.remove("structuredContent");
            (result, kept)
        }
        Answer::Error(_) => (Map::new(), Vec::new()),
    };
    let shown = error.in_profile(r.profile);
    let mut content = vec![json!({ "type": "text", "text": shown.to_string() })];
    content.extend(kept_blocks);
    result.insert("content".into(), Value::Array(content));
    result.insert("isError".into(), Value::Bool(true));
    let known_schemaless = a.tool.as_ref().is_some_and(|t| !t.has_output_schema);
    if known_schemaless && a.protocol.has_structured_content() {
        result.insert("structuredContent".into(), shown);
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(META_KEY.into(), error.canonical());
    }
    if a.protocol.has_result_type() && !result.contains_key("resultType") {
        result.insert("resultType".into(), Value::from("complete"));
    }
    Value::Object(result).to_string()
}

#[test]
fn results_are_written_as_the_value_tree_would_serialize() {
    let results = [
        r#"{"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true}"#,
        r#"{"isError":true,"content":[{"type":"image","data":"AA=="},{"type":"text","text":"a"},{"text":"b","type":"text"}]}"#,
        r#"{"_meta":{"mcp-errnorm/error":1,"z":[1.50,1e2,"\u00e9"]},"isError":true,"structuredContent":{"x":1},"resultType":"complete","zz":null,"content":"ENOENT"}"#,
        r#"{"content":[],"_meta":"not an object","extra":{"b":1,"a":2},"isError":true,"structuredContent":null,"last":true}"#,
        r#"{"isError":true,"isError":true,"content":[{"type":"text","text":"x Bearer abcdefghijklmn"}],"content":[{"type":"text","text":"y"}]}"#,
        r#"{ "content" : [ { "type" : "text" , "text" : "ENOENT \"q\" \n" } ] , "isError" : true }"#,
    ];
    for profile in [Profile::Mcp, Profile::Enterprise] {
        let r = rewriter(profile);
        for version in [None, Some("2025-03-26"), Some("2026-07-28")] {
            for schema in [false, true] {
                let mut a = answered(version, schema);
                a.attempt = if schema { 2 } else { 1 };
                for result in results {
                    let raw = raw(result);
                    let got = r.rewrite_json(&a, Answer::Result(&raw)).unwrap();
                    let want = reference(&r, &a, Answer::Result(&raw), &got.error);
                    assert_eq!(String::from_utf8(got.result).unwrap(), want, "{result}");
                }
                let error = raw(r#"{"code":-32602,"message":"Unknown tool: x","data":[1]}"#);
                let got = r.rewrite_json(&a, Answer::Error(&error)).unwrap();
                let want = reference(&r, &a, Answer::Error(&error), &got.error);
                assert_eq!(String::from_utf8(got.result).unwrap(), want);
            }
        }
    }
}

#[test]
fn json_text_is_escaped_as_serde_json_does() {
    for text in [
        r#"{"a":"b \"q\" \\ é →","n":[1,2]}"#,
        "",
        "\"",
        "\\\\",
        "plain",
        "control\n\u{1}chars fall back",
    ] {
        let mut out = Vec::new();
        json_string_of_json(&mut out, text.as_bytes());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            Value::from(text).to_string()
        );
    }
}

#[test]
fn a_secret_a_rule_quotes_in_its_message_is_masked_there_too() {
    // The embedded rules: `stripe-resource-missing` quotes the id in its message.
    let r = crate::config::Settings::load(&crate::config::Flags::default())
        .unwrap()
        .rewriter();
    let a = answered(Some("2025-11-25"), false);
    let out = rewrite_result(
        &r,
        &a,
        r#"{"content":[{"type":"text","text":"No such token: 'tok_1N3T00LkdIwHu7ixt44h1F8k'"}],"isError":true}"#,
    )
    .expect("rewritten")
    .to_string();
    assert!(!out.contains("tok_1N3T00LkdIwHu7ixt44h1F8k"), "{out}");
    assert!(out.contains("[REDACTED]"), "{out}");
}

#[test]
fn long_arguments_are_cut_short_in_the_attempted_query() {
    let r = Redactor::defaults();
    let mut args = json!({"path": "/x", "content": "é".repeat(300), "n": [1, "a".repeat(257)]});
    shorten(&mut args, &r, &[]);
    let content = args["content"].as_str().unwrap();
    assert!(content.starts_with("éé"), "{content}");
    assert!(content.ends_with("é… [600 bytes in all]"), "{content}");
    assert_eq!(args["path"], "/x");
    assert_eq!(args["n"][0], 1);
    assert!(args["n"][1]
        .as_str()
        .unwrap()
        .ends_with("… [257 bytes in all]"));
    // A secret across the cut is masked whole, not cut into a prefix no pattern knows.
    let token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let mut args = json!({"text": format!("{}{token}{}", "x".repeat(240), "y".repeat(100))});
    shorten(&mut args, &r, &[]);
    let text = args["text"].as_str().unwrap();
    assert!(!text.contains("ghp_AbCd"), "{text}");
    assert!(text.contains("[REDAC"), "{text}");
    // Many fields, each short: too much to repeat all the same.
    let mut many: Value = (0..2000)
        .map(|i| (format!("k{i}"), json!(i)))
        .collect::<Map<_, _>>()
        .into();
    shorten(&mut many, &r, &[]);
    assert!(
        many.as_str()
            .unwrap()
            .ends_with("bytes of arguments, not repeated]"),
        "{many}"
    );
}

#[test]
fn the_rules_texts_are_masked_even_when_the_upstreams_text_shows_no_secret() {
    let mut r = rewriter(Profile::Mcp);
    r.rules = Arc::new(
        RuleSet::load(
            &[SourceFile::new(
                "t.toml",
                r#"
                [[rule]]
                id = "ops"
                match = "busy"
                code = "SYSTEM_UNAVAILABLE"
                message = "{tool} is busy; ask internal-host-7"
                "#,
            )],
            &[],
        )
        .unwrap(),
    );
    r.redactor = Redactor::new(&crate::redact::RedactConfig {
        patterns: vec![r"internal-host-\d+".into()],
        ..Default::default()
    })
    .unwrap();
    let out = rewrite_result(
        &r,
        &answered(None, false),
        r#"{"content":[{"type":"text","text":"busy"}],"isError":true}"#,
    )
    .unwrap();
    let meta = &out["_meta"][META_KEY];
    assert_eq!(meta["message"], "read is busy; ask [REDACTED]");
    assert_eq!(meta["originalError"]["text"], "busy");
}

#[test]
fn the_upstreams_other_members_are_masked_in_the_rewritten_result() {
    let r = rewriter(Profile::Mcp);
    let out = rewrite_result(
        &r,
        &answered(Some("2025-11-25"), false),
        r#"{"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true,"_meta":{"debug":{"Authorization":"Bearer abcdefgh12345678","pass":"Str0ngPass"},"x/y":1},"trace":"GET /x?api_key=s3cr3tvalue"}"#,
    )
    .unwrap();
    let text = out.to_string();
    for secret in ["abcdefgh12345678", "Str0ngPass", "s3cr3tvalue"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert_eq!(out["_meta"]["x/y"], 1);
    assert_eq!(out["trace"], "GET /x?api_key=[REDACTED]");
    assert_eq!(out["_meta"][META_KEY]["ruleId"], "enoent");
}

#[test]
fn a_known_secret_a_long_argument_repeats_across_its_cut_is_masked_whole() {
    let r = rewriter(Profile::Mcp);
    let mut a = answered(None, false);
    // The password begins a few bytes before the 256-byte cut of the long string.
    let long = format!("{}C9BIDVFrVHCM6GyG and more", "x ".repeat(124));
    a.call.params = raw(&format!(
        r#"{{"name":"login","arguments":{{"password":"C9BIDVFrVHCM6GyG","note":"{long}"}}}}"#
    ));
    let out = rewrite_result(
        &r,
        &a,
        r#"{"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true}"#,
    )
    .expect("rewritten")
    .to_string();
    assert!(out.contains("bytes in all"), "the string was cut: {out}");
    assert!(!out.contains("C9BIDV"), "{out}");
}

#[test]
fn a_secret_the_arguments_or_the_upstream_show_is_masked_wherever_the_arguments_repeat_it() {
    let r = rewriter(Profile::Mcp);
    let mut a = answered(None, false);
    a.call.params = raw(
        r#"{"name":"login","arguments":{"user":"bob","input":"C9BIDVFrVHCM6GyG","text":"login failed: password=C9BIDVFrVHCM6GyG","again":"sess_lwkr41xwpy98ywjt","args":["--user","bob","--password","Dr5t39By2H1rIQwz"]}}"#,
    );
    let out = rewrite_result(
        &r,
        &a,
        r#"{"content":[{"type":"text","text":"no session file sess_lwkr41xwpy98ywjt (PHPSESSID=lwkr41xwpy98ywjt)"}],"isError":true}"#,
    )
    .expect("rewritten")
    .to_string();
    for secret in ["C9BIDVFrVHCM6GyG", "lwkr41xwpy98ywjt", "Dr5t39By2H1rIQwz"] {
        assert!(!out.contains(secret), "{secret} in {out}");
    }
    assert!(
        out.contains(r#"\"user\":\"bob\""#) || out.contains(r#""user":"bob""#),
        "{out}"
    );
}
