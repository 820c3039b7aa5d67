//! The I/O shell of run mode: the pumps between the client (our stdin/stdout) and the upstream
//! (the child's stdin/stdout), timers, and the upstream's lifecycle (shutdown, restart).
//!
//! ```text
//! stdin ──▶ client pump ──▶ child stdin      (one thread: read, inspect, write)
//! child stdout ──▶ upstream pump ──▶ stdout  (one thread per upstream)
//! ```
//! Every line goes through the [`Inspector`], which says what to send where; lines that are
//! not rewritten are sent as the same bytes. The pumps are plain threads doing blocking I/O, as
//! a byte relay would: no line changes threads on its way. The async runtime (one thread)
//! supervises: it waits for the upstream, passes signals on, walks the shutdown ladder, runs
//! the retries' backoff timers and restarts the upstream. The calls' time limits have a thread
//! of their own (`deadlines`).

mod deadlines;
mod inspector;
mod ladder;
mod lines;
mod pipe;
mod pumps;
mod scan;
mod stderr;
mod supervisor;

use std::future::Future;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Child;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;
use tokio::time::{sleep_until, timeout, Instant};

pub use inspector::{Effects, Inspector, Retry, Stats, Unsettled};
use ladder::Ladder;
pub use pipe::PatientStderr;
use pipe::{Retire, UpstreamOut};
use pumps::{off_thread, Io, PumpEnd};
pub use stderr::SERVER_STDERR;
use supervisor::{Decision, Exit, Meanwhile, Supervisor};

use crate::config::{Flags, Settings};
use crate::reload;
use crate::sys;
use crate::unmatched::UnmatchedLog;
use crate::upstream;

/// How long the upstream's last output may take to drain after it exited, and how long the
/// answers to what it left unanswered may take to be written.
const DRAIN_WAIT: Duration = Duration::from_secs(1);
/// How long a restarted upstream may take to answer the replayed `initialize`.
const REPLAY_WAIT: Duration = Duration::from_secs(10);
/// How often the processes the upstream left behind are looked for while they are ended.
const LEFTOVER_POLL: Duration = Duration::from_millis(20);

