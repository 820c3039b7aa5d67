//! The per-line logic of the relay, apart from any I/O: what the session learns from each line,
//! what the client and the upstream receive for it, which retries to schedule and which
//! deadlines to watch. Every entry point returns [`Effects`] for the pumps to carry out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::config::{NonJsonLines, DEFAULT_MAX_PENDING};
use crate::recovery::{Breakers, Policy};
use crate::redact::Redactor;
use crate::reload::SharedRewriter;
use crate::rewrite::{Answer, Handling, Rewriter};
use crate::session::{
    Answered, AnsweredCall, Deadline, Expired, ProgressLine, Session, Unanswered,
};
use crate::sync::lock;
use crate::taxonomy::Category;
use crate::wire::{self, IdKey, Line, Message};

use super::scan::IdScanner;

/// What a line (or a timer) makes the relay do.
#[derive(Debug, Default)]
pub struct Effects {
    pub to_client: Vec<Vec<u8>>,
    pub to_upstream: Vec<Vec<u8>>,
    /// Retries to send after their backoff.
    pub retries: Vec<(Duration, Retry)>,
    /// A call now has this deadline: whoever watches deadlines must look again by then
    /// ([`Inspector::expire_due`]).
    pub deadline: Option<Instant>,
    /// Lines to append to the `--log-unmatched` file (failures no rule matched), when
    /// [`Inspector::log_unmatched`] is on.
    pub unmatched: Vec<String>,
}

/// The next attempt of a failed call, to send unless it is no longer wanted by then.
#[derive(Debug)]
pub struct Retry {
    key: IdKey,
    line: Vec<u8>,
}

/// Why an upstream line was streamed to the client instead of being held whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed {
    /// It is longer than `max_line_bytes`.
    OverLimit,
    /// It is longer than `stream_answers_over` and [`Inspector::may_stream`] let it go;
    /// `may_be_failure` if it mentions `"isError"`.
    Early { may_be_failure: bool },
}

/// Counters for the statistics logged on exit and on SIGUSR1.
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    by_category: [AtomicU64; 5],
    /// Failures by the rule that decided them (`(none)`: no rule did, or the proxy does not
    /// know: a failure rewritten already), and by tool.
    by_rule: Mutex<Tally>,
    by_tool: Mutex<Tally>,
    rewritten: AtomicU64,
    retried: AtomicU64,
    recovered: AtomicU64,
    timed_out: AtomicU64,
    unclassified: AtomicU64,
    circuit_open: AtomicU64,
    too_many_pending: AtomicU64,
}

/// Counts by name, bounded: past [`Tally::MAX_NAMES`] names, new ones count as `(other)` (a
/// server that names a tool per call cannot grow it without end).
#[derive(Debug, Default)]
struct Tally(std::collections::BTreeMap<String, u64>);

impl Tally {
    const MAX_NAMES: usize = 256;
    const OTHER: &'static str = "(other)";

    fn add(&mut self, name: &str) {
        if let Some(n) = self.0.get_mut(name) {
            *n += 1;
            return;
        }
        let name = if self.0.len() < Self::MAX_NAMES {
            name
        } else {
            Self::OTHER
        };
        *self.0.entry(name.to_owned()).or_default() += 1;
    }

