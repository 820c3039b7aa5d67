//! Progress through the proxy's own retries. A retry sends the client's request again, progress
//! token and all, and the server counts from the start again; but MCP says "the progress value
//! MUST increase with each notification". So a retry's progress goes on from what the client
//! last saw, and what would not increase is dropped. Until a call is retried, progress passes
//! as it came. Pure.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Map;

use crate::wire::IdKey;

/// The progress the client has seen of one call, carried with the call through its retries.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub token: IdKey,
    /// The last value the client was told.
    last: Option<f64>,
    /// Where the current attempt's count starts, once the call was retried.
    base: Option<f64>,
}

/// What becomes of a progress notification.
#[derive(Debug, PartialEq)]
pub enum ProgressLine {
    /// Forwarded as it came.
    Pass,
    /// Not forwarded: it would not increase.
    Drop,
    /// Forwarded as this line instead.
    Send(Vec<u8>),
}

impl Progress {
    pub fn new(token: IdKey) -> Progress {
        Progress {
            token,
            last: None,
            base: None,
        }
    }

    /// A retry begins: its count goes on from what the client last saw.
    pub fn restart(&mut self) {
        self.base = Some(self.last.unwrap_or(0.0));
    }

    /// A progress notification of this call, with the `params` the server sent.
    pub fn notify(&mut self, params: &RawValue) -> ProgressLine {
        #[derive(Deserialize)]
        struct Numbers {
            progress: f64,
            total: Option<f64>,
        }
        let Ok(Numbers { progress, total }) = serde_json::from_str(params.get()) else {
            return ProgressLine::Pass;
        };
        let Some(base) = self.base else {
            self.last = Some(progress);
            return ProgressLine::Pass;
        };
        let progress = base + progress;
        if self.last.is_some_and(|last| progress <= last) {
            return ProgressLine::Drop;
        }
        self.last = Some(progress);
        ProgressLine::Send(line(params, progress, total.map(|t| base + t)))
    }
}

/// The notification with its `progress` (and `total`) moved on; every other member kept.
fn line(params: &RawValue, progress: f64, total: Option<f64>) -> Vec<u8> {
    let mut params: Map<String, serde_json::Value> =
        serde_json::from_str(params.get()).unwrap_or_default();
    params.insert("progress".into(), progress.into());
    if let Some(total) = total {
        params.insert("total".into(), total.into());
    }
    let params = serde_json::to_string(&params).expect("a map serializes");
    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{params}}}\n")
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notify(p: &mut Progress, params: &str) -> ProgressLine {
        p.notify(&RawValue::from_string(params.to_owned()).unwrap())
    }

    fn sent(line: ProgressLine) -> serde_json::Value {
        match line {
            ProgressLine::Send(line) => serde_json::from_slice(&line).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn progress_passes_until_a_retry_then_goes_on_from_what_the_client_saw() {
        let mut p = Progress::new(IdKey::Str("tok".into()));
        let first = r#"{"progressToken":"tok","progress":1,"total":3,"message":"a"}"#;
        assert_eq!(notify(&mut p, first), ProgressLine::Pass);
        assert_eq!(
            notify(&mut p, r#"{"progressToken":"tok","progress":2}"#),
            ProgressLine::Pass
        );
        p.restart();
        // The retry counts from the start again: 1 of 3 is 3 of 5 to the client.
        let moved = sent(notify(&mut p, first));
        assert_eq!(
            moved,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "tok", "progress": 3.0, "total": 5.0, "message": "a"}})
        );
        // Not increasing: dropped.
        assert_eq!(
            notify(&mut p, r#"{"progressToken":"tok","progress":0}"#),
            ProgressLine::Drop
        );
        assert_eq!(
            sent(notify(&mut p, r#"{"progressToken":"tok","progress":2}"#))["params"]["progress"],
            4.0
        );
        // A second retry goes on from there.
        p.restart();
        assert_eq!(
            sent(notify(&mut p, r#"{"progressToken":"tok","progress":0.5}"#))["params"]["progress"],
            4.5
        );
    }

    #[test]
    fn what_is_not_progress_passes() {
        let mut p = Progress::new(IdKey::Int(1));
        p.restart();
        assert_eq!(
            notify(&mut p, r#"{"progressToken":1,"progress":"lots"}"#),
            ProgressLine::Pass
        );
    }
}
