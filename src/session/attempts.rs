//! The calls the proxy handles on its own: the next attempt of a failed call (and its answer
//! if that attempt is never sent), time limits, and calls answered before they reach the
//! upstream.

use std::time::Instant;

use serde_json::value::RawValue;

use super::{
    is_proxy_id, AnsweredCall, Deadline, Pending, PendingKind, Session, ABANDONED_MEMORY,
    PROXY_ID_PREFIX,
};
use crate::wire::IdKey;

/// A call whose time is up.
#[derive(Debug)]
pub struct Expired {
    pub call: AnsweredCall,
    /// The upstream was sent the attempt that timed out, and gets a cancel for it; not so a retry
    /// still in its backoff.
    pub sent: bool,
}

impl Session {
    /// Whether the client cancelled the call `id` while its answer was being settled (after
    /// [`Session::upstream_answer`] took it out of the table): then it must not be retried.
    /// Ask under the same lock as [`Session::retry`], or a cancel can fall between the two.
    pub fn cancelled_meanwhile(&mut self, id: &RawValue) -> bool {
        IdKey::new(id).is_some_and(|client| self.cancelled.forget(&client))
    }

    /// Registers the next attempt of a failed call under a fresh proxy id; returns the request
    /// line to send when its backoff is over. `failure` is the answer the client gets if the
    /// retry is never sent (the failure rewritten).
    pub fn retry(&mut self, mut failed: AnsweredCall, failure: Vec<u8>) -> (IdKey, Vec<u8>) {
        self.next_seq += 1;
        let retry_id = format!("{PROXY_ID_PREFIX}{}/{}", std::process::id(), self.next_seq);
        let raw_id = RawValue::from_string(serde_json::to_string(&retry_id).expect("a string"))
            .expect("a JSON string");
        let key = IdKey::Str(retry_id);
        let mut line = Vec::with_capacity(64 + failed.call.params.get().len());
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        line.extend_from_slice(raw_id.get().as_bytes());
        line.extend_from_slice(b",\"method\":\"tools/call\",\"params\":");
        line.extend_from_slice(failed.call.params.get().as_bytes());
        line.extend_from_slice(b"}\n");
        if let Some(progress) = &mut failed.call.progress {
            progress.restart();
        }
        self.track(&failed.call, key.clone());
        self.pending.insert(
            key.clone(),
            Pending {
                id: failed.id,
                kind: PendingKind::ToolCall(failed.call),
                attempt: failed.attempt + 1,
                upstream_id: Some(raw_id),
                unsent_retry: Some(failure),
            },
        );
        (key, line)
    }

    /// A retry's backoff is over: whether it is still wanted (the client did not cancel, the
    /// call did not time out, the upstream did not die meanwhile), and then it counts as sent.
    pub fn send_retry(&mut self, key: &IdKey) -> bool {
        self.pending
            .get_mut(key)
            .map(|p| p.unsent_retry = None)
            .is_some()
    }

    /// A retry that cannot be sent (the upstream's stdin is closed): the call is forgotten, and
    /// its answer is the failure it was a retry of, if it still waited.
    pub fn abandon_retry(&mut self, key: &IdKey) -> Option<Vec<u8>> {
        self.pending.get(key)?.unsent_retry.as_ref()?;
        let pending = self.pending.remove(key)?;
        if let PendingKind::ToolCall(call) = &pending.kind {
            self.untrack(call);
        }
        pending.unsent_retry
    }

    /// Gives up waiting for a call (its time is up): forgets it, remembers to drop its late
    /// answer, and returns it to be answered.
    pub fn expire(&mut self, seq: u64) -> Option<Expired> {
        let (key, answered, sent) = self.take_call(seq)?;
        if !is_proxy_id(&key) {
            self.abandoned.remember(key, ABANDONED_MEMORY);
        }
        Some(Expired {
            call: answered,
            sent,
        })
    }

    /// Gives the call `seq` a deadline.
    pub fn set_deadline(&mut self, seq: u64, deadline: Deadline) {
        let Some(key) = self.calls.get(&seq).cloned() else {
            return;
        };
        if let Some(Pending {
            kind: PendingKind::ToolCall(call),
            ..
        }) = self.pending.get_mut(&key)
        {
            let old = call.deadline.replace(deadline);
            if let Some(old) = old {
                self.deadlines.remove(&(old.at, seq));
            }
            self.deadlines.insert((deadline.at, seq));
        }
    }

    /// The earliest deadline of the calls still waiting.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|&(at, _)| at)
    }

    /// Gives up on the calls whose deadline is `now` or past ([`Session::expire`]), the
    /// earliest first, at most `most` of them: the others wait for their answer to be made.
    pub fn expire_due(&mut self, now: Instant, most: usize) -> Vec<Expired> {
        let due: Vec<u64> = self
            .deadlines
            .iter()
            .take_while(|&&(at, _)| at <= now)
            .take(most)
            .map(|&(_, seq)| seq)
            .collect();
        due.into_iter().filter_map(|seq| self.expire(seq)).collect()
    }

    /// Forgets a call the proxy answers itself before it reaches the upstream.
    pub fn withdraw(&mut self, seq: u64) -> Option<AnsweredCall> {
        self.take_call(seq).map(|(_, answered, _)| answered)
    }

    /// Forgets the tool call `seq`: the key its attempt waited under, the call, and whether the
    /// upstream was sent that attempt (not a retry still in its backoff).
    fn take_call(&mut self, seq: u64) -> Option<(IdKey, AnsweredCall, bool)> {
        let key = self.calls.remove(&seq)?;
        let pending = self.pending.remove(&key)?;
        let PendingKind::ToolCall(call) = pending.kind else {
            return None;
        };
        self.untrack(&call);
        let sent = pending.unsent_retry.is_none();
        let answered = self.answered(pending.id, pending.upstream_id, call, pending.attempt);
        Some((key, answered, sent))
    }
}