    /// As a compact JSON object: `{"name":count,...}`, by name.
    fn json(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings to numbers")
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Whether `counter`, just bumped, went from 0 to 1: a condition logged once, not per line.
fn bump_is_first(counter: &AtomicU64) -> bool {
    counter.load(Ordering::Relaxed) == 1
}

// What the log says when no rule decided a failure, and the `event` field that names each line
// `report` reads: the field, not the message, names the line (messages are prose and may
// change).
use crate::report::{
    EVENT_RECOVERED, EVENT_RETRYING, EVENT_REWRITTEN, EVENT_STATISTICS, EVENT_TIMED_OUT, NO_RULE,
};

impl Stats {
    /// A failure of `tool`, decided by `rule` (if any), counted.
    fn failure(&self, category: Category, tool: &str, rule: Option<&str>) {
        let index = match category {
            Category::Transient => 0,
            Category::Validation => 1,
            Category::Business => 2,
            Category::Permission => 3,
            Category::Unknown => 4,
        };
        bump(&self.by_category[index]);
        lock(&self.by_rule).add(rule.unwrap_or(NO_RULE));
        lock(&self.by_tool).add(tool);
    }

    /// The statistics as one text: the fields of [`Stats::log`], as the text log shows them.
    pub fn summary(&self) -> String {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let [t, v, b, p, u] = &self.by_category;
        format!(
            "calls={} transient={} validation={} business={} permission={} unknown={} \
             rewritten={} retried={} recovered={} timed_out={} unclassified={} circuit_open={} \
             too_many_pending={} by_rule={} by_tool={}",
            n(&self.calls),
            n(t),
            n(v),
            n(b),
            n(p),
            n(u),
            n(&self.rewritten),
            n(&self.retried),
            n(&self.recovered),
            n(&self.timed_out),
            n(&self.unclassified),
            n(&self.circuit_open),
            n(&self.too_many_pending),
            lock(&self.by_rule).json(),
            lock(&self.by_tool).json(),
        )
    }

    /// Logs the statistics at info, each count a field of its own: calls, failures by
    /// category (`transient` ... `unknown`), rewritten, retried, recovered, timed out,
    /// unclassified, refused by a circuit breaker, refused as too many were waiting; and the
    /// failures by rule and by tool (`by_rule`, `by_tool`: compact JSON objects). The counts
    /// are the run's so far: `at_exit` tells the last line of a run from one asked for by
    /// signal, so that `report` counts each run once.
    pub fn log(&self, at_exit: bool) {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let [t, v, b, p, u] = &self.by_category;
        let by_rule = lock(&self.by_rule).json();
        let by_tool = lock(&self.by_tool).json();
        tracing::info!(
            event = EVENT_STATISTICS,
            at_exit,
            calls = n(&self.calls),
            transient = n(t),
            validation = n(v),
            business = n(b),
            permission = n(p),
            unknown = n(u),
            rewritten = n(&self.rewritten),
            retried = n(&self.retried),
            recovered = n(&self.recovered),
            timed_out = n(&self.timed_out),
            unclassified = n(&self.unclassified),
            circuit_open = n(&self.circuit_open),
            too_many_pending = n(&self.too_many_pending),
            by_rule = %by_rule,
            by_tool = %by_tool,
            "statistics"
        );
    }
}

pub struct Inspector {
    /// The wrapped server's name in the log (`--name`, or [`crate::config::server_name`]).
    pub server: String,
    pub session: Mutex<Session>,
    pub rewriter: SharedRewriter,
    pub policy: Policy,
    breakers: Mutex<Breakers>,
    /// Whether failures no rule matched are recorded ([`Effects::unmatched`]).
    pub log_unmatched: bool,
    pub non_json: NonJsonLines,
    /// How many requests may wait for the upstream's answers; past it, a request is answered
    /// at once instead of sent (`max_pending_requests`): what each waiting one holds is what
    /// bounds the proxy's memory.
    pub max_pending: usize,
    pub stats: Stats,
    /// The proxy's own `initialize` to a restarted upstream, and who waits for its answer.
    replay: Mutex<Option<(IdKey, oneshot::Sender<()>)>>,
}

/// The requests an upstream left waiting when it went, answered a part at a time
/// ([`Inspector::answer_gone`]) so that their answers are never all held at once.
#[derive(Debug)]
pub struct Unsettled {
    requests: Vec<Unanswered>,
    how: String,
}

impl Inspector {
    pub fn new(rewriter: Rewriter, policy: Policy) -> Inspector {
        Inspector {
            server: String::new(),
            session: Mutex::new(Session::default()),
            rewriter: Arc::new(ArcSwap::from_pointee(rewriter)),
            policy,
            breakers: Mutex::new(Breakers::default()),
            log_unmatched: false,
            non_json: NonJsonLines::default(),
            max_pending: DEFAULT_MAX_PENDING,
            stats: Stats::default(),
            replay: Mutex::new(None),
        }
    }

    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        lock(&self.session)
    }

    /// How many requests wait for an answer.
    pub fn waiting(&self) -> usize {
        self.session().pending_len()
    }

    /// A line from the client. It goes to the upstream unchanged, unless the tool's circuit
    /// breaker is open (then the proxy answers at once).
    pub fn client_line(&self, line: Vec<u8>) -> Effects {
        let mut effects = Effects::default();
        let text = wire::text_of(&line);
        let extra = match wire::parse(&text) {
            Line::Message(Message::Request { id, method, params })
                if self.waiting() >= self.max_pending =>
            {
                effects
                    .to_client
                    .push(self.too_many_waiting(id, &method, params));
                return effects;
            }
            Line::Message(Message::Request { id, method, params }) => {
                let new_call = self.session().client_request(id, &method, params);
                if let Some(call) = new_call.filter(|c| !c.task) {
                    bump(&self.stats.calls);
                    if let Err(wait) = self.admit(&call.tool) {
                        if let Some(answered) = self.session().withdraw(call.seq) {
                            bump(&self.stats.circuit_open);
                            let rewritten = self.rewriter.load().circuit_open(&answered, wait);
                            effects
                                .to_client
                                .push(wire::response_line_json(&answered.id, &rewritten.result));
                            return effects;
                        }
                    }
                    if let Some(limit) = self.policy.timeout(&call.tool) {
                        let at = Instant::now() + limit;
                        self.session()
                            .set_deadline(call.seq, Deadline { at, limit });
                        effects.deadline = Some(at);
                    }
                }
                None
            }
            Line::Message(Message::Notification { method, params }) => self
                .session()
                .client_notification(&method, params)
                .map(|retry_id| cancel_line(&retry_id, "cancelled by the client")),
            Line::OtherJson => {
                if let Err(refusals) = self.client_batch(&text) {
                    effects.to_client = refusals;
                    return effects;
                }
                None
            }
            _ => None,
        };
        effects.to_upstream.push(line);
        effects.to_upstream.extend(extra);
        effects
    }

    /// A batch from the client passes uninspected, but its requests wait for their answers
    /// like any other: if the upstream dies first, each gets its answer from the proxy. (No
    /// breaker, time limit or rewrite applies to them.)
    /// A batch whose requests would take the table past `max_pending` is not sent: each of
    /// its requests is answered at once (`Err`), and its notifications are dropped with it.
    fn client_batch(&self, text: &str) -> Result<(), Vec<Vec<u8>>> {
        let Some(members) = wire::batch(text) else {
            return Ok(());
        };
        let messages: Vec<Line> = members.iter().map(|m| wire::parse(m.get())).collect();
        let requests = messages
            .iter()
            .filter(|m| matches!(m, Line::Message(Message::Request { .. })))
            .count();
        if requests > 0 && self.waiting() + requests > self.max_pending {
            let refusals = messages
                .iter()
                .filter_map(|m| match m {
                    Line::Message(Message::Request { id, method, params }) => {
                        Some(self.too_many_waiting(id, method, *params))
                    }
                    _ => None,
                })
                .collect();
            if requests < messages.len() {
                tracing::warn!(
                    "a batch refused for too many requests waiting: its notifications are \
                     dropped with it"
                );
            }
            return Err(refusals);
        }
        let mut session = self.session();
        for message in messages {
            if let Line::Message(Message::Request { id, method, params }) = message {
                session.client_request(id, &method, params);
            }
        }
        Ok(())
    }

    /// The answer to a request refused because `max_pending` requests wait already: for a
    /// `tools/call`, a structured transient error (retryable, after a second); for anything
    /// else, a JSON-RPC error. Either way the client decides whether to send it again.
    fn too_many_waiting(&self, id: &RawValue, method: &str, params: Option<&RawValue>) -> Vec<u8> {
        bump(&self.stats.too_many_pending);
        if bump_is_first(&self.stats.too_many_pending) {
            tracing::warn!(
                limit = self.max_pending,
                "too many requests wait for the upstream: refusing new ones until some are \
                 answered (max_pending_requests; counted in the statistics)"
            );
        }
        let call = (method == "tools/call")
            .then(|| self.session().unregistered_call(id, params))
            .flatten();
        match call {
            Some(call) => {
                let rewritten = self
                    .rewriter
                    .load()
                    .too_many_waiting(&call, self.max_pending);
                wire::response_line_json(&call.id, &rewritten.result)
            }
            None => wire::error_line(
                id,
                -32603,
                &format!(
                    "mcp-errnorm: {} requests already wait for the MCP server's answers \
                     (max_pending_requests); '{method}' was not sent, send it again later",
                    self.max_pending
                ),
            ),
        }
    }

    /// The answers in a batch from the upstream settle the requests they answer, as they are:
    /// a batch passes whole, unrewritten.
    fn upstream_batch(&self, text: &str) {
        let Some(members) = wire::batch(text) else {
            return;
        };
        let mut session = self.session();
        for member in members {
            let answered = match wire::parse(member.get()) {
                Line::Message(Message::Response { id, result }) => {
                    session.upstream_answer(id, Some(result))
                }
                Line::Message(Message::ErrorResponse { id, .. }) => {
                    session.upstream_answer(id, None)
                }
                _ => continue,
            };
            if let Answered::Call(call) = answered {
                tracing::debug!(
                    tool = call.call.name,
                    "a call answered in a batch: passed as it is"
                );
            }
        }
    }

    /// A request in a client line too long to hold, which goes through unparsed: it waits for
    /// its answer like any other, and is answered if the upstream dies first. Whether `line` is
    /// one, and so registered.
    pub fn client_long_request(&self, line: &IdScanner) -> bool {
        let Some((id, method)) = long_request(line) else {
            return false;
        };
        // Without its params: a tools/call is settled as a request, not classified.
        self.session().client_request(&id, &method, None);
        true
    }

    /// A client line too long to hold that no upstream took (one restarting, or gone): a
    /// request in it is answered now.
    pub fn client_long_line_lost(&self, line: &IdScanner) -> Effects {
        let mut effects = Effects::default();
        if let Some((id, method)) = long_request(line) {
            effects.to_client.push(wire::error_line(
                &id,
                -32603,
                &format!(
                    "mcp-errnorm: a '{method}' request larger than max_line_bytes could not \
                     reach the MCP server (restarting, or gone); send it again"
                ),
            ));
        }
        effects
    }

    /// A line from the upstream: what the client receives for it, if anything.
    pub fn upstream_line(&self, line: Vec<u8>) -> Effects {
        let mut effects = Effects::default();
        let line = wire::repaired_text(line);
        let (id, answer) = match wire::parse(&line) {
            Line::Message(Message::Response { id, result }) => (id, Answer::Result(result)),
            Line::Message(Message::ErrorResponse { id, error }) => (id, Answer::Error(error)),
            Line::Message(Message::Notification { method, params }) => {
                match &*method {
                    "notifications/tools/list_changed" => self.session().tools_changed(),
                    "notifications/progress" => match self.session().upstream_progress(params) {
                        ProgressLine::Pass => {}
                        ProgressLine::Drop => return effects,
                        ProgressLine::Send(moved) => {
                            effects.to_client.push(moved);
                            return effects;
                        }
                    },
                    _ => {}
                }
                effects.to_client.push(line.into_bytes());
                return effects;
            }
            Line::Message(Message::Request { .. }) => {
                effects.to_client.push(line.into_bytes());
                return effects;
            }
            Line::OtherJson => {
                self.upstream_batch(&line);
                effects.to_client.push(line.into_bytes());
                return effects;
            }
            Line::NotJson => {
                let redactor = &self.rewriter.load().redactor;
                effects
                    .to_client
                    .extend(non_json_line(line.into_bytes(), self.non_json, redactor));
                return effects;
            }
        };
        if self.is_replay_answer(id) {
            return effects;
        }
        let result = match answer {
            Answer::Result(result) => Some(result),
            Answer::Error(_) => None,
        };
        let answered = self.session().upstream_answer(id, result);
        match answered {
            Answered::Pass => effects.to_client.push(line.into_bytes()),
            Answered::Drop => tracing::debug!(id = id.get(), "dropped an answer nobody waits for"),
            Answered::Duplicate => tracing::warn!(
                id = id.get(),
                "the upstream answered a request it had answered already: the second answer is \
                 dropped"
            ),
            Answered::Call(call) => {
                if self.answer_call(call, answer, &mut effects) {
                    effects.to_client.push(line.into_bytes());
                }
            }
        }
        effects
    }

    /// An answer that passes as it came, a success or a `failure` rewritten already (which
    /// counts as the failure it is); true when it goes to the client as it is. A retry's goes
    /// back under the client's own id.
    fn pass_answer(
        &self,
        call: AnsweredCall,
        answer: Answer,
        failure: Option<Category>,
        effects: &mut Effects,
    ) -> bool {
        let tool = call.call.name.as_str();
        if let Some(category) = failure {
            self.stats.failure(category, tool, None);
        }
        self.record_outcome(tool, failure == Some(Category::Transient));
        if call.attempt == 1 {
            return true;
        }
        if failure.is_none() {
            bump(&self.stats.recovered);
            tracing::info!(
                event = EVENT_RECOVERED,
                server = self.server.as_str(),
                tool,
                request_id = %call.id.get(),
                attempts = call.attempt,
                "a retry succeeded"
            );
        }
        effects.to_client.push(match answer {
            Answer::Result(raw) => wire::answer_line(&call.id, "result", raw),
            Answer::Error(raw) => wire::answer_line(&call.id, "error", raw),
        });
        false
    }

    /// What an answer to a tool call becomes; true when it goes to the client as it came.
    fn answer_call(&self, call: AnsweredCall, answer: Answer, effects: &mut Effects) -> bool {
        let tool = call.call.name.as_str();
        let rewriter = self.rewriter.load();
        let rewritten = match rewriter.handle(&call, answer) {
            Handling::Rewrite(rewritten) => *rewritten,
            Handling::Pass => return self.pass_answer(call, answer, None, effects),
            Handling::PassFailure(category) => {
                return self.pass_answer(call, answer, Some(category), effects)
            }
        };
        let error = &rewritten.error;
        let delay = self.policy.retry_delay(
            tool,
            call.tool.as_ref(),
            error,
            call.attempt,
            fastrand::f64(),
        );
        if let Some(delay) = delay {
            let mut session = self.session();
            // Under the lock that registers the retry, or a cancel could fall in between.
            if session.cancelled_meanwhile(&call.id) {
                // Like any answer after a cancel: the client would ignore it.
                tracing::debug!(
                    tool,
                    "the client cancelled the call: not retried, not answered"
                );
                return false;
            }
            bump(&self.stats.retried);
            tracing::info!(
                event = EVENT_RETRYING,
                server = self.server.as_str(),
                tool,
                request_id = %call.id.get(),
                attempt = call.attempt,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                rule = error.rule_id.as_deref().unwrap_or("(unclassified)"),
                "transient failure: retrying"
            );
            // Out of the table until now, its deadline may have been passed over: look again.
            effects.deadline = call.call.deadline.map(|d| d.at);
            let failure = wire::response_line_json(&call.id, &rewritten.result);
            let (key, line) = session.retry(call, failure);
            effects.retries.push((delay, Retry { key, line }));
            return false;
        }
        self.record_outcome(tool, error.category == Category::Transient);
        bump(&self.stats.rewritten);
        self.stats
            .failure(error.category, tool, error.rule_id.as_deref());
        if error.rule_id.is_none() {
            bump(&self.stats.unclassified);
        }
        // Masked already: the rewriter masked the text before the client saw it.
        let head = crate::redact::one_line_head(&error.original_error.text, LOGGED_TEXT_CHARS);
        // The one line a rewritten failure gets at the default level: each part a field of its
        // own (in `--log-format json` too), the upstream's own text by its head, masked.
        tracing::info!(
            event = EVENT_REWRITTEN,
            server = self.server.as_str(),
            tool,
            request_id = %call.id.get(),
            rule = error.rule_id.as_deref().unwrap_or(NO_RULE),
            category = %error.category,
            code = %error.code,
            retryable = error.retryable,
            attempts = error.attempts,
            text = head.as_str(),
            "rewrote a failed tool call"
        );
        if self.log_unmatched {
            let now = std::time::SystemTime::now();
            effects
                .unmatched
                .extend(crate::unmatched::record_line(tool, error, now));
        }
        effects
            .to_client
            .push(wire::response_line_json(&call.id, &rewritten.result));
        false
    }

    /// Whether the tool's circuit breaker lets a call through, or how long until it may.
    fn admit(&self, tool: &str) -> Result<(), Duration> {
        if !self.policy.breaker_enabled() {
            return Ok(());
        }
        lock(&self.breakers).admit(&self.policy, tool, Instant::now())
    }

    fn record_outcome(&self, tool: &str, transient_failure: bool) {
        // Off by default: then no lock and no clock on every answer.
        if !self.policy.breaker_enabled() {
            return;
        }
        lock(&self.breakers).record(&self.policy, tool, transient_failure, Instant::now());
    }

    /// Whether a long upstream line may stream to the client as it comes, judged from its first
    /// bytes: it must look like a JSON object, and no answer the proxy has to read whole may be
    /// in it (see [`Session::may_stream`]).
    pub fn may_stream(&self, head: &[u8]) -> bool {
        if head.trim_ascii_start().first() != Some(&b'{') {
            return false;
        }
        let mut scanner = IdScanner::default();
        scanner.feed(head);
        let key = match scanner.id() {
            None if lock(&self.replay).is_some() => return false,
            None => None,
            Some(id) => match raw_id(id) {
                // Not JSON: held, so that the usual reading decides what it is.
                None => return false,
                Some(raw) => match IdKey::new(&raw) {
                    Some(key) => Some(key),
                    // `null` or a structure: it answers nothing the proxy tracks.
                    None => return true,
                },
            },
        };
        let rules = &self.rewriter.load().rules;
        self.session()
            .may_stream(key.as_ref(), |tool| rules.inspects_successes_of(tool))
    }

    /// Whether a streaming line, judged by what of it `line` has seen, is an answer nobody waits
    /// for any more: to a call that timed out (its client has the TIMEOUT already) or to a retry
    /// given up on. Asked once the client's end is held, since the call may have timed out
    /// after [`Inspector::may_stream`] let the line go.
    pub fn drops_answer(&self, line: &IdScanner) -> bool {
        answer_id(line)
            .and_then(|raw| IdKey::new(&raw))
            .is_some_and(|key| self.session().drops_answer(&key))
    }

    /// Whether a line too long to hold, by its `head`, is no JSON-RPC message (which begins
    /// with `{`, or `[` for a batch) and is kept from the client (`non_json_upstream_lines`).
    pub fn keeps_off_client(&self, head: &[u8]) -> bool {
        self.non_json != NonJsonLines::Forward && !wire::may_be_message(head)
    }

    /// A line too long to hold that [`Inspector::keeps_off_client`] kept from the client, of
    /// `len` bytes in all, said in the log by its head (`stderr`) or not at all (`drop`).
    pub fn kept_long_line(&self, head: &[u8], len: u64) {
        if self.non_json == NonJsonLines::Stderr {
            log_kept_line(
                &String::from_utf8_lossy(head),
                len,
                &self.rewriter.load().redactor,
            );
        }
    }

    /// An upstream line has been streamed to the client unchanged, followed by `line`. If it
    /// was an answer, the request it answers is settled, unrewritten.
    pub fn streamed_line(&self, line: &IdScanner, why: Streamed) -> Effects {
        let mut effects = Effects::default();
        let Some(raw) = answer_id(line) else {
            if why == Streamed::OverLimit {
                tracing::warn!("an upstream line larger than max_line_bytes passed unparsed");
            }
            return effects;
        };
        if self.is_replay_answer(&raw) {
            return effects;
        }
        let answered = self.session().upstream_answer(&raw, None);
        let Answered::Call(call) = answered else {
            if why == Streamed::OverLimit {
                tracing::warn!(
                    id = raw.get(),
                    "an answer larger than max_line_bytes passed unparsed"
                );
            }
            return effects;
        };
        match why {
            Streamed::OverLimit => tracing::warn!(
                id = raw.get(),
                tool = call.call.name,
                "an answer larger than max_line_bytes passed unparsed and unrewritten"
            ),
            Streamed::Early {
                may_be_failure: true,
            } => tracing::info!(
                id = raw.get(),
                tool = call.call.name,
                "a long answer passed unread and unrewritten; it mentions isError, so it may be a \
                 failure (raise stream_answers_over to rewrite failures this long)"
            ),
            Streamed::Early {
                may_be_failure: false,
            } => tracing::debug!(
                id = raw.get(),
                tool = call.call.name,
                "a long answer streamed through unread"
            ),
        }
        self.record_outcome(&call.call.name, false);
        if call.attempt > 1 {
            // It went out under the retry's id, which the client does not know: answer the
            // client's own id, so it is not left waiting. (Only a line over the limit gets
            // here: a retry's answer is never let go early.)
            let rewritten = self.rewriter.load().proxy_failure(
                &call,
                crate::taxonomy::codes::SYSTEM_UNAVAILABLE,
                "The server's answer to a retried call was larger than max_line_bytes and \
                 could not be delivered."
                    .to_owned(),
                "answer larger than max_line_bytes".to_owned(),
                None,
                "builtin:oversized-retry-answer",
            );
            effects
                .to_client
                .push(wire::response_line_json(&call.id, &rewritten.result));
        }
        effects
    }

    /// Whether a client line held while the upstream restarted still goes to the new one: not
    /// a request answered meanwhile (a time limit, a cancel), nor a cancel of one.
    pub fn still_wanted(&self, line: &[u8]) -> bool {
        let text = wire::text_of(line);
        let session = self.session();
        match wire::parse(&text) {
            Line::Message(Message::Request { id, .. }) => session.waits(id),
            Line::Message(Message::Notification { method, params })
                if method == "notifications/cancelled" =>
            {
                Session::cancelled(params).is_none_or(|id| session.waits(id))
            }
            _ => true,
        }
    }

    /// A retry's backoff is over: it goes to the upstream if the call still waits for it and
    /// the upstream can still be sent lines (`can_send`: the client has not closed stdin, which
    /// closes the upstream's); if not, the client gets the failure the call was retried for.
    pub fn retry_due(&self, retry: Retry, can_send: bool) -> Effects {
        let mut effects = Effects::default();
        if can_send {
            if self.session().send_retry(&retry.key) {
                effects.to_upstream.push(retry.line);
            }
        } else if let Some(failure) = self.session().abandon_retry(&retry.key) {
            bump(&self.stats.rewritten);
            tracing::info!("the client closed stdin before a retry could be sent: not retried");
            effects.to_client.push(failure);
        }
        effects
    }

    /// The earliest deadline of the calls still waiting.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.session().next_deadline()
    }

