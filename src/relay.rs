//! The I/O shell of run mode: two pumps between the client (our stdin/stdout) and the upstream
//! (the child's stdin/stdout), and the lifecycle around them.
//!
//! ```text
//! stdin thread ──lines──▶ client pump ──bytes──▶ child stdin
//! child stdout ──▶ upstream pump ──lines──▶ stdout thread ──▶ stdout
//! ```
//! Each line is shown to the session (and, for answers to `tools/call`, to the rewriter) and then
//! forwarded as the same bytes, unless it is a failure that gets rewritten. stdin and stdout are
//! served by plain threads: blocking reads of stdin cannot be cancelled in tokio, and a thread
//! per direction keeps writes simple. Bounded channels between the stages carry back-pressure.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, timeout, Instant};

use arc_swap::ArcSwap;

use crate::config::{Flags, NonJsonLines, Settings};
use crate::reload::{self, SharedRewriter};
use crate::rewrite::{Answer, Rewriter};
use crate::session::{Session, Unanswered};
use crate::unmatched::UnmatchedLog;
use crate::upstream;
use crate::wire::{self, Line, Message};

/// Lines in flight between two stages before the reader waits.
const CHANNEL_LINES: usize = 64;
/// How long the upstream's last output may take to drain after it exited.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the upstream server '{program}': {source}")]
pub struct StartError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

/// Runs the proxy until the upstream has exited; returns the exit code for the proxy.
/// `flags` are where `settings` came from, for reloading them.
pub async fn run(
    command: &[String],
    flags: Flags,
    settings: Settings,
    unmatched: Option<UnmatchedLog>,
) -> Result<i32, StartError> {
    let mut child = upstream::spawn(command, &settings.env).map_err(|source| StartError {
        program: command.first().cloned().unwrap_or_default(),
        source,
    })?;
    tracing::info!(command = ?command, pid = child.id(), "upstream started");
    let child_stdin = child.stdin.take().expect("stdin is piped");
    let child_stdout = child.stdout.take().expect("stdout is piped");

    let inspector = Arc::new(Inspector {
        session: Mutex::new(Session::default()),
        rewriter: Arc::new(ArcSwap::from_pointee(settings.rewriter())),
        unmatched,
        non_json: settings.non_json_upstream_lines,
    });
    tokio::spawn(reload::watch(
        flags,
        settings.files.clone(),
        inspector.rewriter.clone(),
    ));

    let (to_client, client_lines) = mpsc::channel::<Vec<u8>>(CHANNEL_LINES);
    let writer = std::thread::spawn(move || write_stdout(client_lines));
    let (from_client, client_rx) = mpsc::channel::<Vec<u8>>(CHANNEL_LINES);
    std::thread::spawn(move || read_stdin(from_client));

    let (close_tx, close_rx) = tokio::sync::oneshot::channel();
    let mut client_pump = tokio::spawn(client_pump(
        client_rx,
        child_stdin,
        inspector.clone(),
        close_rx,
    ));
    let mut upstream_pump = tokio::spawn(upstream_pump(
        child_stdout,
        to_client.clone(),
        inspector.clone(),
    ));

    let mut sigint = signal(SignalKind::interrupt()).expect("signal handlers install");
    let mut sigterm = signal(SignalKind::terminate()).expect("signal handlers install");
    let mut close_tx = Some(close_tx);
    let mut ladder = Ladder::Running;
    let (mut client_done, mut upstream_done) = (false, false);

    let status: ExitStatus = loop {
        tokio::select! {
            status = child.wait() => match status {
                Ok(status) => break status,
                Err(e) => {
                    tracing::error!("cannot wait for the upstream: {e}");
                    return Ok(70);
                }
            },
            _ = sigint.recv() => {
                tracing::info!("SIGINT: passing it to the upstream");
                upstream::signal(&child, libc::SIGINT);
                ladder = ladder.at_least(Ladder::Terminating(Instant::now() + settings.term_wait));
            }
            _ = sigterm.recv() => {
                tracing::info!("SIGTERM: passing it to the upstream");
                upstream::signal(&child, libc::SIGTERM);
                ladder = ladder.at_least(Ladder::Terminating(Instant::now() + settings.term_wait));
            }
            _ = &mut client_pump, if !client_done => {
                client_done = true;
                tracing::debug!("client closed its side; closed the upstream's stdin");
                ladder = ladder.at_least(Ladder::Closing(Instant::now() + settings.close_wait));
            }
            end = &mut upstream_pump, if !upstream_done => {
                upstream_done = true;
                if matches!(end, Ok(UpstreamEnd::ClientGone)) {
                    tracing::info!("the client stopped reading; shutting the upstream down");
                } else {
                    tracing::debug!("the upstream closed its stdout");
                }
                if let Some(tx) = close_tx.take() {
                    let _ = tx.send(());
                }
                ladder = ladder.at_least(Ladder::Closing(Instant::now() + settings.close_wait));
            }
            _ = sleep_until(ladder.deadline()), if ladder.deadline_set() => {
                ladder = match ladder {
                    Ladder::Closing(_) => {
                        tracing::info!("upstream still running after its stdin closed: SIGTERM");
                        upstream::signal(&child, libc::SIGTERM);
                        Ladder::Terminating(Instant::now() + settings.term_wait)
                    }
                    _ => {
                        tracing::warn!("upstream still running after SIGTERM: SIGKILL");
                        let _ = child.start_kill();
                        Ladder::Killed
                    }
                };
            }
        }
    };

    let how = upstream::describe(status);
    tracing::info!("upstream {how}");
    if !upstream_done && timeout(DRAIN_WAIT, &mut upstream_pump).await.is_err() {
        // A grandchild may hold the pipe open; what it writes now belongs to nobody.
        upstream_pump.abort();
    }
    let rewriter = inspector.rewriter.load_full();
    answer_pending(&inspector.session, &rewriter, &to_client, &how).await;
    drop(to_client);
    wait_for_thread(writer, DRAIN_WAIT).await;
    Ok(upstream::exit_code(status))
}

