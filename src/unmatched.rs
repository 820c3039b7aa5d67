//! `--log-unmatched`: every failure no rule matched (decided by the fallback model or by
//! nothing), appended to a file as one JSON line
//! (`time`, `tool`, `source`, `code`, `text`), the input `classify --jsonl` and `coverage` read.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::json;

use crate::render::StructuredError;
use crate::taxonomy::Source;

pub struct UnmatchedLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl UnmatchedLog {
    pub fn open(path: &Path) -> std::io::Result<UnmatchedLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(UnmatchedLog {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// Appends the failure if no rule matched it. A write error is logged, never fatal: the
    /// session matters more than the record.
    pub fn record(&self, tool: &str, error: &StructuredError) {
        if let Some(line) = record_line(tool, error, SystemTime::now()) {
            self.append(&line);
        }
    }

    /// Appends a line made by [`record_line`]; a write error is logged, as for [`Self::record`].
    pub fn append(&self, line: &str) {
        let mut file = crate::sync::lock(&self.file);
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::warn!("cannot append to {}: {e}", self.path.display());
        }
    }
}

/// The line for an unmatched failure (one the fallback model decided counts: no rule did);
/// `None` for one a rule decided, or one the proxy made.
pub fn record_line(tool: &str, error: &StructuredError, now: SystemTime) -> Option<String> {
    if crate::classify::decided_by_a_rule(error.rule_id.as_deref())
        || error.original_error.source == Source::Proxy
    {
        return None;
    }
    let record = json!({
        "time": humantime::format_rfc3339_seconds(now).to_string(),
        "tool": tool,
        "source": error.original_error.source,
        "code": error.original_error.rpc_code,
        "text": error.original_error.text,
    });
    Some(format!("{record}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::unclassified;
    use crate::render::OriginalError;
    use crate::rules::Failure;

    fn error(text: &str, rule: Option<&str>) -> StructuredError {
        let failure = Failure {
            text,
            tool: "t",
            source: Source::Rpc,
            rpc_code: Some(-32000),
        };
        let mut verdict = unclassified(failure);
        verdict.rule_id = rule.map(str::to_owned);
        StructuredError::new(
            verdict,
            None,
            None,
            OriginalError {
                source: Source::Rpc,
                text: text.into(),
                rpc_code: Some(-32000),
                rpc_data: None,
            },
        )
    }

    #[test]
    fn records_only_unmatched_failures() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        assert_eq!(
            record_line("t", &error("odd", None), at).unwrap(),
            "{\"time\":\"2027-01-15T08:00:00Z\",\"tool\":\"t\",\"source\":\"rpc\",\"code\":-32000,\"text\":\"odd\"}\n"
        );
        assert_eq!(record_line("t", &error("known", Some("r")), at), None);
    }
}