    /// Gives up on the calls whose time is up at `now`, the earliest first, until their
    /// answers come to `budget` bytes: each is cancelled upstream and answered with a
    /// transient TIMEOUT error; its late answer will be dropped. The others stay waiting, for
    /// the next call: no answer is made before the client can be given it. Nothing for the
    /// client: none is due.
    pub fn expire_due(&self, now: Instant, budget: usize) -> Effects {
        let mut effects = Effects::default();
        let mut made = 0;
        while made < budget {
            let Some(Expired { call, sent }) = self.session().expire_due(now, 1).pop() else {
                break;
            };
            let limit = call.call.deadline.map_or(Duration::ZERO, |d| d.limit);
            let rewritten = self.rewriter.load().timed_out(&call, limit);
            bump(&self.stats.timed_out);
            self.stats.failure(
                Category::Transient,
                &call.call.name,
                rewritten.error.rule_id.as_deref(),
            );
            self.record_outcome(&call.call.name, true);
            let error = &rewritten.error;
            tracing::warn!(
                event = EVENT_TIMED_OUT,
                server = self.server.as_str(),
                tool = call.call.name.as_str(),
                request_id = %call.id.get(),
                rule = error.rule_id.as_deref().unwrap_or(NO_RULE),
                category = %error.category,
                code = %error.code,
                attempts = call.attempt,
                "no answer in time: cancelled"
            );
            if sent {
                effects
                    .to_upstream
                    .push(cancel_line(call.upstream_id(), "timeout"));
            }
            let line = wire::response_line_json(&call.id, &rewritten.result);
            made += line.len();
            effects.to_client.push(line);
        }
        effects
    }

