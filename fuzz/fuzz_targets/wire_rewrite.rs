//! The relay's per-line logic (`relay::Inspector`: envelope parser, session, rewriter). The
//! input is a session, one line per `\n`; a line whose first byte is odd comes from the client,
//! else from the upstream (that byte is dropped). Checks: nothing panics, client lines pass
//! unchanged, an upstream line is dropped only when it is not JSON, passes as it came (invalid
//! UTF-8 in it as U+FFFD), or is a failed `CallToolResult` answering the same id.
#![no_main]

use std::collections::HashMap;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::recovery::Policy;
use mcp_errnorm::relay::Inspector;
use mcp_errnorm::rewrite::Rewriter;
use mcp_errnorm::wire::IdKey;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// A message's members, each as raw JSON.
type Members = HashMap<String, Box<RawValue>>;

#[derive(Deserialize)]
struct Rewritten {
    #[serde(rename = "isError")]
    is_error: bool,
    #[serde(rename = "_meta")]
    meta: HashMap<String, IgnoredAny>,
}

static REWRITER: LazyLock<Rewriter> = LazyLock::new(|| {
    Settings::load(&Flags::default())
        .expect("default settings")
        .rewriter()
});

/// The relay's per-line logic, without local retries (a retried failure answers nothing yet).
fn inspector() -> Inspector {
    Inspector::new(REWRITER.clone(), Policy::without_retries())
}

fuzz_target!(|data: &[u8]| {
    let inspector = inspector();
    for chunk in data.split(|b| *b == b'\n') {
        let Some((&selector, line)) = chunk.split_first() else {
            continue;
        };
        if selector & 1 == 1 {
            let effects = inspector.client_line(line.to_vec());
            assert_eq!(effects.to_upstream[0], line, "a client line changed");
            continue;
        }
        let mut effects = inspector.upstream_line(line.to_vec());
        assert!(effects.to_client.len() <= 1, "one line in, one out at most");
        // Read as JSON text (numbers of any size, a member given twice: its last value), as
        // the proxy reads it; a `Value` would refuse a number like 1e999.
        let text = String::from_utf8_lossy(line);
        match effects.to_client.pop() {
            // Only what is no message: not JSON, or a bare value (no object, no batch).
            None => assert!(
                serde_json::from_str::<IgnoredAny>(&text).is_err()
                    || !text.trim_start().starts_with(['{', '[']),
                "a JSON message was dropped"
            ),
            // Invalid UTF-8 reaches the client as U+FFFD, the rest as it came.
            Some(out) if out == text.as_bytes() => {}
            Some(out) => {
                let new: Members = serde_json::from_slice(&out).expect("a rewritten line is JSON");
                // serde skips the envelope's other members unchecked, so a line with invalid
                // UTF-8 in, say, "jsonrpc" is still read (and rewritten): compare it lossily.
                let old: Members = serde_json::from_str(&text).expect("only JSON is rewritten");
                let id = |m: &Members| m.get("id").and_then(|id| IdKey::new(id));
                assert_eq!(id(&new), id(&old), "the id changed");
                let result: Rewritten =
                    serde_json::from_str(new["result"].get()).expect("a CallToolResult");
                assert!(result.is_error);
                assert!(result.meta.contains_key("mcp-errnorm/error"));
            }
        }
    }
    // Whatever is left pending is answered by the proxy itself.
    let mut left = inspector.upstream_gone("exited");
    for line in inspector.answer_gone(&mut left, usize::MAX) {
        serde_json::from_slice::<IgnoredAny>(&line).expect("an upstream-gone answer is JSON");
    }
});