/// How often a running upstream with requests waiting on it is looked at for a closed stdin
/// (see [`pumps::UpstreamEnd::reader_gone`]).
const DEAFNESS_POLL: Duration = Duration::from_millis(250);

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot start the upstream server '{program}': {source}")]
    Upstream {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot use stdout: {0}")]
    Stdout(#[source] std::io::Error),
}

/// Runs the proxy until the upstream has exited for good; returns the exit code for the proxy.
/// `flags` are where `settings` came from, for reloading them; `server` is the server's name
/// in the log.
// Long: the restart loop, each step a call; what to do next is the Supervisor's decision.
pub async fn run(
    command: &[String],
    server: String,
    flags: Flags,
    settings: Settings,
    unmatched: Option<UnmatchedLog>,
) -> Result<i32, StartError> {
    let cannot_start = |source| StartError::Upstream {
        program: command.first().cloned().unwrap_or_default(),
        source,
    };
    upstream::adopt_orphans();
    let (mut child, stdin, stdout, stderr_done) =
        start(command, &settings).map_err(cannot_start)?;
    // A server's arguments often carry a database URL or a key: logged masked, as one line so
    // that a flag and its value are seen together (`--api-key KEY`).
    let shown = settings.redactor.text(&shell_line(command)).into_owned();
    tracing::info!(command = %shown, pid = child.id(), "upstream started");

    let io = wire_up(server, flags, &settings, unmatched, stdin).map_err(StartError::Stdout)?;
    let inspector = io.inspector.clone();
    let mut reader = Reader::start(&io, stdout, stderr_done);
    let client = io.clone();
    std::thread::Builder::new()
        .name("mcp-errnorm-client".into())
        .spawn(move || pumps::client_pump(client))
        .map_err(cannot_start)?;

    let mut signals = Signals::new(inspector.clone());
    let mut sup = Supervisor::new(&settings.restart);
    // The status the proxy ends with, how the last server went, and whether a restart was
    // given up after the client's requests started waiting for it.
    let (status, how, abandoned) = loop {
        let generation = sup.generation();
        let end = supervise(
            &io,
            &mut child,
            &mut reader,
            generation,
            &mut signals,
            &settings,
            &mut sup.client_closed,
        )
        .await;
        let (how, settled) = wind_down(&io, &mut reader, &mut signals, &mut sup, &end).await;
        // Before anything else starts: what this upstream left running is its own.
        end_leftovers(settings.term_wait, end.terminated).await;
        // Taken after the settle, while the upstream was being replaced.
        let exit = Exit {
            client_left: sup.client_closed || io.client_eof.load(Ordering::SeqCst),
            client_gone: end.client_gone,
            waiting: inspector.waiting(),
            settled,
        };
        let after = match sup.exited(exit) {
            Decision::End => break (end.status, how, false),
            Decision::EndUnsettled => {
                // The client pump holds the upstream's end (a huge line from a slow client): a
                // new upstream could be handed requests already answered. Ending is the safe
                // choice.
                tracing::error!(
                    "could not settle the requests of the exited upstream in time: not restarting"
                );
                break (end.status, how, false);
            }
            Decision::Restart { after, left } => {
                tracing::warn!(
                    "restarting the upstream in {} ms ({left} restarts left)",
                    after.as_millis()
                );
                after
            }
        };
        let meanwhile = backoff(after, &io, &mut signals, sup.client_closed).await;
        if !sup.backoff_over(meanwhile) {
            break (end.status, how, true);
        }
        match restart(command, &settings, &io, sup.generation(), &mut signals).await {
            Some((new_child, new_reader)) => {
                child = new_child;
                reader = new_reader;
            }
            None => break (end.status, how, true),
        }
    };
    let how = if abandoned {
        format!("{how} and was not restarted")
    } else {
        how
    };
    finish(&io, &mut signals, &mut sup, how).await;
    // A server started for a restart that was given up on is still running.
    end_leftovers(settings.term_wait, None).await;
    Ok(upstream::exit_code(status))
}

/// The end of a run: requests the client sent after the last settle are still open, while a
/// restart waited that never came (a stop signal meanwhile, a server that could not start), or
/// just after the server died when no restart follows: they are answered with `how` the last
/// upstream went. A settle that could not write (the client's end held by a line the client
/// does not take) is not tried again, nor is the flush.
async fn finish(io: &Arc<Io>, signals: &mut Signals, sup: &mut Supervisor, how: String) {
    if !sup.client_stuck && io.inspector.waiting() > 0 {
        let settle = move |io: Arc<Io>| io.upstream_gone(&how);
        off_thread_patiently("settle", io, settle, signals, &mut sup.stopping).await;
    }
    io.inspector.stats.log(true);
    let flush = |io: Arc<Io>| {
        let _ = io.client.flush();
    };
    let flushed = !sup.client_stuck
        && off_thread_patiently("flush", io, flush, signals, &mut sup.stopping).await;
    if !flushed {
        tracing::debug!("the client did not take the last lines in time");
    }
}

/// The relay of a run, its first upstream's stdin attached: the inspector, the reload of its
/// rules, what the pumps share, and the watcher of time limits.
fn wire_up(
    server: String,
    flags: Flags,
    settings: &Settings,
    unmatched: Option<UnmatchedLog>,
    stdin: OwnedFd,
) -> std::io::Result<Arc<Io>> {
    let mut inspector = Inspector::new(settings.rewriter(), settings.policy.clone());
    inspector.server = server;
    inspector.log_unmatched = unmatched.is_some();
    inspector.non_json = settings.non_json_upstream_lines;
    inspector.max_pending = settings.max_pending_requests;
    let inspector = Arc::new(inspector);
    tokio::spawn(reload::watch(
        flags,
        settings.files.clone(),
        inspector.rewriter.clone(),
    ));
    let io = Arc::new(Io::new(
        inspector,
        unmatched,
        settings.max_line_bytes,
        settings.stream_answers_over,
    )?);
    if settings.policy.has_timeouts() {
        deadlines::start(&io);
    }
    io.upstream.attach(stdin, 1, |_| true);
    Ok(io)
}

/// Once an upstream exited: its last output drained, its stderr's last words logged, and the
/// requests it left answered. How it went, and whether the requests were settled in time.
async fn wind_down(
    io: &Arc<Io>,
    reader: &mut Reader,
    signals: &mut Signals,
    sup: &mut Supervisor,
    end: &End,
) -> (String, bool) {
    io.upstream.exited(sup.generation());
    let how = match upstream::describe(end.status) {
        how if end.deaf => format!("stopped reading its stdin and {how}"),
        how => how,
    };
    sup.stopping |= end.stopping;
    if drain(io, reader, signals, &mut sup.stopping).await {
        // A crashing server's last words are on stderr: they reach the log before the proxy
        // moves on (or ends). Not waited for when a grandchild holds its stdout: it holds
        // stderr too.
        let _ = timeout(DRAIN_WAIT, &mut reader.stderr_done).await;
    }
    tracing::info!("upstream {how}");
    let gone = how.clone();
    let settle = move |io: Arc<Io>| io.upstream_gone(&gone);
    let settled = off_thread_patiently("settle", io, settle, signals, &mut sup.stopping).await;
    (how, settled)
}

/// Waits out a restart's backoff, unless something calls it off. A signal to the whole
/// process group may arrive just after the upstream died of it; a client that leaves meanwhile
/// needs a new server only for requests it left waiting: then it starts at once, answers them,
/// and is closed.
async fn backoff(
    after: Duration,
    io: &Io,
    signals: &mut Signals,
    client_closed: bool,
) -> Meanwhile {
    tokio::select! {
        _ = tokio::time::sleep(after) => Meanwhile::Nothing,
        (_, name) = signals.next_stop() => {
            tracing::info!("{name} while restarting: not restarting");
            Meanwhile::StopSignal
        }
        _ = io.client_closed.notified(), if !client_closed => {
            let waiting = io.inspector.waiting();
            if waiting == 0 {
                tracing::info!("the client left while restarting: not restarting");
            }
            Meanwhile::ClientClosed { waiting }
        }
    }
}

/// Spawns the upstream and takes its pipes, for blocking I/O on the pumps' threads; its stderr
/// is copied to ours (and to the log file, if any) on a thread of its own, which says when it
/// is done.
fn start(
    command: &[String],
    settings: &Settings,
) -> std::io::Result<(Child, OwnedFd, UpstreamOut, oneshot::Receiver<()>)> {
    let mut child = upstream::spawn(command, &settings.env)?;
    let stdin = child
        .stdin
        .take()
        .expect("stdin is piped")
        .into_owned_fd()?;
    let stdout = child
        .stdout
        .take()
        .expect("stdout is piped")
        .into_owned_fd()?;
    let stdout = UpstreamOut::new(stdout).inspect_err(|_| {
        let _ = child.start_kill();
    })?;
    let stderr = child
        .stderr
        .take()
        .expect("stderr is piped")
        .into_owned_fd()?;
    let (done, stderr_done) = oneshot::channel();
    let redactor = settings.redactor.clone();
    let to_log = settings.log_file.is_some();
    std::thread::Builder::new()
        .name("mcp-errnorm-stderr".into())
        .spawn(move || stderr::copy(stderr, redactor, to_log, done))?;
    Ok((child, stdin, stdout, stderr_done))
}

/// A command as a shell would take it: plain words as they are, any other in single quotes.
fn shell_line(command: &[String]) -> String {
    let plain = |a: &str| {
        !a.is_empty()
            && a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b))
    };
    let words: Vec<String> = command
        .iter()
        .map(|a| {
            if plain(a) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect();
    words.join(" ")
}

/// Waits for `done` as long as it takes (the client reads slowly, not never: it would have
/// closed its end), calling `look` every [`DRAIN_WAIT`], unless the proxy is told to stop,
/// meanwhile or before: then [`DRAIN_WAIT`] at most. `None` when `done` did not come.
async fn patiently<T>(
    mut done: impl Future<Output = T> + Unpin,
    signals: &mut Signals,
    stopping: &mut bool,
    mut look: impl FnMut(),
) -> Option<T> {
    loop {
        if *stopping {
            return timeout(DRAIN_WAIT, done).await.ok();
        }
        tokio::select! {
            out = &mut done => return Some(out),
            _ = tokio::time::sleep(DRAIN_WAIT) => look(),
            (_, name) = signals.next_stop() => {
                tracing::info!("{name} while the last lines are delivered: stopping");
                *stopping = true;
            }
        }
    }
}

/// Runs `work`, which writes to the client, on a thread of its own and waits for it
/// [`patiently`]. Whether it finished.
async fn off_thread_patiently(
    name: &str,
    io: &Arc<Io>,
    work: impl FnOnce(Arc<Io>) + Send + 'static,
    signals: &mut Signals,
    stopping: &mut bool,
) -> bool {
    let (done, finished) = oneshot::channel();
    off_thread(name, Arc::downgrade(io), move |io| {
        work(io);
        let _ = done.send(());
    });
    matches!(
        patiently(finished, signals, stopping, || {}).await,
        Some(Ok(()))
    )
}

/// The upstream pump of one upstream, seen from the supervisor.
struct Reader {
    ended: oneshot::Receiver<PumpEnd>,
    retire: Arc<Retire>,
    done: bool,
    /// Told when the upstream's stderr is copied to the end.
    stderr_done: oneshot::Receiver<()>,
}

impl Reader {
    fn start(io: &Arc<Io>, stdout: UpstreamOut, stderr_done: oneshot::Receiver<()>) -> Reader {
        let (tell, ended) = oneshot::channel();
        let retire = stdout.retire();
        let pump_io = io.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-errnorm-upstream".into())
            .spawn(move || pumps::upstream_pump(pump_io, stdout, tell));
        if let Err(e) = spawned {
            // Without a reader the upstream is deaf: the supervisor sees this one end at once.
            tracing::error!("cannot start a thread to read the upstream: {e}");
        }
        Reader {
            ended,
            retire,
            done: false,
            stderr_done,
        }
    }

    /// Waits for the pump to end (cancel-safe).
    async fn ended(&mut self) -> PumpEnd {
        let end = (&mut self.ended).await.unwrap_or(PumpEnd::Eof);
        self.done = true;
        end
    }
}

/// Waits, once the upstream exited, for its pump to deliver all the upstream wrote: as long as
/// the client takes it, however slowly, since its requests are answered only then (settling
/// them sooner would answer some twice). A pump still at it after [`DRAIN_WAIT`] is retired
/// (its pipe ends once what the upstream left in it is read: `UpstreamOut`) when it waits on
/// an empty pipe, has read an answer to every request, or has read more than the pipe could
/// hold when the upstream exited: a process the server started may hold the pipe open, and
/// what that writes is nobody's. Once the proxy is told to stop, the pump gets [`DRAIN_WAIT`]
/// more. True when the pump reached the pipe's end.
async fn drain(io: &Io, reader: &mut Reader, signals: &mut Signals, stopping: &mut bool) -> bool {
    if reader.done {
        return true;
    }
    let retire = reader.retire.clone();
    let read_at_exit = retire.read();
    let mut held = false;
    let look = || {
        let more_than_left = retire.read() - read_at_exit > retire.capacity;
        if retire.waiting() || io.inspector.waiting() == 0 || more_than_left {
            held = true;
            retire.retire();
        }
    };
    let ended = patiently(Box::pin(reader.ended()), signals, stopping, look).await;
    if ended.is_none() {
        // Told to stop: what is left in the pipe is not waited for.
        reader.retire.retire();
        return false;
    }
    !held
}

/// Ends every process the proxy started that is still running once the upstream has exited:
/// a server its wrapper left, a helper it daemonized, a process that held its pipes. They get
/// SIGTERM (unless they had it at `terminated`, with the upstream), then SIGKILL `term_wait`
/// after it; those adopted are reaped. Without this, a server that ignores SIGTERM behind a
/// wrapper that does not (`sh -c "server; other"`) would outlive the proxy.
async fn end_leftovers(term_wait: Duration, terminated: Option<Instant>) {
    upstream::reap_adopted(None);
    let left = upstream::descendants();
    if left.is_empty() {
        return;
    }
    let since = terminated.unwrap_or_else(|| {
        tracing::info!(
            count = left.len(),
            "processes the upstream started still run after it exited: SIGTERM"
        );
        upstream::signal_leftovers(sys::SIGTERM);
        Instant::now()
    });
    let gone = || {
        upstream::reap_adopted(None);
        upstream::descendants().is_empty()
    };
    while Instant::now() < since + term_wait {
        tokio::time::sleep(LEFTOVER_POLL).await;
        if gone() {
            return;
        }
    }
    tracing::warn!("processes the upstream started still run after SIGTERM: SIGKILL");
    upstream::signal_leftovers(sys::SIGKILL);
    let give_up = Instant::now() + DRAIN_WAIT;
    while !gone() {
        if Instant::now() >= give_up {
            tracing::error!("processes the upstream started survived SIGKILL");
            return;
        }
        tokio::time::sleep(LEFTOVER_POLL).await;
    }
}

/// How one upstream ended.
struct End {
    status: ExitStatus,
    /// When the upstream and what it started were sent SIGTERM (or the stop signal the proxy
    /// was sent), if they were.
    terminated: Option<Instant>,
    /// The proxy was told to stop (SIGINT, SIGTERM).
    stopping: bool,
    /// Nobody reads our stdout any more.
    client_gone: bool,
    /// It was closed because it no longer read its stdin while it ran.
    deaf: bool,
}

/// Watches one upstream until it exits: passes signals on, and walks the shutdown ladder when
/// the client leaves or the proxy is told to stop.
// Long: one select! over every event of a running upstream; each arm is a few lines.
async fn supervise(
    io: &Arc<Io>,
    child: &mut Child,
    reader: &mut Reader,
    generation: u64,
    signals: &mut Signals,
    settings: &Settings,
    client_closed: &mut bool,
) -> End {
    let mut ladder = if *client_closed {
        Ladder::closed(io, settings)
    } else {
        Ladder::Running
    };
    let (mut stopping, mut client_gone, mut deafened) = (false, false, false);
    let mut terminated = None;
    let deaf = io.upstream.deaf();
    // Processes adopted after their parent exited are reaped as they exit, not at the end
    // only: a server that leaves a helper per call would otherwise pile up zombies.
    let mut exits = signal(SignalKind::child()).ok();
    let (mut deafness, mut seen_closed) = (tokio::time::interval(DEAFNESS_POLL), false);
    deafness.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            status = child.wait() => {
                let status = status.unwrap_or_else(|e| {
                    tracing::error!("cannot wait for the upstream: {e}");
                    std::os::unix::process::ExitStatusExt::from_raw(70 << 8)
                });
                return End { status, terminated, stopping, client_gone, deaf: deafened };
            }
            Some(()) = async { exits.as_mut()?.recv().await }, if exits.is_some() => {
                upstream::reap_adopted(child.id());
            }
            (sig, name) = signals.next_stop() => {
                tracing::info!("{name}: passing it to the upstream");
                upstream::signal(child, sig);
                terminated.get_or_insert_with(Instant::now);
                stopping = true;
                ladder = ladder.at_least(Ladder::Terminating(Instant::now() + settings.term_wait));
            }
            _ = io.client_closed.notified(), if !*client_closed => {
                *client_closed = true;
                tracing::debug!("the client closed its side; closed the upstream's stdin");
                ladder = ladder.at_least(Ladder::closed(io, settings));
            }
            // A server that closed its stdin and runs on can take no more requests: it is
            // closed as at the end of a session, and what it leaves is answered (or it is
            // restarted), instead of requests waiting on it for ever.
            _ = deaf.told.notified() => {
                if deaf.is(generation) && matches!(ladder, Ladder::Running) {
                    tracing::warn!(
                        "the upstream no longer reads its stdin: closing it (close_wait_ms, then \
                         SIGTERM)"
                    );
                    ladder = ladder.at_least(Ladder::closing(io, settings));
                    deafened = true;
                }
            }
            // A server that exits closes its stdin too, and that is for `child.wait()` to
            // tell: a close counts once seen twice, a poll apart, with the server running.
            _ = deafness.tick(), if matches!(ladder, Ladder::Running) => {
                let closed = io.inspector.waiting() > 0 && io.upstream.reader_gone(generation);
                if closed && seen_closed && matches!(child.try_wait(), Ok(None)) {
                    io.upstream.deafen(generation);
                }
                seen_closed = closed;
            }
            end = reader.ended(), if !reader.done => {
                if matches!(end, PumpEnd::ClientGone) {
                    tracing::info!("the client stopped reading; shutting the upstream down");
                    client_gone = true;
                    stopping = true;
                } else {
                    tracing::debug!("the upstream closed its stdout");
                }
                ladder = ladder.at_least(Ladder::closing(io, settings));
                // Nothing more can be relayed: close the upstream's stdin too, from another
                // thread (the client pump may hold it; signals and the ladder must stay served).
                off_thread("detach", Arc::downgrade(io), move |io| {
                    io.upstream.detach(generation)
                });
            }
            _ = sleep_until(ladder.deadline()), if ladder.deadline_set() => {
                ladder = match ladder {
                    Ladder::Answering(until) => {
                        let client_gone = pipe::reader_gone(std::io::stdout().as_raw_fd());
                        if io.inspector.waiting() == 0 || Instant::now() >= until || client_gone {
                            Ladder::closing(io, settings)
                        } else {
                            Ladder::Answering(until)
                        }
                    }
                    Ladder::Closing { at, taken } => {
                        Ladder::closing_on(at, taken, io, settings).unwrap_or_else(|| {
                            tracing::info!("upstream still running after its stdin closed: SIGTERM");
                            upstream::signal(child, sys::SIGTERM);
                            terminated.get_or_insert_with(Instant::now);
                            Ladder::Terminating(Instant::now() + settings.term_wait)
                        })
                    }
                    _ => {
                        tracing::warn!("upstream still running after SIGTERM: SIGKILL");
                        upstream::signal(child, sys::SIGKILL);
                        Ladder::Killed
                    }
                };
            }
        }
    }
}

