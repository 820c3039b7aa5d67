//! The I/O shell of run mode: the pumps between the client (our stdin/stdout) and the upstream
//! (the child's stdin/stdout), timers, and the upstream's lifecycle (shutdown, restart).
//!
//! ```text
//! stdin thread ──Inbound──▶ upstream writer ──▶ child stdin      (retries, cancels join here)
//! child stdout ──▶ upstream reader ──▶ stdout thread ──▶ stdout  (answers of timers join here)
//! ```
//! Every line goes through the [`Inspector`], which says what to send where; lines that are
//! not rewritten are sent as the same bytes. stdin and stdout are served by plain threads:
//! blocking reads of stdin cannot be cancelled in tokio, and a thread keeps writes simple.
//! Bounded channels between the stages carry back-pressure.

mod inspector;
mod lines;

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Write};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, timeout, Instant};

pub use inspector::{Effects, Inspector, Stats, Timer};

use crate::config::{Flags, Settings};
use crate::reload;
use crate::unmatched::UnmatchedLog;
use crate::upstream;

/// Lines in flight between two stages before the reader waits.
const CHANNEL_LINES: usize = 64;
/// Bytes in flight towards stdout before the upstream reader waits (a line larger than this
/// takes the whole budget): a client that stops reading slows the upstream down instead of
/// growing buffers.
const CLIENT_BUDGET: usize = 4 << 20;
/// Bytes gathered for one write to the upstream while more lines are waiting.
const WRITE_BATCH: usize = 64 << 10;
/// How long the upstream's last output may take to drain after it exited.
const DRAIN_WAIT: Duration = Duration::from_secs(1);
/// How long a restarted upstream may take to answer the replayed `initialize`.
const REPLAY_WAIT: Duration = Duration::from_secs(10);

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the upstream server '{program}': {source}")]
pub struct StartError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

/// What the upstream writer receives.
enum Inbound {
    /// A line from the client: the inspector sees it first.
    Client(Vec<u8>),
    /// The client closed stdin.
    ClientEof,
    /// A line of the proxy's own (a retry, a cancellation).
    Proxy(Vec<u8>),
    /// A (new) upstream to write to; lines that came meanwhile are written first.
    Attach(ChildStdin),
    /// The upstream's output is gone: stop writing to it, hold lines until another is attached.
    Detach,
    /// The upstream exited (`how`): answer everything still waiting, in channel order, so a
    /// request the writer took before this is answered once, and one after it goes to the next
    /// upstream. The sender learns when it is done.
    Gone(String, tokio::sync::oneshot::Sender<()>),
    /// A client line too large to inspect, in chunks, to be written through as it comes.
    Stream(mpsc::Receiver<Vec<u8>>),
}

/// What the stdout thread receives.
enum Out {
    /// A line, holding its share of the byte budget until written.
    Line(Vec<u8>, OwnedSemaphorePermit),
    /// An upstream line too large to inspect, in chunks.
    Stream(mpsc::Receiver<Vec<u8>>),
}

/// The channels every stage writes to, and the inspector: enough to carry out [`Effects`].
struct Io {
    inspector: Arc<Inspector>,
    to_client: mpsc::Sender<Out>,
    budget: Arc<Semaphore>,
    to_upstream: mpsc::Sender<Inbound>,
    max_line: usize,
    /// Set by the writer when the client closed stdin, before it closes the upstream's: an
    /// upstream that then exits is done, not to be restarted.
    client_eof: std::sync::atomic::AtomicBool,
}

impl Io {
    /// Sends what `effects` says, and sets its timers. Returns false once the client is gone.
    async fn apply(self: &Arc<Self>, effects: Effects) -> bool {
        for (after, timer) in effects.timers {
            // Timers do not keep the relay alive: after the end, they find nothing to do.
            let io = Arc::downgrade(self);
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                if let Some(io) = io.upgrade() {
                    let effects = io.inspector.fire(timer);
                    debug_assert!(effects.timers.is_empty(), "a timer sets no timers");
                    io.send(effects.to_upstream, effects.to_client).await;
                }
            });
        }
        self.send(effects.to_upstream, effects.to_client).await
    }

    /// Sends lines both ways. Returns false once the client is gone.
    /// The client's lines go first: an answer (a timeout) must not wait behind an upstream that
    /// no longer reads.
    async fn send(&self, to_upstream: Vec<Vec<u8>>, to_client: Vec<Vec<u8>>) -> bool {
        let delivered = self.send_to_client(to_client).await;
        for line in to_upstream {
            // Closed only when the writer is gone, at the very end.
            let _ = self.to_upstream.send(Inbound::Proxy(line)).await;
        }
        delivered
    }

    async fn send_to_client(&self, to_client: Vec<Vec<u8>>) -> bool {
        for line in to_client {
            let share = line.len().clamp(1, CLIENT_BUDGET) as u32;
            let Ok(permit) = self.budget.clone().acquire_many_owned(share).await else {
                return false;
            };
            if self.to_client.send(Out::Line(line, permit)).await.is_err() {
                return false;
            }
        }
        true
    }
}