    /// The upstream is gone (`how`: "exited with status 1"): every request still waiting is
    /// taken from the session, to be answered now ([`Inspector::answer_gone`]).
    pub fn upstream_gone(&self, how: &str) -> Unsettled {
        let requests = self.session().drain_pending();
        if !requests.is_empty() {
            tracing::warn!(
                count = requests.len(),
                "answering requests the upstream left unanswered"
            );
        }
        Unsettled {
            requests,
            how: how.to_owned(),
        }
    }

    /// The next answers to what a gone upstream left waiting, until they come to `budget`
    /// bytes: a `tools/call` gets a structured transient error, anything else a JSON-RPC
    /// error. None once every request is answered.
    pub fn answer_gone(&self, left: &mut Unsettled, budget: usize) -> Vec<Vec<u8>> {
        let rewriter = self.rewriter.load();
        let how = left.how.as_str();
        let mut lines = Vec::new();
        let mut made = 0;
        while made < budget {
            let Some(request) = left.requests.pop() else {
                break;
            };
            let line = match request {
                Unanswered::Call(call) => {
                    bump(&self.stats.rewritten);
                    let rewritten = rewriter.upstream_gone(&call, how);
                    let rule = rewritten.error.rule_id.as_deref();
                    self.stats
                        .failure(Category::Transient, &call.call.name, rule);
                    wire::response_line_json(&call.id, &rewritten.result)
                }
                // The failure it was retried for: the server's exit says less about the call.
                Unanswered::RetryNotSent(failure) => {
                    bump(&self.stats.rewritten);
                    failure
                }
                Unanswered::Request { id, method } => wire::error_line(
                    &id,
                    -32603,
                    &format!("mcp-errnorm: the MCP server {how} before answering '{method}'"),
                ),
            };
            made += line.len();
            lines.push(line);
        }
        lines
    }