/// Starts the upstream again and restores the session: the client's own `initialize` and
/// `notifications/initialized` are replayed and their answer swallowed, then the lines held
/// meanwhile flow to the new upstream. `None`: no new upstream (it could not start, or the
/// proxy was told to stop meanwhile).
async fn restart(
    command: &[String],
    settings: &Settings,
    io: &Arc<Io>,
    generation: u64,
    signals: &mut Signals,
) -> Option<(Child, Reader)> {
    let (mut child, stdin, stdout, stderr_done) = match start(command, settings) {
        Ok(started) => started,
        Err(e) => {
            tracing::error!("cannot restart the upstream: {e}");
            return None;
        }
    };
    let reader = Reader::start(io, stdout, stderr_done);
    let mut stdin = std::fs::File::from(stdin);
    if let Some((line, answered)) = io.inspector.replay_initialize() {
        // Written from here: a fresh pipe takes two short lines without waiting.
        let replayed = stdin.write_all(&line);
        // The wait ends as soon as anything happens: an answer, the new upstream dying too
        // (the supervisor sees it next), or the proxy told to stop (then nothing restarts).
        tokio::select! {
            answer = timeout(REPLAY_WAIT, answered) => {
                if answer.is_err() {
                    tracing::warn!("the restarted upstream did not answer initialize in time");
                }
            }
            _ = child.wait() => {
                tracing::warn!("the restarted upstream exited before answering initialize");
            }
            (sig, name) = signals.next_stop() => {
                tracing::info!("{name} while restarting: passed to the new upstream, not going on");
                upstream::signal(&child, sig);
                return None;
            }
        }
        let initialized =
            stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        if let Err(e) = replayed.and(initialized) {
            tracing::error!("cannot restore the session on the restarted upstream: {e}");
        }
    }
    tracing::warn!(pid = child.id(), "upstream restarted; the session goes on");
    // From another thread: the client pump may hold the upstream's end for a while.
    off_thread("attach", Arc::downgrade(io), move |io| {
        io.upstream.attach(stdin.into(), generation, |line| {
            io.inspector.still_wanted(line)
        })
    });
    Some((child, reader))
}

