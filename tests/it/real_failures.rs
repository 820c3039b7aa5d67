//! The default rules against failures recorded verbatim from real MCP servers by real SDK
//! clients (tests/fixtures/real-failures.jsonl, a copy of shared/fixtures): every failure is
//! rewritten and classified as expected; every success and empty result passes untouched.

use std::sync::{Arc, LazyLock};

use mcp_errnorm::render::Profile;
use mcp_errnorm::rewrite::{Answer, Rewriter};
use mcp_errnorm::rules::RuleSet;
use mcp_errnorm::session::{Answered, Session};
use mcp_errnorm::wire::{self, Line, Message};
use serde_json::Value;

/// Expected (category, code, retryable) by situation label.
fn expected(label: &str) -> (&'static str, &'static str, bool) {
    match label {
        "enoent_read" | "enoent_parent" | "enoent_get_file_info" | "enoent_list_directory" => {
            ("validation", "NOT_FOUND", false)
        }
        "unknown_tool" | "edit_no_match" => ("validation", "NOT_FOUND", false),
        "access_denied_outside"
        | "access_denied_symlink"
        | "access_denied_traversal"
        | "access_denied_write_outside"
        | "noroots_read" => ("permission", "PERMISSION_DENIED", false),
        "eexist_move" => ("validation", "ALREADY_EXISTS", false),
        "gzip_conn_refused" => ("transient", "SYSTEM_UNAVAILABLE", true),
        "eisdir_read"
        | "enotdir_list"
        | "head_and_tail"
        | "gzip_bad_protocol"
        | "schema_bad_enum"
        | "schema_missing_arg"
        | "schema_out_of_range"
        | "schema_wrong_type"
        | "schema_empty_array"
        | "invalid_target_timezone"
        | "invalid_time_format"
        | "invalid_timezone" => ("validation", "VALIDATION_ERROR", false),
        other => panic!("no expectation for failure '{other}': add one"),
    }
}

fn records() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/real-failures.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs a recorded request and response through the session and rewriter, as the relay does.
fn through_proxy(record: &Value) -> Option<Value> {
    static REWRITER: LazyLock<Rewriter> = LazyLock::new(|| Rewriter {
        rules: Arc::new(RuleSet::defaults()),
        profile: Profile::Mcp,
        rewrite_rpc_errors: true,
        not_found_is_empty: globset::GlobSet::empty(),
        redactor: mcp_errnorm::redact::Redactor::defaults(),
        hidden_failures: true,
    });
    let rewriter = &*REWRITER;
    let mut session = Session::default();
    let request = record["request_raw"].as_str().unwrap();
    let Line::Message(Message::Request { id, method, params }) = wire::parse(request) else {
        panic!("not a request: {request}")
    };
    session.client_request(id, &method, params);
    let response = record["response_raw"].as_str().unwrap();
    let (id, answer) = match wire::parse(response) {
        Line::Message(Message::Response { id, result }) => (id, Answer::Result(result)),
        Line::Message(Message::ErrorResponse { id, error }) => (id, Answer::Error(error)),
        _ => panic!("not a response: {response}"),
    };
    let result = match answer {
        Answer::Result(r) => Some(r),
        Answer::Error(_) => None,
    };
    let Answered::Call(answered) = session.upstream_answer(id, result) else {
        panic!("not a tools/call answer: {response}")
    };
    rewriter.rewrite(&answered, answer).map(|r| r.result)
}

#[test]
fn every_recorded_failure_is_structured_and_classified_as_expected() {
    let mut failures = 0;
    for record in records() {
        let kind = record["kind"].as_str().unwrap();
        if kind != "isError" && kind != "jsonrpc_error" {
            continue;
        }
        failures += 1;
        let label = record["label"].as_str().unwrap();
        let result = through_proxy(&record).unwrap_or_else(|| panic!("{label}: not rewritten"));
        let error = &result["_meta"]["mcp-errnorm/error"];
        let (category, code, retryable) = expected(label);
        let context = format!("{} {label}: {}", record["server"], record["text"]);
        assert_eq!(error["errorCategory"], category, "{context}");
        assert_eq!(error["errorCode"], code, "{context}");
        assert_eq!(error["isRetryable"], retryable, "{context}");
        assert!(
            error["ruleId"].is_string(),
            "{context}: classified by a rule"
        );
        assert_eq!(
            error["originalError"]["text"], record["text"],
            "{context}: text kept verbatim"
        );
        assert_eq!(
            error["attempted_query"]["arguments"], record["arguments"],
            "{context}"
        );
    }
    assert_eq!(failures, 93, "every failure in the recording was checked");
}

#[test]
fn every_recorded_success_and_empty_result_passes_untouched() {
    let mut passed = 0;
    for record in records() {
        let kind = record["kind"].as_str().unwrap();
        if kind == "success" || kind == "empty" {
            passed += 1;
            assert_eq!(through_proxy(&record), None, "{}", record["label"]);
        }
    }
    assert!(passed >= 40, "{passed}");
}