    /// Prepares the replay of the client's `initialize` to a restarted upstream: the request
    /// line, and a receiver that fires when its answer (which the client never sees) arrives.
    pub fn replay_initialize(&self) -> Option<(Vec<u8>, oneshot::Receiver<()>)> {
        let params = self.session().initialize_params()?;
        let id = format!("mcp-errnorm/replay/{}", std::process::id());
        let raw_id = serde_json::to_string(&id).expect("a string");
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{raw_id},\"method\":\"initialize\",\"params\":{}}}\n",
            params.get()
        );
        let (tx, rx) = oneshot::channel();
        *lock(&self.replay) = Some((IdKey::Str(id), tx));
        Some((line.into_bytes(), rx))
    }

    fn is_replay_answer(&self, id: &RawValue) -> bool {
        let mut replay = lock(&self.replay);
        if replay
            .as_ref()
            .is_some_and(|(key, _)| IdKey::new(id).as_ref() == Some(key))
        {
            if let Some((_, tx)) = replay.take() {
                let _ = tx.send(());
            }
            return true;
        }
        false
    }
}

/// A raw id's bytes as JSON, if they are JSON.
/// The id of a streamed line, if the line is an answer.
fn answer_id(line: &IdScanner) -> Option<Box<RawValue>> {
    line.id().filter(|_| line.is_answer()).and_then(raw_id)
}