/// The shutdown ladder: close stdin and wait, SIGTERM and wait, SIGKILL.
#[derive(Debug, Clone, Copy)]
enum Ladder {
    Running,
    Closing(Instant),
    Terminating(Instant),
    Killed,
}

impl Ladder {
    fn rank(self) -> u8 {
        match self {
            Ladder::Running => 0,
            Ladder::Closing(_) => 1,
            Ladder::Terminating(_) => 2,
            Ladder::Killed => 3,
        }
    }

    /// Moves forward, never back: a second signal does not restart a wait.
    fn at_least(self, other: Ladder) -> Ladder {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }

    fn deadline_set(self) -> bool {
        matches!(self, Ladder::Closing(_) | Ladder::Terminating(_))
    }

    fn deadline(self) -> Instant {
        match self {
            Ladder::Closing(at) | Ladder::Terminating(at) => at,
            _ => Instant::now() + Duration::from_secs(86_400),
        }
    }
}

/// Answers every request the upstream left unanswered, so that no client waits forever: a
/// `tools/call` gets a structured transient error, anything else a JSON-RPC error.
async fn answer_pending(
    session: &Mutex<Session>,
    rewriter: &Rewriter,
    to_client: &mpsc::Sender<Vec<u8>>,
    how: &str,
) {
    let pending = session.lock().expect("session lock").drain_pending();
    if !pending.is_empty() {
        tracing::warn!(
            count = pending.len(),
            "answering requests the upstream left unanswered"
        );
    }
    for request in pending {
        let line = match request {
            Unanswered::Call(call) => {
                wire::response_line(&call.id, &rewriter.upstream_gone(&call, how).result)
            }
            Unanswered::Request { id, method } => wire::error_line(
                &id,
                -32603,
                &format!("mcp-errnorm: the MCP server {how} before answering '{method}'"),
            ),
        };
        if to_client.send(line).await.is_err() {
            return;
        }
    }
}

async fn wait_for_thread(thread: std::thread::JoinHandle<()>, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !thread.is_finished() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Reads the client's lines on a plain thread (a blocking stdin read cannot be cancelled).
fn read_stdin(lines: mpsc::Sender<Vec<u8>>) {
    let mut stdin = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    loop {
        let mut line = Vec::new();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {
                if lines.blocking_send(line).is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!("reading stdin failed: {e}");
                return;
            }
        }
    }
}

/// Writes lines to stdout on a plain thread, flushing whenever no more lines are waiting.
/// Ends when every sender is gone, or when the client stops reading (broken pipe).
fn write_stdout(mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut stdout = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut write = |line: &[u8], flush: bool| -> std::io::Result<()> {
        stdout.write_all(line)?;
        if flush {
            stdout.flush()?;
        }
        Ok(())
    };
    while let Some(line) = lines.blocking_recv() {
        if let Err(e) = write(&line, lines.is_empty()) {
            tracing::debug!("stdout closed: {e}");
            return;
        }
    }
}

