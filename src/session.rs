//! What the proxy knows about the conversation: the client's requests still waiting for an
//! answer (and the proxy's own retries of them), the tools the upstream declared, and the
//! protocol version in force. Knows MCP, not bytes or processes.
//!
//! The table is keyed by the id the *upstream* answers under: the client's own id, or for a
//! retry the proxy's id. Every answer from the upstream answers one of these, so the server's
//! own id space (its requests to the client) never meets this table.
//!
//! `attempts.rs` holds what the proxy does to a call on its own (retries, time limits, answers
//! before the upstream); `params.rs` the few members read from requests and answers;
//! `progress.rs` the progress notifications of retried calls.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::IdKey;

mod attempts;
mod params;
mod progress;

pub use attempts::Expired;
use params::{
    parse, CallParams, Cancelled, CursorField, ProgressToken, ToolsListResult, VersionField,
};
pub use progress::{Progress, ProgressLine};

/// The table type looked up on every message (see `foldhash` in Cargo.toml).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The prefix of the ids the proxy gives its own requests (retries). The process id and a
/// counter follow, so they cannot meet a client's ids by accident.
const PROXY_ID_PREFIX: &str = "mcp-errnorm/";
/// How many timed-out or cancelled ids are remembered so that their late answers are dropped.
const ABANDONED_MEMORY: usize = 4096;
/// How many cancelled ids that matched no waiting request are remembered: a cancel races an
/// answer by microseconds, not by thousands of requests.
const CANCELLED_MEMORY: usize = 4096;
/// How many answered ids are remembered so that a second answer to one is dropped: a server
/// that answers twice does so at once, not thousands of answers later.
const ANSWERED_MEMORY: usize = 4096;

/// The protocol version a message is exchanged under, which decides what a result may carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protocol(pub Option<Arc<str>>);

impl Protocol {
    /// `structuredContent` exists since 2025-06-18. An unknown version gets it: clients of older
    /// versions ignore fields they do not know.
    pub fn has_structured_content(&self) -> bool {
        self.0.as_deref().is_none_or(|v| v >= "2025-06-18")
    }

    /// Every result carries `resultType` since 2026-07-28.
    pub fn has_result_type(&self) -> bool {
        self.0.as_deref().is_some_and(|v| v >= "2026-07-28")
    }
}

/// A `tools/call` waiting for its answer.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub name: String,
    /// The request's params as the client sent them, for sending it again (and the arguments
    /// in them, read only when a failure shows them).
    pub params: Box<RawValue>,
    /// Set by a 2026-07-28 request's `_meta`, which overrides the session's version.
    pub protocol_version: Option<String>,
    /// A task-augmented call: its answer is a task handle, never a failure to rewrite.
    pub task: bool,
    /// Names this call across its retries (timeouts find it by this).
    pub seq: u64,
    /// When the proxy gives up on it (`[timeouts]`), whatever attempt it is at by then.
    pub deadline: Option<Deadline>,
    /// What the client saw of its progress, when it asked for progress (boxed: most calls
    /// ask for none).
    pub progress: Option<Box<Progress>>,
}

/// When a call is given up on, and the limit that put it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    pub at: Instant,
    pub limit: Duration,
}

/// A request waiting for its answer.
#[derive(Debug)]
pub struct Pending {
    /// The client's id, original bytes: every answer goes back under it.
    pub id: Box<RawValue>,
    pub kind: PendingKind,
    /// 1 for the client's own request, 2 and up for the proxy's retries of it.
    pub attempt: u32,
    /// The id the upstream was asked under, for a retry; `None`: the client's own.
    pub upstream_id: Option<Box<RawValue>>,
    /// While a retry waits out its backoff, unsent: the answer the client gets if it is never
    /// sent (the failure it is a retry of, rewritten).
    pub unsent_retry: Option<Vec<u8>>,
}