/// Runs the proxy until the upstream has exited for good; returns the exit code for the proxy.
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

    let mut inspector = Inspector::new(settings.rewriter(), settings.policy.clone());
    inspector.unmatched = unmatched;
    inspector.non_json = settings.non_json_upstream_lines;
    let inspector = Arc::new(inspector);
    tokio::spawn(reload::watch(
        flags,
        settings.files.clone(),
        inspector.rewriter.clone(),
    ));

    let (to_client, client_lines) = mpsc::channel::<Out>(CHANNEL_LINES);
    let stdout_thread = std::thread::spawn(move || write_stdout(client_lines));
    let (to_upstream, inbound) = mpsc::channel::<Inbound>(CHANNEL_LINES);
    let from_client = to_upstream.clone();
    let max_line = settings.max_line_bytes;
    std::thread::spawn(move || read_stdin(from_client, max_line));
    let io = Arc::new(Io {
        inspector: inspector.clone(),
        to_client,
        budget: Arc::new(Semaphore::new(CLIENT_BUDGET)),
        to_upstream,
        max_line,
        client_eof: std::sync::atomic::AtomicBool::new(false),
    });

    let stdin = child.stdin.take().expect("stdin is piped");
    let mut writer = tokio::spawn(upstream_writer(inbound, io.clone(), stdin));
    let mut reader = spawn_reader(&mut child, &io);

    let mut signals = Signals::new(inspector.clone());
    let mut client_closed = false;
    let mut restarts_left = settings.restart.attempts;
    let mut backoff = Duration::from_millis(settings.restart.backoff_ms);
    let status = loop {
        let end = supervise(
            &io,
            &mut child,
            &mut reader,
            &mut writer,
            &mut signals,
            &settings,
            &mut client_closed,
        )
        .await;
        let how = upstream::describe(end.status);
        tracing::info!("upstream {how}");
        if !reader.is_finished() && timeout(DRAIN_WAIT, &mut reader).await.is_err() {
            // A grandchild may hold the pipe open; what it writes now belongs to nobody.
            reader.abort();
        }
        let (done, answered) = tokio::sync::oneshot::channel();
        let handed = io
            .to_upstream
            .send(Inbound::Gone(how.clone(), done))
            .await
            .is_ok();
        if !handed || timeout(DRAIN_WAIT, answered).await.is_err() {
            // The writer is gone (the client closed stdin): answer from here.
            io.apply(io.inspector.upstream_gone(&how)).await;
        }
        let client_left = client_closed || io.client_eof.load(std::sync::atomic::Ordering::SeqCst);
        let stop = client_left || end.stopping || end.client_gone || restarts_left == 0;
        if stop {
            break end.status;
        }
        restarts_left -= 1;
        tracing::warn!(
            "restarting the upstream in {} ms ({restarts_left} restarts left)",
            backoff.as_millis()
        );
        // A signal to the whole process group may arrive just after the upstream died of it.
        let stopped = tokio::select! {
            _ = tokio::time::sleep(backoff) => false,
            (_, name) = signals.next_stop() => {
                tracing::info!("{name} while restarting: not restarting");
                true
            }
        };
        if stopped {
            break end.status;
        }
        backoff = backoff.saturating_mul(2);
        match restart(command, &settings, &io).await {
            Some((new_child, new_reader)) => {
                child = new_child;
                reader = new_reader;
            }
            None => break end.status,
        }
    };
    tracing::info!("{}", inspector.stats.summary());
    // What holds the channel to stdout goes, so the stdout thread drains it and ends.
    writer.abort();
    reader.abort();
    drop(io);
    wait_for_thread(stdout_thread, DRAIN_WAIT).await;
    Ok(upstream::exit_code(status))
}