/// Client to upstream: every line is forwarded as it came, after the session has seen it.
async fn client_pump(
    mut lines: mpsc::Receiver<Vec<u8>>,
    mut child_stdin: ChildStdin,
    inspector: Arc<Inspector>,
    mut close: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = &mut close => None,
        };
        let Some(line) = line else { break };
        inspector.client_line(&line);
        if let Err(e) = child_stdin.write_all(&line).await {
            tracing::warn!("cannot write to the upstream: {e}");
            break;
        }
    }
    // Dropping stdin closes it: the upstream's cue to exit.
    let _ = child_stdin.shutdown().await;
}

#[derive(Debug)]
enum UpstreamEnd {
    /// The upstream closed its stdout (it exited, usually).
    Eof,
    /// The client is gone: nothing can be delivered any more.
    ClientGone,
}

/// Upstream to client: every line forwarded as it came, except failed tool calls (rewritten)
/// and non-JSON noise (kept off the protocol stream).
async fn upstream_pump(
    child_stdout: ChildStdout,
    to_client: mpsc::Sender<Vec<u8>>,
    inspector: Arc<Inspector>,
) -> UpstreamEnd {
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, child_stdout);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => return UpstreamEnd::Eof,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("reading the upstream's stdout failed: {e}");
                return UpstreamEnd::Eof;
            }
        }
        let Some(mut out) = inspector.upstream_line(line) else {
            continue;
        };
        // A last line without its newline would run into whatever is written next.
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        if to_client.send(out).await.is_err() {
            return UpstreamEnd::ClientGone;
        }
    }
}

/// The per-line logic of both pumps, apart from any I/O: what the session learns from each line,
/// and what the client receives for each upstream line.
pub struct Inspector {
    pub session: Mutex<Session>,
    pub rewriter: SharedRewriter,
    pub unmatched: Option<UnmatchedLog>,
    pub non_json: NonJsonLines,
}

impl Inspector {
    /// An inspector with a fixed rewriter, no unmatched log, and non-JSON lines kept off stdout.
    pub fn new(rewriter: Rewriter) -> Inspector {
        Inspector {
            session: Mutex::new(Session::default()),
            rewriter: Arc::new(ArcSwap::from_pointee(rewriter)),
            unmatched: None,
            non_json: NonJsonLines::default(),
        }
    }

    /// A line from the client, on its way to the upstream unchanged.
    pub fn client_line(&self, line: &[u8]) {
        let Line::Message(message) = wire::parse(line) else {
            return;
        };
        let mut session = self.session.lock().expect("session lock");
        match message {
            Message::Request { id, method, params } => session.client_request(id, &method, params),
            Message::Notification { method, params } => {
                session.client_notification(&method, params)
            }
            Message::Response { .. } | Message::ErrorResponse { .. } => {}
        }
    }

    /// What to send the client for one upstream line, if anything: the line itself, or its
    /// rewrite when it is a failed tool call.
    pub fn upstream_line(&self, line: Vec<u8>) -> Option<Vec<u8>> {
        let (id, answer) = match wire::parse(&line) {
            Line::Message(Message::Response { id, result }) => (id, Answer::Result(result)),
            Line::Message(Message::ErrorResponse { id, error }) => (id, Answer::Error(error)),
            Line::Message(Message::Notification { method, .. }) => {
                if method == "notifications/tools/list_changed" {
                    self.session.lock().expect("session lock").tools_changed();
                }
                return Some(line);
            }
            Line::Message(Message::Request { .. }) | Line::OtherJson => return Some(line),
            Line::NotJson => return non_json_line(line, self.non_json),
        };
        let result = match answer {
            Answer::Result(result) => Some(result),
            Answer::Error(_) => None,
        };
        let answered = self
            .session
            .lock()
            .expect("session lock")
            .upstream_answer(id, result);
        let rewritten = answered.and_then(|a| {
            let rewritten = self.rewriter.load().rewrite(&a, answer)?;
            let error = &rewritten.error;
            tracing::debug!(
                tool = %a.call.name,
                rule = error.rule_id.as_deref().unwrap_or("(unclassified)"),
                category = %error.category,
                code = %error.code,
                "rewrote a failed tool call"
            );
            if let Some(log) = &self.unmatched {
                log.record(error);
            }
            Some(wire::response_line(&a.id, &rewritten.result))
        });
        Some(rewritten.unwrap_or(line))
    }
}

fn non_json_line(line: Vec<u8>, policy: NonJsonLines) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(&line);
    let text = text.trim_end_matches(['\r', '\n']);
    match policy {
        NonJsonLines::Forward => Some(line),
        NonJsonLines::Drop => None,
        NonJsonLines::Stderr if text.trim().is_empty() => None,
        NonJsonLines::Stderr => {
            tracing::warn!(
                "upstream wrote a non-JSON line to stdout (kept from the client): {text}"
            );
            None
        }
    }
}