#[derive(Debug)]
pub enum PendingKind {
    ToolCall(ToolCall),
    /// `first_page`: a listing without a cursor replaces what is known.
    ToolsList {
        first_page: bool,
    },
    Initialize,
    Other {
        method: String,
    },
}

impl PendingKind {
    pub fn method(&self) -> &str {
        match self {
            PendingKind::ToolCall(_) => "tools/call",
            PendingKind::ToolsList { .. } => "tools/list",
            PendingKind::Initialize => "initialize",
            PendingKind::Other { method } => method,
        }
    }
}

/// What the upstream declared about a tool in `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ToolInfo {
    #[serde(skip)]
    pub has_output_schema: bool,
    #[serde(rename = "readOnlyHint")]
    pub read_only: Option<bool>,
    #[serde(rename = "idempotentHint")]
    pub idempotent: Option<bool>,
    #[serde(rename = "destructiveHint")]
    pub destructive: Option<bool>,
}

impl ToolInfo {
    /// What two declarations of one tool allow together: read-only or idempotent only if both
    /// say so, destructive if either does, an output schema if either has one (which keeps
    /// `structuredContent` out of a rewritten error).
    pub fn safer(self, other: ToolInfo) -> ToolInfo {
        let both = |a: Option<bool>, b: Option<bool>| match (a, b) {
            (Some(true), Some(true)) => Some(true),
            (Some(false), _) | (_, Some(false)) => Some(false),
            _ => None,
        };
        let either = |a: Option<bool>, b: Option<bool>| match (a, b) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), _) | (_, Some(false)) => Some(false),
            _ => None,
        };
        ToolInfo {
            has_output_schema: self.has_output_schema || other.has_output_schema,
            read_only: both(self.read_only, other.read_only),
            idempotent: both(self.idempotent, other.idempotent),
            destructive: either(self.destructive, other.destructive),
        }
    }
}

/// An answered (or abandoned) `tools/call`, with what is needed to answer the client.
#[derive(Debug)]
pub struct AnsweredCall {
    /// The id as the client spelled it: an answer goes back under the client's own id.
    pub id: Box<RawValue>,
    /// The id the upstream answered under, for a retry; `None`: the client's own.
    pub upstream_id: Option<Box<RawValue>>,
    pub call: ToolCall,
    pub tool: Option<ToolInfo>,
    pub protocol: Protocol,
    pub attempt: u32,
}

impl AnsweredCall {
    /// The id the upstream was asked under.
    pub fn upstream_id(&self) -> &RawValue {
        self.upstream_id.as_deref().unwrap_or(&self.id)
    }
}

/// What an upstream answer is to the session.
#[derive(Debug)]
pub enum Answered {
    /// The answer to a `tools/call` that may be rewritten (or retried).
    Call(AnsweredCall),
    /// An answer the client must not see: to a retry nobody waits for any more, or to a call
    /// the proxy already answered with a timeout.
    Drop,
    /// A second answer to a request the upstream answered already: the client must not see it
    /// (it could settle the call on a failure a retry has since overcome).
    Duplicate,
    /// Anything else: passes as it is.
    Pass,
}

/// A request the upstream never answered.
#[derive(Debug)]
pub enum Unanswered {
    Call(AnsweredCall),
    Request {
        id: Box<RawValue>,
        method: String,
    },
    /// A call whose retry was never sent: the answer it gets instead.
    RetryNotSent(Vec<u8>),
}