/// How one upstream ended.
struct End {
    status: ExitStatus,
    /// The proxy was told to stop (SIGINT, SIGTERM).
    stopping: bool,
    /// Nobody reads our stdout any more.
    client_gone: bool,
}

/// Watches one upstream until it exits: passes signals on, and walks the shutdown ladder when
/// the client leaves or the proxy is told to stop.
async fn supervise(
    io: &Io,
    child: &mut Child,
    reader: &mut JoinHandle<ReaderEnd>,
    writer: &mut JoinHandle<()>,
    signals: &mut Signals,
    settings: &Settings,
    client_closed: &mut bool,
) -> End {
    let mut ladder = if *client_closed {
        Ladder::Closing(Instant::now() + settings.close_wait)
    } else {
        Ladder::Running
    };
    let (mut stopping, mut client_gone, mut reader_done) = (false, false, false);
    loop {
        tokio::select! {
            status = child.wait() => {
                let status = status.unwrap_or_else(|e| {
                    tracing::error!("cannot wait for the upstream: {e}");
                    std::os::unix::process::ExitStatusExt::from_raw(70 << 8)
                });
                return End { status, stopping, client_gone };
            }
            (sig, name) = signals.next_stop() => {
                tracing::info!("{name}: passing it to the upstream");
                upstream::signal(child, sig);
                stopping = true;
                ladder = ladder.at_least(Ladder::Terminating(Instant::now() + settings.term_wait));
            }
            _ = &mut *writer, if !*client_closed => {
                *client_closed = true;
                tracing::debug!("the client closed its side; closed the upstream's stdin");
                ladder = ladder.at_least(Ladder::Closing(Instant::now() + settings.close_wait));
            }
            end = &mut *reader, if !reader_done => {
                reader_done = true;
                if matches!(end, Ok(ReaderEnd::ClientGone)) {
                    tracing::info!("the client stopped reading; shutting the upstream down");
                    client_gone = true;
                    stopping = true;
                } else {
                    tracing::debug!("the upstream closed its stdout");
                }
                ladder = ladder.at_least(Ladder::Closing(Instant::now() + settings.close_wait));
                // Nothing more can be relayed: close the upstream's stdin too. Not waiting on a
                // full channel here (signals and the ladder must stay served; the ladder ends the
                // upstream anyway), and not from another task: a Detach that overtook a later
                // Attach would cut off the restarted upstream.
                let _ = io.to_upstream.try_send(Inbound::Detach);
            }
            _ = sleep_until(ladder.deadline()), if ladder.deadline_set() => {
                ladder = match ladder {
                    Ladder::Closing(_) => {
                        tracing::info!("upstream still running after its stdin closed: SIGTERM");
                        upstream::signal(child, libc::SIGTERM);
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
    }
}

/// Starts the upstream again and restores the session: the client's own `initialize` and
/// `notifications/initialized` are replayed and their answer swallowed, then the lines held
/// meanwhile flow to the new upstream.
async fn restart(
    command: &[String],
    settings: &Settings,
    io: &Arc<Io>,
) -> Option<(Child, JoinHandle<ReaderEnd>)> {
    let mut child = match upstream::spawn(command, &settings.env) {
        Ok(child) => child,
        Err(e) => {
            tracing::error!("cannot restart the upstream: {e}");
            return None;
        }
    };
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let reader = spawn_reader(&mut child, io);
    if let Some((line, answered)) = io.inspector.replay_initialize() {
        let replayed = async {
            stdin.write_all(&line).await?;
            if timeout(REPLAY_WAIT, answered).await.is_err() {
                tracing::warn!("the restarted upstream did not answer initialize in time");
            }
            stdin
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .await
        };
        if let Err(e) = replayed.await {
            tracing::error!("cannot restore the session on the restarted upstream: {e}");
        }
    }
    tracing::warn!(pid = child.id(), "upstream restarted; the session goes on");
    let _ = io.to_upstream.send(Inbound::Attach(stdin)).await;
    Some((child, reader))
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

/// The signals the proxy acts on. SIGUSR1 logs the statistics and is handled here.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    usr1: tokio::signal::unix::Signal,
    inspector: Arc<Inspector>,
}

impl Signals {
    fn new(inspector: Arc<Inspector>) -> Signals {
        let install = |kind| signal(kind).expect("signal handlers install");
        Signals {
            int: install(SignalKind::interrupt()),
            term: install(SignalKind::terminate()),
            usr1: install(SignalKind::user_defined1()),
            inspector,
        }
    }

    /// The next SIGINT or SIGTERM, which is passed to the upstream and stops the proxy.
    async fn next_stop(&mut self) -> (libc::c_int, &'static str) {
        loop {
            tokio::select! {
                _ = self.int.recv() => return (libc::SIGINT, "SIGINT"),
                _ = self.term.recv() => return (libc::SIGTERM, "SIGTERM"),
                _ = self.usr1.recv() => tracing::info!("{}", self.inspector.stats.summary()),
            }
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
/// A line longer than `max_line` goes through in chunks, unparsed.
fn read_stdin(inbound: mpsc::Sender<Inbound>, max_line: usize) {
    use lines::{read_chunk, read_line, Chunk, Read};
    let mut stdin = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    loop {
        let message = match read_line(&mut stdin, max_line) {
            Ok(Read::Line(line)) => Inbound::Client(line),
            Ok(Read::Oversized(first)) => {
                tracing::warn!(
                    max_line,
                    "a client line is larger than max_line_bytes: passed through unparsed"
                );
                let (tx, rx) = mpsc::channel(4);
                if inbound.blocking_send(Inbound::Stream(rx)).is_err() {
                    return;
                }
                // If the writer stops taking chunks, the rest of the line is read and dropped:
                // the next line must still be read.
                let _ = tx.blocking_send(first);
                while let Ok(Chunk::Data(chunk, end)) = read_chunk(&mut stdin) {
                    let _ = tx.blocking_send(chunk);
                    if end {
                        break;
                    }
                }
                continue;
            }
            Ok(Read::Eof) => break,
            Err(e) => {
                tracing::warn!("reading stdin failed: {e}");
                break;
            }
        };
        if inbound.blocking_send(message).is_err() {
            return;
        }
    }
    let _ = inbound.blocking_send(Inbound::ClientEof);
}

/// Writes lines to stdout on a plain thread, flushing whenever no more lines are waiting.
/// Ends when every sender is gone, or when the client stops reading (broken pipe).
fn write_stdout(mut out: mpsc::Receiver<Out>) {
    let mut stdout = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    while let Some(message) = out.blocking_recv() {
        let written = match message {
            Out::Line(line, _permit) => stdout.write_all(&line),
            Out::Stream(mut chunks) => {
                let mut result = Ok(());
                while let Some(chunk) = chunks.blocking_recv() {
                    result = stdout.write_all(&chunk);
                    if result.is_err() {
                        break;
                    }
                }
                result
            }
        };
        let flushed = written.and_then(|()| {
            if out.is_empty() {
                stdout.flush()
            } else {
                Ok(())
            }
        });
        if let Err(e) = flushed {
            tracing::debug!("stdout closed: {e}");
            return;
        }
    }
}

/// Everything that goes to the upstream's stdin: the client's lines (after the inspector has
/// seen them) and the proxy's own. Ends at the client's EOF, closing the upstream's stdin.
async fn upstream_writer(mut inbound: mpsc::Receiver<Inbound>, io: Arc<Io>, stdin: ChildStdin) {
    let mut stdin = Some(stdin);
    // Lines that arrive while no upstream is attached (it is restarting).
    let mut held: VecDeque<Vec<u8>> = VecDeque::new();
    // Lines written in one go while more are waiting: one system call for many small lines.
    let mut batch: Vec<u8> = Vec::with_capacity(WRITE_BATCH);
    while let Some(message) = inbound.recv().await {
        if !matches!(message, Inbound::Client(_) | Inbound::Proxy(_)) {
            flush(&mut stdin, &mut batch).await;
        }
        let lines = match message {
            Inbound::Client(line) => {
                let Effects {
                    to_client,
                    to_upstream,
                    timers,
                } = io.inspector.client_line(line);
                // Answers the proxy gives at once (an open circuit breaker), and timers.
                let now = Effects {
                    to_client,
                    to_upstream: Vec::new(),
                    timers,
                };
                io.apply(now).await;
                to_upstream
            }
            Inbound::Proxy(line) => vec![line],
            Inbound::ClientEof => {
                io.client_eof
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                break;
            }
            Inbound::Attach(new) => {
                stdin = Some(new);
                held.drain(..).collect()
            }
            Inbound::Detach => {
                stdin = None;
                Vec::new()
            }
            Inbound::Gone(how, done) => {
                stdin = None;
                // Held lines were taken before the upstream died: their requests are answered
                // now, never sent to the next upstream as well.
                held.clear();
                io.apply(io.inspector.upstream_gone(&how)).await;
                let _ = done.send(());
                Vec::new()
            }
            Inbound::Stream(mut chunks) => {
                let mut lost = false;
                // Take every chunk, written or not, so the stdin reader is never stuck.
                while let Some(chunk) = chunks.recv().await {
                    match stdin.as_mut() {
                        Some(pipe) => {
                            if let Err(e) = pipe.write_all(&chunk).await {
                                tracing::warn!("cannot write to the upstream: {e}");
                                stdin = None;
                                lost = true;
                            }
                        }
                        None => lost = true,
                    }
                }
                if lost {
                    tracing::warn!("an oversized client line was lost: no upstream to take it");
                }
                Vec::new()
            }
        };
        for line in lines {
            if stdin.is_some() {
                batch.extend_from_slice(&line);
            } else {
                held.push_back(line);
            }
        }
        if inbound.is_empty() || batch.len() >= WRITE_BATCH {
            flush(&mut stdin, &mut batch).await;
        }
    }
    flush(&mut stdin, &mut batch).await;
    if let Some(mut pipe) = stdin {
        // Closing stdin is the upstream's cue to exit.
        let _ = pipe.shutdown().await;
    }
}

/// Writes what is batched for the upstream; a failed write detaches it.
async fn flush(stdin: &mut Option<ChildStdin>, batch: &mut Vec<u8>) {
    if batch.is_empty() {
        return;
    }
    if let Some(pipe) = stdin.as_mut() {
        if let Err(e) = pipe.write_all(batch).await {
            tracing::warn!("cannot write to the upstream: {e}");
            *stdin = None;
        }
    }
    batch.clear();
}

#[derive(Debug)]
enum ReaderEnd {
    /// The upstream closed its stdout (it exited, usually).
    Eof,
    /// The client is gone: nothing can be delivered any more.
    ClientGone,
}

fn spawn_reader(child: &mut Child, io: &Arc<Io>) -> JoinHandle<ReaderEnd> {
    let stdout = child.stdout.take().expect("stdout is piped");
    tokio::spawn(upstream_reader(stdout, io.clone()))
}

/// Upstream to client: every line through the inspector, which forwards it as it came unless
/// it is a failed tool call (rewritten, or retried) or non-JSON noise.
async fn upstream_reader(stdout: ChildStdout, io: Arc<Io>) -> ReaderEnd {
    use lines::{read_chunk_async, read_line_async, Chunk, IdScanner, Read};
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, stdout);
    loop {
        let mut line = match read_line_async(&mut reader, io.max_line).await {
            Ok(Read::Line(line)) => line,
            Ok(Read::Oversized(first)) => {
                // Streamed as it comes; only its id is followed, to settle the request.
                let (tx, rx) = mpsc::channel(4);
                let mut scanner = IdScanner::default();
                scanner.feed(&first);
                if io.to_client.send(Out::Stream(rx)).await.is_err()
                    || tx.send(first).await.is_err()
                {
                    return ReaderEnd::ClientGone;
                }
                let mut ended = false;
                while !ended {
                    let Ok(Chunk::Data(chunk, end)) = read_chunk_async(&mut reader).await else {
                        // The upstream ended mid-line: end the line, so the next one is whole.
                        let _ = tx.send(b"\n".to_vec()).await;
                        return ReaderEnd::Eof;
                    };
                    ended = end;
                    scanner.feed(&chunk);
                    if tx.send(chunk).await.is_err() {
                        return ReaderEnd::ClientGone;
                    }
                }
                drop(tx);
                let effects = io.inspector.oversized_answer(scanner.id());
                if !io.apply(effects).await {
                    return ReaderEnd::ClientGone;
                }
                continue;
            }
            Ok(Read::Eof) => return ReaderEnd::Eof,
            Err(e) => {
                tracing::warn!("reading the upstream's stdout failed: {e}");
                return ReaderEnd::Eof;
            }
        };
        // A last line without its newline would run into whatever is written next.
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let effects = io.inspector.upstream_line(line);
        if !io.apply(effects).await {
            return ReaderEnd::ClientGone;
        }
    }
}
