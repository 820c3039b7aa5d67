//! Rule-file loading on arbitrary text: `RuleSet::load` must answer with a rule set or with
//! diagnostics, never panic; a rule set that loads must classify any failure without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_errnorm::classify::classify;
use mcp_errnorm::diagnostic::SourceFile;
use mcp_errnorm::rules::{Failure, RuleSet};
use mcp_errnorm::taxonomy::Source;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match RuleSet::load(&[SourceFile::new("fuzz.toml", text.as_ref())], &[]) {
        Err(diagnostics) => {
            let _ = diagnostics.to_string();
        }
        Ok(rules) => {
            // The rule file's own text is a failure text that tends to match its rules.
            for (text, source, code) in [
                (text.as_ref(), Source::Result, None),
                (text.as_ref(), Source::Rpc, Some(-32602)),
                ("ENOENT: no such file or directory", Source::Result, None),
                ("", Source::Rpc, None),
            ] {
                for tool in ["read_file", "orders_update", ""] {
                    let verdict = classify(
                        &rules,
                        Failure {
                            text,
                            tool,
                            source,
                            rpc_code: code,
                        },
                    );
                    let _ = verdict.message.len();
                }
            }
        }
    }
});