/// The id and method of the request a line too long to hold is, as far as it was followed.
fn long_request(line: &IdScanner) -> Option<(Box<RawValue>, String)> {
    let id = line.id().filter(|_| line.is_request()).and_then(raw_id)?;
    Some((id, line.method()?))
}

fn raw_id(id: &[u8]) -> Option<Box<RawValue>> {
    let id = std::str::from_utf8(id).ok()?;
    RawValue::from_string(id.to_owned()).ok()
}

/// `notifications/cancelled` for a request the proxy sent or forwarded.
fn cancel_line(id: &RawValue, reason: &str) -> Vec<u8> {
    let params = serde_json::json!({ "requestId": id, "reason": reason });
    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{params}}}\n")
        .into_bytes()
}

/// How much of a failure's own text the log line of its rewrite shows, in characters.
const LOGGED_TEXT_CHARS: usize = 200;

/// How much of a non-JSON line the log shows.
const LOGGED_LINE_BYTES: usize = 4 << 10;

fn non_json_line(line: Vec<u8>, policy: NonJsonLines, redactor: &Redactor) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(&line);
    let text = text.trim_end_matches(['\r', '\n']);
    match policy {
        NonJsonLines::Forward => Some(line),
        NonJsonLines::Drop => None,
        NonJsonLines::Stderr if text.trim().is_empty() => None,
        NonJsonLines::Stderr => {
            log_kept_line(text, text.len() as u64, redactor);
            None
        }
    }
}

