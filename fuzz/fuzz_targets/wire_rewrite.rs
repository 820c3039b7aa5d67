//! The envelope parser and the rewriter, as the relay drives them: the input is a session, one
//! line per `\n`; a line whose first byte is odd comes from the client, else from the upstream
//! (that byte is dropped). Checks: nothing panics, client lines pass unchanged, an upstream
//! line is dropped only when it is not JSON, and a changed line is a failed `CallToolResult`
//! answering the same id.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::rewrite::{Answer, Rewriter};
use mcp_errnorm::session::{Answered, Session};
use mcp_errnorm::wire::{self, IdKey, Line, Message};
use serde_json::Value;

static REWRITER: LazyLock<Rewriter> = LazyLock::new(|| {
    Settings::load(&Flags::default())
        .expect("default settings")
        .rewriter()
});

fn upstream_step(session: &mut Session, rewriter: &Rewriter, line: &[u8]) -> Option<Vec<u8>> {
    let (id, answer) = match wire::parse(line) {
        Line::Message(Message::Response { id, result }) => (id, Answer::Result(result)),
        Line::Message(Message::ErrorResponse { id, error }) => (id, Answer::Error(error)),
        Line::Message(_) | Line::OtherJson => return Some(line.to_vec()),
        Line::NotJson => return None,
    };
    let result = match answer {
        Answer::Result(r) => Some(r),
        Answer::Error(_) => None,
    };
    match session.upstream_answer(id, result) {
        Answered::Pass => Some(line.to_vec()),
        Answered::Drop => None,
        Answered::Call(call) => Some(match rewriter.rewrite_json(&call, answer) {
            Some(rewritten) => wire::response_line_json(&call.id, &rewritten.result),
            None => line.to_vec(),
        }),
    }
}

fuzz_target!(|data: &[u8]| {
    let rewriter = &*REWRITER;
    let mut session = Session::default();
    for chunk in data.split(|b| *b == b'\n') {
        let Some((&selector, line)) = chunk.split_first() else {
            continue;
        };
        if selector & 1 == 1 {
            match wire::parse(line) {
                Line::Message(Message::Request { id, method, params }) => {
                    session.client_request(id, &method, params);
                }
                Line::Message(Message::Notification { method, params }) => {
                    session.client_notification(&method, params);
                }
                _ => {}
            }
            continue;
        }
        match upstream_step(&mut session, rewriter, line) {
            None => assert!(
                serde_json::from_slice::<Value>(line).is_err(),
                "a JSON line was dropped"
            ),
            Some(out) if out == line => {}
            Some(out) => {
                let new: Value = serde_json::from_slice(&out).expect("a rewritten line is JSON");
                // serde skips the envelope's other members unchecked, so a line with invalid
                // UTF-8 in, say, "jsonrpc" is still read (and rewritten): compare it lossily.
                let old: Value = serde_json::from_str(&String::from_utf8_lossy(line))
                    .expect("only JSON is rewritten");
                let key = |v: &Value| {
                    IdKey::new(&serde_json::value::RawValue::from_string(v.to_string()).unwrap())
                };
                assert_eq!(key(&new["id"]), key(&old["id"]), "the id changed");
                assert_eq!(new["result"]["isError"], Value::Bool(true));
                assert!(new["result"]["_meta"]["mcp-errnorm/error"].is_object());
            }
        }
    }
    // Whatever is left pending can be answered by the proxy itself.
    for unanswered in session.drain_pending() {
        if let mcp_errnorm::session::Unanswered::Call(call) = unanswered {
            let gone = rewriter.upstream_gone(&call, "exited");
            let line = wire::response_line_json(&call.id, &gone.result);
            serde_json::from_slice::<Value>(&line).expect("an upstream-gone answer is JSON");
        }
    }
});