#[derive(Debug, Default)]
pub struct Session {
    pending: FastMap<IdKey, Pending>,
    /// For each tool call (by `seq`), the key its current attempt waits under.
    calls: FastMap<u64, IdKey>,
    /// The tool call (`seq`) each progress token belongs to.
    progress: FastMap<IdKey, u64>,
    /// The tool calls that have a deadline, earliest first.
    deadlines: BTreeSet<(Instant, u64)>,
    /// Client ids settled without the upstream's answer, whose late answers are dropped: the
    /// proxy answered them (timeout), or the client cancelled them (it ignores an answer after
    /// that, and SDKs log one as an answer to an unknown request).
    abandoned: Remembered,
    /// Client ids cancelled while no request waited under them: a failed call being settled
    /// (its first answer read, its retry not yet registered) must not be retried.
    cancelled: Remembered,
    /// Client ids the upstream answered lately ([`ANSWERED_MEMORY`]): another answer to one
    /// is dropped.
    answered: Remembered,
    /// Client ids sent again while a request under them was in flight, with how many answers
    /// beyond the first each is still owed: those are the server's to give, not duplicates.
    reused: FastMap<IdKey, u32>,
    tools: FastMap<String, ToolInfo>,
    /// From `initialize`: the client's request, then the server's answer.
    version: Option<Arc<str>>,
    /// The client's `initialize` params, to replay to a restarted upstream.
    init_params: Option<Box<RawValue>>,
    next_seq: u64,
}

/// A tool call the client just sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCall {
    pub seq: u64,
    pub tool: String,
    /// Task-augmented: answered with a task handle, so the proxy never answers it itself
    /// with a `CallToolResult` (no breaker, no timeout).
    pub task: bool,
}