/// The signals the proxy acts on. SIGUSR1 logs the statistics and is handled here.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    /// A terminal's Ctrl-\: a stop like SIGINT, not a death with the calls unanswered.
    quit: tokio::signal::unix::Signal,
    usr1: tokio::signal::unix::Signal,
    /// Meant for nobody here: logs the statistics like SIGUSR1 rather than kill the proxy.
    usr2: tokio::signal::unix::Signal,
    inspector: Arc<Inspector>,
}

impl Signals {
    fn new(inspector: Arc<Inspector>) -> Signals {
        let install = |kind| signal(kind).expect("signal handlers install");
        Signals {
            int: install(SignalKind::interrupt()),
            term: install(SignalKind::terminate()),
            quit: install(SignalKind::quit()),
            usr1: install(SignalKind::user_defined1()),
            usr2: install(SignalKind::user_defined2()),
            inspector,
        }
    }

    /// The next SIGINT, SIGTERM or SIGQUIT, which is passed to the upstream and stops the proxy.
    async fn next_stop(&mut self) -> (sys::Signal, &'static str) {
        loop {
            tokio::select! {
                _ = self.int.recv() => return (sys::SIGINT, "SIGINT"),
                _ = self.term.recv() => return (sys::SIGTERM, "SIGTERM"),
                _ = self.quit.recv() => return (sys::SIGQUIT, "SIGQUIT"),
                _ = self.usr1.recv() => self.inspector.stats.log(false),
                _ = self.usr2.recv() => self.inspector.stats.log(false),
            }
        }
    }
}