/// Logs a line kept from the client, `len` bytes in all, by its head (of `text`, which may be
/// the head already): a dump of megabytes would be a log line of megabytes.
fn log_kept_line(text: &str, len: u64, redactor: &Redactor) {
    let shown = crate::diagnostic::head(text, LOGGED_LINE_BYTES);
    let rest = if (shown.len() as u64) < len {
        format!("… ({len} bytes in all)")
    } else {
        String::new()
    };
    let shown = redactor.text(shown);
    tracing::warn!(
        "upstream wrote a non-JSON line to stdout (kept from the client): {shown}{rest}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::SourceFile;
    use crate::render::Profile;
    use crate::rules::RuleSet;

    /// One rule (`locked`), no embedded rules and no model: what no rule matches is unknown.
    fn inspector() -> Inspector {
        let rules = SourceFile::new(
            "rules.toml",
            "[[rule]]\nid = \"locked\"\nmatch = 'account is locked'\ncategory = \"permission\"\n",
        );
        let rules = RuleSet::load(&[rules], &[])
            .expect("the rule loads")
            .with_fallback_model(false);
        let rewriter = Rewriter {
            rules: Arc::new(rules),
            profile: Profile::Mcp,
            rewrite_rpc_errors: true,
            not_found_is_empty: globset::GlobSet::empty(),
            redactor: Redactor::defaults(),
            hidden_failures: false,
        };
        Inspector::new(rewriter, Policy::default())
    }

    fn line(text: &str) -> Vec<u8> {
        format!("{text}\n").into_bytes()
    }

    fn call(id: u64, tool: &str) -> Vec<u8> {
        line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        ))
    }

    fn failed(id: u64, text: &str) -> Vec<u8> {
        line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":true}}}}"#
        ))
    }

    fn json(line: &[u8]) -> serde_json::Value {
        serde_json::from_slice(line).expect("a JSON line")
    }

    #[test]
    fn a_request_goes_to_the_upstream_as_the_same_bytes() {
        let inspector = inspector();
        let request = call(1, "read");
        let effects = inspector.client_line(request.clone());
        assert_eq!(effects.to_upstream, [request]);
        assert!(effects.to_client.is_empty());
        assert_eq!(inspector.waiting(), 1);
    }

    #[test]
    fn a_success_and_an_unknown_answer_pass_as_the_same_bytes() {
        let inspector = inspector();
        inspector.client_line(call(1, "read"));
        let success = line(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#);
        let effects = inspector.upstream_line(success.clone());
        assert_eq!(effects.to_client, [success]);
        assert_eq!(inspector.waiting(), 0);
        // An answer to nothing the client asked is not the proxy's to change.
        let stray = failed(99, "account is locked");
        assert_eq!(inspector.upstream_line(stray.clone()).to_client, [stray]);
    }

    #[test]
    fn a_failed_call_is_rewritten_with_the_rule_that_decided_it() {
        let inspector = inspector();
        inspector.client_line(call(7, "login"));
        let effects = inspector.upstream_line(failed(7, "account is locked"));
        let [answer] = &effects.to_client[..] else {
            panic!("one answer: {:?}", effects.to_client)
        };
        let answer = json(answer);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["isError"], true);
        let error = &answer["result"]["_meta"]["mcp-errnorm/error"];
        assert_eq!(error["errorCategory"], "permission");
        assert_eq!(error["ruleId"], "locked");
        assert!(effects.to_upstream.is_empty());
        assert!(effects.retries.is_empty());
    }

    #[test]
    fn failures_no_rule_matched_are_returned_to_record_never_written_here() {
        let inspector = inspector();
        inspector.client_line(call(1, "query"));
        let effects = inspector.upstream_line(failed(1, "the frobnicator broke"));
        assert!(effects.unmatched.is_empty(), "recording is off by default");

        let mut inspector = self::inspector();
        inspector.log_unmatched = true;
        inspector.client_line(call(1, "query"));
        let effects = inspector.upstream_line(failed(1, "the frobnicator broke"));
        let [record] = &effects.unmatched[..] else {
            panic!("one record: {:?}", effects.unmatched)
        };
        let record = json(record.as_bytes());
        assert_eq!(record["tool"], "query");
        assert_eq!(record["text"], "the frobnicator broke");
        assert_eq!(record["source"], "result");
        // A failure a rule decided is not recorded.
        inspector.client_line(call(2, "login"));
        let effects = inspector.upstream_line(failed(2, "account is locked"));
        assert!(effects.unmatched.is_empty());
    }

    #[test]
    fn past_max_pending_a_request_is_answered_at_once_instead_of_sent() {
        let mut inspector = inspector();
        inspector.max_pending = 1;
        assert_eq!(inspector.client_line(call(1, "read")).to_upstream.len(), 1);
        let effects = inspector.client_line(call(2, "read"));
        assert!(effects.to_upstream.is_empty());
        let [answer] = &effects.to_client[..] else {
            panic!("one answer: {:?}", effects.to_client)
        };
        let answer = json(answer);
        assert_eq!(answer["id"], 2);
        assert_eq!(inspector.waiting(), 1);
    }

    #[test]
    fn failures_are_counted_by_rule_and_by_tool_up_to_so_many_names() {
        let inspector = inspector();
        inspector.client_line(call(1, "login"));
        inspector.upstream_line(failed(1, "account is locked"));
        inspector.client_line(call(2, "query"));
        inspector.upstream_line(failed(2, "the frobnicator broke"));
        let summary = inspector.stats.summary();
        assert!(
            summary.contains(r#"by_rule={"(none)":1,"locked":1}"#),
            "{summary}"
        );
        assert!(
            summary.contains(r#"by_tool={"login":1,"query":1}"#),
            "{summary}"
        );
        assert!(summary.contains("permission=1 unknown=1"), "{summary}");

        let mut tally = Tally::default();
        for i in 0..Tally::MAX_NAMES + 10 {
            tally.add(&format!("tool-{i}"));
        }
        tally.add("tool-0");
        assert_eq!(
            tally.0.len(),
            Tally::MAX_NAMES + 1,
            "the names, and (other)"
        );
        assert_eq!(tally.0[Tally::OTHER], 10);
        assert_eq!(tally.0["tool-0"], 2, "a name counted already still counts");
    }

    #[test]
    fn a_non_json_upstream_line_is_kept_from_the_client_unless_forwarded() {
        let mut inspector = inspector();
        let banner = line("server 1.0 listening");
        assert!(inspector.upstream_line(banner.clone()).to_client.is_empty());
        inspector.non_json = NonJsonLines::Forward;
        assert_eq!(inspector.upstream_line(banner.clone()).to_client, [banner]);
    }
}