impl Session {
    /// A request from the client, on its way to the upstream. Returns the call when it is a
    /// `tools/call`.
    // Long: one match over the methods the session follows, each arm a few lines.
    pub fn client_request(
        &mut self,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<NewCall> {
        let Some(key) = IdKey::new(id) else {
            tracing::warn!(
                id = id.get(),
                "request with an id that is neither a string nor a number (or one beyond f64)"
            );
            return None;
        };
        let mut new_call = None;
        let kind = match method {
            "tools/call" => match (parse::<CallParams>(params), params) {
                (Some(p), Some(raw)) => {
                    self.next_seq += 1;
                    let seq = self.next_seq;
                    new_call = Some(NewCall {
                        seq,
                        tool: p.name.clone(),
                        task: p.task.is_some(),
                    });
                    let (protocol_version, token) = p
                        .meta
                        .map_or((None, None), |m| (m.protocol_version, m.progress_token));
                    let call = ToolCall {
                        name: p.name,
                        params: raw.to_owned(),
                        protocol_version,
                        task: p.task.is_some(),
                        seq,
                        deadline: None,
                        progress: token
                            .and_then(IdKey::new)
                            .map(|t| Box::new(Progress::new(t))),
                    };
                    self.track(&call, key.clone());
                    PendingKind::ToolCall(call)
                }
                // Without a tool name there is nothing to classify by: let the answer pass.
                _ => PendingKind::Other {
                    method: method.to_owned(),
                },
            },
            "tools/list" => PendingKind::ToolsList {
                first_page: parse::<CursorField>(params).is_none_or(|c| c.cursor.is_none()),
            },
            "initialize" => {
                if let Some(v) = parse::<VersionField>(params).and_then(|v| v.protocol_version) {
                    self.version = Some(v.into());
                }
                self.init_params = params.map(ToOwned::to_owned);
                PendingKind::Initialize
            }
            _ => PendingKind::Other {
                method: method.to_owned(),
            },
        };
        let pending = Pending {
            id: id.to_owned(),
            kind,
            attempt: 1,
            upstream_id: None,
            unsent_retry: None,
        };
        self.abandoned.forget(&key);
        self.cancelled.forget(&key);
        self.answered.forget(&key);
        if let Some(old) = self.pending.insert(key.clone(), pending) {
            // Bounded like the memory of answers: past it, the extra answer is dropped.
            if self.reused.len() < ANSWERED_MEMORY || self.reused.contains_key(&key) {
                *self.reused.entry(key).or_insert(0) += 1;
            }
            tracing::warn!(
                id = id.get(),
                method = old.kind.method(),
                "the client reused the id of a request still in flight; the first is forgotten"
            );
            if let PendingKind::ToolCall(call) = old.kind {
                self.untrack(&call);
            }
        }
        new_call
    }

    /// A notification from the client. After `notifications/cancelled` the client ignores the
    /// answer, so the request is forgotten and its answer, if one comes, is dropped.
    /// Returns the id of a proxy retry the upstream is working on, to cancel it too.
    pub fn client_notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Box<RawValue>> {
        if method != "notifications/cancelled" {
            return None;
        }
        let client_key = parse::<Cancelled>(params).and_then(|c| IdKey::new(c.request_id))?;
        // The call may be waiting under a retry's id by now.
        let retry = || {
            self.pending
                .iter()
                .find(|(_, p)| p.attempt > 1 && IdKey::new(&p.id).as_ref() == Some(&client_key))
                .map(|(k, _)| k.clone())
        };
        let key = if self.pending.contains_key(&client_key) {
            self.abandoned
                .remember(client_key.clone(), ABANDONED_MEMORY);
            client_key
        } else if let Some(key) = retry() {
            key
        } else {
            // Nothing waits under it: it was answered, or its failure is being settled right
            // now and may be about to be retried ([`Session::retry`] looks here).
            self.cancelled.remember(client_key, CANCELLED_MEMORY);
            return None;
        };
        let pending = self.pending.remove(&key)?;
        if let PendingKind::ToolCall(call) = &pending.kind {
            self.untrack(call);
        }
        // A retry still in its backoff was never sent: nothing to cancel upstream.
        pending
            .unsent_retry
            .is_none()
            .then_some(pending.upstream_id)?
    }

    /// The `tools/call` with these `params` as if it had been answered at once, without
    /// registering it: for a call the proxy refuses before it reaches the upstream. `None` for
    /// one with no tool name, or a task-augmented one (which expects a task handle).
    pub fn unregistered_call(
        &self,
        id: &RawValue,
        params: Option<&RawValue>,
    ) -> Option<AnsweredCall> {
        let (p, raw) = (parse::<CallParams>(params)?, params?);
        if p.task.is_some() {
            return None;
        }
        let call = ToolCall {
            name: p.name,
            params: raw.to_owned(),
            protocol_version: p.meta.and_then(|m| m.protocol_version),
            task: false,
            seq: 0,
            deadline: None,
            progress: None,
        };
        Some(self.answered(id.to_owned(), None, call, 1))
    }

    /// Whether the request `id` still waits for its answer.
    pub fn waits(&self, id: &RawValue) -> bool {
        IdKey::new(id).is_some_and(|key| self.pending.contains_key(&key))
    }

    /// The request a `notifications/cancelled` with these `params` cancels, if it names one.
    pub fn cancelled(params: Option<&RawValue>) -> Option<&RawValue> {
        parse::<Cancelled>(params).map(|c| c.request_id)
    }

    /// Looks up what an upstream answer answers, and forgets the request.
    pub fn upstream_answer(&mut self, id: &RawValue, result: Option<&RawValue>) -> Answered {
        let Some(key) = IdKey::new(id) else {
            return Answered::Pass;
        };
        let Some(pending) = self.pending.remove(&key) else {
            if is_proxy_id(&key) || self.abandoned.forget(&key) {
                return Answered::Drop;
            }
            if let Some(owed) = self.reused.get_mut(&key) {
                *owed -= 1;
                if *owed == 0 {
                    self.reused.remove(&key);
                }
                return Answered::Pass;
            }
            if self.answered.contains(&key) {
                return Answered::Duplicate;
            }
            return Answered::Pass;
        };
        // A retry's answer comes under the proxy's id; the client's was remembered when the
        // first attempt was answered.
        if !is_proxy_id(&key) {
            self.answered.remember(key, ANSWERED_MEMORY);
        }
        match pending.kind {
            PendingKind::ToolCall(call) => {
                self.untrack(&call);
                if call.task {
                    return Answered::Pass;
                }
                Answered::Call(self.answered(
                    pending.id,
                    pending.upstream_id,
                    call,
                    pending.attempt,
                ))
            }
            PendingKind::ToolsList { first_page } => {
                self.learn_tools(result, first_page);
                Answered::Pass
            }
            PendingKind::Initialize => {
                if let Some(v) = parse::<VersionField>(result).and_then(|v| v.protocol_version) {
                    self.version = Some(v.into());
                }
                Answered::Pass
            }
            PendingKind::Other { .. } => Answered::Pass,
        }
    }

    /// Whether a long answer may stream to the client unread, given its id if that came before
    /// the cut: only when nothing the proxy must read whole could be in it (a `tools/list`, an
    /// `initialize`, a retry's answer, a success some rule reads, by `inspects`; and, when the
    /// id is known, one to drop).
    /// A tool call's failure that streams is not rewritten: the price of not holding it.
    pub fn may_stream(&self, id: Option<&IdKey>, inspects: impl Fn(&str) -> bool) -> bool {
        let streamable = |p: &Pending| {
            p.attempt == 1
                && match &p.kind {
                    PendingKind::ToolCall(call) => call.task || !inspects(&call.name),
                    PendingKind::Other { .. } => true,
                    PendingKind::ToolsList { .. } | PendingKind::Initialize => false,
                }
        };
        match id {
            Some(key) => match self.pending.get(key) {
                Some(pending) => streamable(pending),
                None => {
                    !is_proxy_id(key)
                        && !self.abandoned.contains(key)
                        && !self.answered.contains(key)
                }
            },
            // The id comes later (servers on the TypeScript SDK write it last): it could be any
            // of them. Only for long lines, so walking the table is cheap beside them. A late
            // answer to a timed-out call may then reach the client after its TIMEOUT error, as
            // an answer to an id it no longer waits for (clients ignore those): holding every
            // long answer for the rest of the session after one timeout would cost more.
            None => self.pending.values().all(streamable),
        }
    }

    /// Whether an answer under `key` would be dropped ([`Answered::Drop`] or
    /// [`Answered::Duplicate`]), without settling anything.
    pub fn drops_answer(&self, key: &IdKey) -> bool {
        !self.pending.contains_key(key)
            && (is_proxy_id(key) || self.abandoned.contains(key) || self.answered.contains(key))
    }

    /// A tool call waits under `key` (again, for a retry).
    fn track(&mut self, call: &ToolCall, key: IdKey) {
        if let Some(p) = &call.progress {
            self.progress.insert(p.token.clone(), call.seq);
        }
        self.calls.insert(call.seq, key);
        if let Some(d) = call.deadline {
            self.deadlines.insert((d.at, call.seq));
        }
    }

    /// A tool call no longer waits (answered, cancelled, expired, replaced).
    fn untrack(&mut self, call: &ToolCall) {
        self.calls.remove(&call.seq);
        // Only if the token is still this call's: a call that took over its id may have the
        // same token (the TypeScript SDK uses the request's id as its progress token).
        if let Some(p) = &call.progress {
            if self.progress.get(&p.token) == Some(&call.seq) {
                self.progress.remove(&p.token);
            }
        }
        if let Some(d) = call.deadline {
            self.deadlines.remove(&(d.at, call.seq));
        }
    }

    /// What becomes of the upstream's `notifications/progress` with these params: as it came,
    /// unless it belongs to a call the proxy retried ([`Progress`]).
    pub fn upstream_progress(&mut self, params: Option<&RawValue>) -> ProgressLine {
        let kind = parse::<ProgressToken>(params)
            .and_then(|p| IdKey::new(p.token))
            .and_then(|token| self.progress.get(&token))
            .and_then(|seq| self.calls.get(seq))
            .and_then(|key| self.pending.get_mut(key))
            .map(|pending| &mut pending.kind);
        match (kind, params) {
            (Some(PendingKind::ToolCall(call)), Some(params)) => call
                .progress
                .as_mut()
                .map_or(ProgressLine::Pass, |progress| progress.notify(params)),
            _ => ProgressLine::Pass,
        }
    }

    fn learn_tools(&mut self, result: Option<&RawValue>, first_page: bool) {
        let Some(listing) = parse::<ToolsListResult>(result) else {
            tracing::debug!("a tools/list answer the proxy could not read; tools unchanged");
            return;
        };
        if first_page {
            self.tools.clear();
        }
        for tool in listing.tools {
            let info = ToolInfo {
                has_output_schema: tool.output_schema.is_some(),
                ..tool.annotations.unwrap_or_default()
            };
            // A tool named twice (in one listing, or on two of its pages) is taken at its
            // safer reading, whichever order the server wrote them in.
            let info = match self.tools.remove(&tool.name) {
                Some(known) => known.safer(info),
                None => info,
            };
            self.tools.insert(tool.name, info);
        }
        tracing::debug!(tools = self.tools.len(), "learned tools from tools/list");
    }

    fn answered(
        &self,
        id: Box<RawValue>,
        upstream_id: Option<Box<RawValue>>,
        call: ToolCall,
        attempt: u32,
    ) -> AnsweredCall {
        AnsweredCall {
            id,
            upstream_id,
            tool: self.tools.get(&call.name).cloned(),
            protocol: Protocol(
                call.protocol_version
                    .as_deref()
                    .map(Arc::from)
                    .or_else(|| self.version.clone()),
            ),
            call,
            attempt,
        }
    }

    /// The upstream's tools changed: what was learned may be stale until the next listing, and
    /// a tool not known to lack an outputSchema gets no `structuredContent`.
    pub fn tools_changed(&mut self) {
        self.tools.clear();
    }

    /// The client's `initialize` params, if the session was opened that way (not in the
    /// stateless 2026-07-28 era).
    pub fn initialize_params(&self) -> Option<Box<RawValue>> {
        self.init_params.clone()
    }

    /// What is known of a tool.
    pub fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.get(name)
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Takes every request still waiting, for answering when the upstream is gone.
    pub fn drain_pending(&mut self) -> Vec<Unanswered> {
        self.calls.clear();
        self.deadlines.clear();
        self.progress.clear();
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        pending
            .into_iter()
            .map(|p| match p.kind {
                _ if p.unsent_retry.is_some() => {
                    Unanswered::RetryNotSent(p.unsent_retry.expect("some"))
                }
                // A task-augmented call expects a task handle, not a CallToolResult.
                PendingKind::ToolCall(call) if !call.task => {
                    Unanswered::Call(self.answered(p.id, p.upstream_id, call, p.attempt))
                }
                other => Unanswered::Request {
                    id: p.id,
                    method: other.method().to_owned(),
                },
            })
            .collect()
    }
}

/// A set of ids that forgets its oldest past a given size.
///
/// Each entry carries the number of the event that remembered it, so that an id forgotten and
/// remembered again is not evicted by its first, stale, place in the order.
#[derive(Debug, Default)]
struct Remembered {
    ids: FastMap<IdKey, u64>,
    order: VecDeque<(IdKey, u64)>,
    events: u64,
}

impl Remembered {
    fn remember(&mut self, key: IdKey, most: usize) {
        self.events += 1;
        self.ids.insert(key.clone(), self.events);
        self.order.push_back((key, self.events));
        while self.order.len() > most {
            if let Some((oldest, event)) = self.order.pop_front() {
                if self.ids.get(&oldest) == Some(&event) {
                    self.ids.remove(&oldest);
                }
            }
        }
    }

    fn contains(&self, key: &IdKey) -> bool {
        self.ids.contains_key(key)
    }

    /// Forgets `key` (the client uses it again: what was remembered of it is about the earlier
    /// request); true when it was remembered. Its place in the order goes when it is the oldest.
    fn forget(&mut self, key: &IdKey) -> bool {
        self.ids.remove(key).is_some()
    }
}

fn is_proxy_id(key: &IdKey) -> bool {
    matches!(key, IdKey::Str(s) if s.starts_with(PROXY_ID_PREFIX))
}

#[cfg(test)]
mod tests;
