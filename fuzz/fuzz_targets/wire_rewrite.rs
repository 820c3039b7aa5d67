//! The relay's per-line logic (`relay::Inspector`: envelope parser, session, rewriter). The
//! input is a session, one line per `\n`; a line whose first byte is odd comes from the client,
//! else from the upstream (that byte is dropped). Checks: nothing panics, client lines pass unchanged, an upstream
//! line is dropped only when it is not JSON, and a changed line is a failed `CallToolResult`
//! answering the same id.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::recovery::Policy;
use mcp_errnorm::relay::Inspector;
use mcp_errnorm::rewrite::Rewriter;
use mcp_errnorm::wire::IdKey;
use serde_json::Value;

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
        match effects.to_client.pop() {
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
    // Whatever is left pending is answered by the proxy itself.
    for line in inspector.upstream_gone("exited").to_client {
        serde_json::from_slice::<Value>(&line).expect("an upstream-gone answer is JSON");
    }
});
