//! The two pumps, one plain thread per direction, and the two ends they write to.
//!
//! Each pump reads a line, asks the [`Inspector`] what it means and writes the outcome itself:
//! no line changes threads on its way, so the proxy costs what its reading, parsing and writing
//! cost, and a slow reader on either side holds its pump back (back-pressure without buffers).
//! Lines that do not come from a pump (a timer's answer, a retry, the answers given when the
//! upstream died) are written by short-lived threads through the same two ends, whose locks keep
//! every line whole.
//!
//! Lock order: the upstream's end before the client's, never the other way round.

use std::collections::VecDeque;
use std::io::{BufWriter, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use super::deadlines::{Deadlines, Expiring};
use super::inspector::{Effects, Inspector, Retry, Streamed};
use super::lines::{LineReader, Read};
use super::pipe::{ClientOut, ClientPipe, Delivery, UpstreamOut, UpstreamPipe};
use super::scan::{IdScanner, Mentions};
use crate::sync::lock;
use crate::unmatched::UnmatchedLog;

/// Buffer size for each pipe, as a byte relay would use.
const BUFFER: usize = 64 << 10;
/// How many bytes of its own answers (timeouts, answers for a server that died) the proxy
/// makes before it writes them: one buffer's worth, the same as for everything else bound for
/// the client. The rest are made as the client takes these: a million timeouts due at once
/// cost a buffer, not a gigabyte, and the first reach the client at once.
const ANSWER_BUDGET: usize = BUFFER;
/// Bytes of cancels waiting for an upstream that does not read them; past this, further ones
/// are dropped (a cancel is advice: the client has its answer already).
const CANCEL_LIMIT: usize = 1 << 20;
/// Bytes of client lines held while the upstream restarts before the client pump waits (one
/// line is always taken, whatever its size).
const HOLD_LIMIT: usize = 4 << 20;

/// How long the lines a pump has written may wait for the inspection of those read with them.
const FLUSH_WITHIN: Duration = Duration::from_micros(5);

/// When a pump sends what it has written: before a read that may wait (no further line is read
/// already), or once the first line written since the last send has waited [`FLUSH_WITHIN`].
/// Without the second, a burst of 32 calls would reach the upstream only after all 32 were
/// inspected, and their answers the client only after all 32 answers were; with it, the other
/// side starts on the first lines while the pump inspects the rest. Measured with 32 calls in
/// flight: 0.65-0.72x the byte relay's calls per second without it, 0.76-0.92x with it.
#[derive(Default)]
struct Flush {
    /// When the first line of those not sent yet was written; a single line needs no clock.
    oldest: Option<Instant>,
}

impl Flush {
    /// Whether to send now, a line having just been written; `more` if the next line is read.
    fn due(&mut self, more: bool) -> bool {
        let due = !more || self.oldest.is_some_and(|t| t.elapsed() >= FLUSH_WITHIN);
        if due {
            self.oldest = None;
        } else {
            self.oldest.get_or_insert_with(Instant::now);
        }
        due
    }
}

/// What the pumps, timers, the deadline watcher and the supervisor share.
pub(super) struct Io {
    pub inspector: Arc<Inspector>,
    /// Our stdout.
    pub client: ClientEnd,
    /// The upstream's stdin, while there is one.
    pub upstream: UpstreamEnd,
    /// Lines longer than this are streamed, unparsed.
    pub max_line: usize,
    /// Upstream lines longer than this are streamed when the inspector lets them go.
    pub stream_over: usize,
    /// Set when the client closed stdin, before the upstream's stdin is closed: an upstream
    /// that then exits is done, not to be restarted.
    pub client_eof: AtomicBool,
    /// Told when the client closed stdin.
    pub client_closed: Notify,
    /// Where the calls' deadlines are watched (`super::deadlines`).
    pub deadlines: Arc<Deadlines>,
    /// Cancels for the upstream from the deadline watcher (see [`Io::cancel`]).
    cancels: Mutex<Cancels>,
    /// Where retries wait out their backoff.
    runtime: tokio::runtime::Handle,
    /// `--log-unmatched`: where the inspector's [`Effects::unmatched`] lines are appended.
    unmatched: Option<UnmatchedLog>,
}

impl Io {
    pub fn new(
        inspector: Arc<Inspector>,
        unmatched: Option<UnmatchedLog>,
        max_line: usize,
        stream_over: usize,
    ) -> std::io::Result<Io> {
        let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
        let delivery = Arc::new(Delivery::default());
        let stdout = ClientOut::new(stdout, delivery.clone());
        Ok(Io {
            inspector,
            client: ClientEnd {
                out: Mutex::new(BufWriter::with_capacity(BUFFER, stdout)),
                delivery,
            },
            upstream: UpstreamEnd::default(),
            max_line,
            stream_over,
            client_eof: AtomicBool::new(false),
            client_closed: Notify::new(),
            deadlines: Arc::default(),
            cancels: Mutex::default(),
            runtime: tokio::runtime::Handle::current(),
            unmatched,
        })
    }

    /// Sends a retry whose backoff is over, decided while holding the upstream's end: a client
    /// that closed stdin meanwhile (the upstream's stdin is closed with it) gets the failure
    /// the call was retried for instead.
    fn retry(&self, retry: Retry) {
        let mut upstream = self.upstream.lock();
        let effects = self.inspector.retry_due(retry, !upstream.closed);
        for line in effects.to_upstream {
            upstream.write(line);
        }
        upstream.flush();
        drop(upstream);
        let _ = self.client.send(&effects.to_client, true);
    }

    /// Appends the failures no rule matched to the `--log-unmatched` file.
    fn record_unmatched(&self, lines: &[String]) {
        if let Some(log) = &self.unmatched {
            for line in lines {
                log.append(line);
            }
        }
    }

    fn send_upstream(&self, lines: Vec<Vec<u8>>) {
        if lines.is_empty() {
            return;
        }
        let mut upstream = self.upstream.lock();
        for line in lines {
            upstream.write(line);
        }
        upstream.flush();
    }

    /// What is left for later: each retry waits out its backoff in the runtime, then goes on a
    /// thread of its own (what it writes may block, on an upstream that does not read, and must
    /// hold up nothing else); a new deadline goes to the watcher.
    fn schedule(self: &Arc<Self>, retries: Vec<(Duration, Retry)>, deadline: Option<Instant>) {
        for (after, retry) in retries {
            // Timers do not keep the relay alive: after the end, they find nothing to do.
            let io = Arc::downgrade(self);
            self.runtime.spawn(async move {
                tokio::time::sleep(after).await;
                off_thread("retry", io, move |io| io.retry(retry));
            });
        }
        if let Some(at) = deadline {
            self.deadlines.arm(at);
        }
    }

    /// Answers the calls whose time is up (`super::deadlines`), deciding and writing while
    /// holding the client's end: an answer streaming to the client holds it too, and settles its
    /// call before letting go, so no call is answered twice. Blocks while the client does not
    /// read (then nothing else reaches it either), never on the upstream.
    pub fn expire_due(self: &Arc<Self>) {
        let mut out = self.client.lock();
        let now = Instant::now();
        let mut client_gone = false;
        loop {
            let effects = self.inspector.expire_due(now, ANSWER_BUDGET);
            if effects.to_client.is_empty() {
                break;
            }
            // Once the client is gone, the calls are still given up on (their deadlines would
            // wake the watcher again at once), their answers dropped.
            if !client_gone && write_lines(&mut out, &effects.to_client, false).is_err() {
                tracing::debug!("a timeout answer could not be written: the client is gone");
                client_gone = true;
            }
            self.cancel(effects.to_upstream);
        }
        let _ = out.flush();
    }

    /// Sends cancels to the upstream on a thread of its own (it may not be reading), one thread
    /// at a time however many come meanwhile.
    fn cancel(self: &Arc<Self>, lines: Vec<Vec<u8>>) {
        if lines.is_empty() {
            return;
        }
        let mut cancels = lock(&self.cancels);
        for line in lines {
            if cancels.bytes + line.len() > CANCEL_LIMIT {
                cancels.dropped += 1;
                continue;
            }
            cancels.bytes += line.len();
            cancels.lines.push(line);
        }
        if cancels.dropped > 0 && cancels.dropped.is_power_of_two() {
            tracing::warn!(
                dropped = cancels.dropped,
                "the upstream does not take the cancels of calls that timed out: dropping some"
            );
        }
        if cancels.writing {
            return;
        }
        cancels.writing = true;
        drop(cancels);
        let started = off_thread("cancel", Arc::downgrade(self), |io| loop {
            let lines = {
                let mut cancels = lock(&io.cancels);
                if cancels.lines.is_empty() {
                    cancels.writing = false;
                    return;
                }
                cancels.bytes = 0;
                std::mem::take(&mut cancels.lines)
            };
            io.send_upstream(lines);
        });
        if !started {
            // The lines wait for the next cancel, which tries again.
            lock(&self.cancels).writing = false;
        }
    }

    /// The upstream `how` ("exited with status 1") is gone: it gets no more lines, lines held
    /// for it are dropped, and every request still waiting is answered now. Holding the
    /// upstream's end makes this one step for the client pump: a request it took before is
    /// answered here, one it takes after goes to the next upstream.
    pub fn upstream_gone(self: &Arc<Self>, how: &str) {
        let mut upstream = self.upstream.lock();
        upstream.pipe = None;
        upstream.drop_held();
        self.upstream.room.notify_all();
        // Decided while holding the client's end, as `expire_due` does: a line streaming to the
        // client settles its call before letting go, so that no call is answered twice.
        let mut out = self.client.lock();
        let mut left = self.inspector.upstream_gone(how);
        loop {
            let lines = self.inspector.answer_gone(&mut left, ANSWER_BUDGET);
            if lines.is_empty() || write_lines(&mut out, &lines, false).is_err() {
                break;
            }
        }
        let _ = out.flush();
    }
}

/// Runs `work` on a thread of its own if the relay is still there; false if no thread could
/// be started (then `work` never runs).
pub(super) fn off_thread(
    name: &str,
    io: Weak<Io>,
    work: impl FnOnce(Arc<Io>) + Send + 'static,
) -> bool {
    let spawned = std::thread::Builder::new()
        .name(format!("mcp-errnorm-{name}"))
        .spawn(move || {
            if let Some(io) = io.upgrade() {
                work(io);
            }
        });
    if let Err(e) = &spawned {
        tracing::error!("cannot start a thread for a {name}: {e}");
    }
    spawned.is_ok()
}

/// Cancels waiting to go to the upstream, and whether a thread is writing them.
#[derive(Default)]
struct Cancels {
    lines: Vec<Vec<u8>>,
    /// The size of `lines`, at most [`CANCEL_LIMIT`].
    bytes: usize,
    /// How many were dropped for want of room.
    dropped: u64,
    writing: bool,
}

/// Our stdout, shared by every writer; the lock keeps lines whole.
pub(super) struct ClientEnd {
    out: Mutex<BufWriter<ClientOut>>,
    /// How the client takes it, told without the lock (a write holding it may wait).
    pub delivery: Arc<Delivery>,
}

impl ClientEnd {
    fn lock(&self) -> MutexGuard<'_, BufWriter<ClientOut>> {
        lock(&self.out)
    }

    /// Writes `lines`, then, if `flush`, everything buffered (a pump leaves lines buffered while
    /// it has more to write). Fails once the client is gone.
    pub fn send(&self, lines: &[Vec<u8>], flush: bool) -> std::io::Result<()> {
        write_lines(&mut self.lock(), lines, flush)
    }

    pub fn flush(&self) -> std::io::Result<()> {
        self.lock().flush()
    }
}

/// Writes `lines` to the client, then, if `flush`, everything buffered.
fn write_lines(
    out: &mut BufWriter<ClientOut>,
    lines: &[Vec<u8>],
    flush: bool,
) -> std::io::Result<()> {
    for line in lines {
        out.write_all(line)?;
    }
    if flush {
        out.flush()?;
    }
    Ok(())
}

/// The upstream's stdin, shared by the client pump, timers and the supervisor.
#[derive(Default)]
pub(super) struct UpstreamEnd {
    inlet: Mutex<Inlet>,
    /// Told when held lines are gone (written to a new upstream, or answered).
    room: Condvar,
    /// The last generation of upstream known to have exited, told without the lock (see
    /// [`UpstreamPipe`]).
    exited: Arc<AtomicU64>,
}

#[derive(Default)]
pub(super) struct Inlet {
    pipe: Option<BufWriter<UpstreamPipe>>,
    /// Which upstream is attached, so that detaching one already replaced does nothing.
    generation: u64,
    /// Lines that came while no upstream was attached (it is restarting), and their size.
    held: VecDeque<Vec<u8>>,
    held_bytes: usize,
    /// The client closed stdin: an upstream attached from now on gets its stdin closed after
    /// the held lines.
    closed: bool,
    /// Told when a write to an upstream fails (see [`UpstreamEnd::deaf`]).
    deaf: Arc<Deaf>,
}

/// Which upstream stopped reading its stdin while the proxy wrote to it: one that closed it
/// and runs on can take no more requests, and only the supervisor can end it.
#[derive(Default)]
pub(super) struct Deaf {
    /// The generation of the last upstream a write failed on, plus one (0: none yet).
    generation: AtomicU64,
    pub told: Notify,
}

impl Deaf {
    /// Whether a write to the `generation`-th upstream failed.
    pub fn is(&self, generation: u64) -> bool {
        self.generation.load(Ordering::SeqCst) == generation + 1
    }
}

impl UpstreamEnd {
    fn lock(&self) -> MutexGuard<'_, Inlet> {
        lock(&self.inlet)
    }

    /// Where the supervisor learns that an upstream stopped reading its stdin.
    pub fn deaf(&self) -> Arc<Deaf> {
        self.lock().deaf.clone()
    }

    /// Waits while the lines held for a restarting upstream are over [`HOLD_LIMIT`]: a client
    /// that keeps writing meanwhile is slowed down instead of growing the proxy's memory.
    fn wait_for_room<'a>(&self, mut inlet: MutexGuard<'a, Inlet>) -> MutexGuard<'a, Inlet> {
        while inlet.held_bytes > HOLD_LIMIT && inlet.pipe.is_none() && !inlet.closed {
            inlet = crate::sync::wait(&self.room, inlet);
        }
        inlet
    }

    /// A (new) upstream to write to, the supervisor's `generation`-th; the lines held
    /// meanwhile go first, those still `wanted`.
    pub fn attach(&self, stdin: OwnedFd, generation: u64, wanted: impl Fn(&[u8]) -> bool) {
        let pipe = UpstreamPipe::new(stdin, generation, self.exited.clone());
        let mut inlet = self.lock();
        inlet.generation = generation;
        inlet.pipe = Some(BufWriter::with_capacity(BUFFER, pipe));
        let held = std::mem::take(&mut inlet.held);
        inlet.held_bytes = 0;
        for line in held.into_iter().filter(|line| wanted(line)) {
            inlet.write(line);
        }
        inlet.flush();
        self.room.notify_all();
        if inlet.closed {
            inlet.pipe = None;
        }
    }

    /// The `generation`-th upstream no longer reads: stop writing to it and hold lines until
    /// another is attached. Its stdin closes, unflushed (it may never read it).
    pub fn detach(&self, generation: u64) {
        let mut inlet = self.lock();
        if inlet.generation == generation {
            if let Some(pipe) = inlet.pipe.take() {
                drop(pipe.into_parts());
            }
        }
    }

    /// The `generation`-th upstream exited: a write waiting for room in its stdin gives up
    /// (what a grandchild holding that pipe never reads would wait for forever, holding the
    /// lock the settling of its requests needs). Takes no lock.
    pub fn exited(&self, generation: u64) {
        self.exited.fetch_max(generation, Ordering::SeqCst);
    }

    /// Whether the `generation`-th upstream closed its stdin, seen without waiting. A request
    /// written just before the close vanished with the pipe: no write fails until the next
    /// request, which may never come. False while someone holds the lock: a write under way
    /// sees a close itself.
    pub fn reader_gone(&self, generation: u64) -> bool {
        crate::sync::try_lock(&self.inlet).is_some_and(|inlet| {
            let pipe = inlet.pipe.as_ref();
            inlet.generation == generation && pipe.is_some_and(|p| p.get_ref().reader_gone())
        })
    }

    /// Treats the `generation`-th upstream, whose stdin [`UpstreamEnd::reader_gone`] saw
    /// closed, as one a write failed on (without waiting: if someone holds the lock, it is
    /// their write that fails).
    pub fn deafen(&self, generation: u64) {
        if let Some(mut inlet) = crate::sync::try_lock(&self.inlet) {
            if inlet.generation == generation && inlet.pipe.is_some() {
                inlet.lost(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "it closed its stdin",
                ));
            }
        }
    }

    /// The client closed stdin: what is written goes out, then the upstream's stdin closes,
    /// its cue to exit.
    fn close(&self) {
        let mut inlet = self.lock();
        inlet.flush();
        inlet.pipe = None;
        inlet.closed = true;
    }
}

impl Inlet {
    /// Writes a line, or holds it while no upstream is attached. A failed write detaches the
    /// upstream; the request is answered when the supervisor learns it is gone.
    pub fn write(&mut self, line: Vec<u8>) {
        if self.closed && self.pipe.is_none() {
            return;
        }
        match self.pipe.as_mut() {
            Some(pipe) => {
                if let Err(e) = pipe.write_all(&line) {
                    self.lost(e);
                }
            }
            None => {
                self.held_bytes += line.len();
                self.held.push_back(line);
            }
        }
    }

    fn drop_held(&mut self) {
        self.held.clear();
        self.held_bytes = 0;
    }

    /// Writes part of a line too large to hold: straight through, or nowhere.
    fn write_through(&mut self, bytes: &[u8]) {
        if let Some(Err(e)) = self.pipe.as_mut().map(|pipe| pipe.write_all(bytes)) {
            self.lost(e);
        }
    }

    pub fn flush(&mut self) {
        if let Some(Err(e)) = self.pipe.as_mut().map(Write::flush) {
            self.lost(e);
        }
    }

    fn lost(&mut self, e: std::io::Error) {
        tracing::warn!("cannot write to the upstream: {e}");
        if let Some(pipe) = self.pipe.take() {
            drop(pipe.into_parts());
        }
        // An upstream that exited is seen by the supervisor anyway; one that closed its stdin
        // and runs on is seen only through this.
        self.deaf
            .generation
            .store(self.generation + 1, Ordering::SeqCst);
        self.deaf.told.notify_one();
    }
}

/// Client to upstream, on its own thread: every line through the inspector, which registers
/// requests and may answer at once (an open circuit breaker). Ends at the client's EOF, closing
/// the upstream's stdin. A line longer than `max_line` goes through in chunks, unparsed.
pub(super) fn client_pump(io: Arc<Io>) {
    match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(stdin) => pump_client(&io, LineReader::new(ClientPipe::new(stdin))),
        Err(e) => tracing::error!("cannot read stdin: {e}"),
    }
    io.client_eof.store(true, Ordering::SeqCst);
    io.upstream.close();
    io.client_closed.notify_one();
}

fn pump_client(io: &Arc<Io>, mut stdin: LineReader<ClientPipe>) {
    let mut batch = Flush::default();
    loop {
        match stdin.read_line(io.max_line) {
            Ok(Read::Line(line)) => {
                // Held across the inspection, so that the upstream's end is never seen between
                // a request being registered and being written (see `Io::upstream_gone`).
                let mut upstream = io.upstream.lock();
                let mut effects = io.inspector.client_line(line);
                // Before writing, which may block: the deadline must be watched meanwhile.
                io.schedule(std::mem::take(&mut effects.retries), effects.deadline);
                if !effects.to_client.is_empty() {
                    let _ = io.client.send(&effects.to_client, true);
                }
                for line in effects.to_upstream {
                    upstream.write(line);
                }
                if batch.due(stdin.has_line()) {
                    upstream.flush();
                }
                drop(io.upstream.wait_for_room(upstream));
            }
            Ok(Read::Long(first)) => {
                tracing::warn!(
                    max_line = io.max_line,
                    "a client line is larger than max_line_bytes: passed through unparsed"
                );
                let mut upstream = io.upstream.lock();
                let mut line = LongLine::default();
                line.pass(io, &mut upstream, &first);
                // All of it is read, written or not, so that the next line is whole.
                let _ = stdin.pass_rest(|piece| {
                    line.pass(io, &mut upstream, piece);
                    Ok::<(), ()>(())
                });
                if upstream.pipe.is_none() {
                    tracing::warn!("an oversized client line was lost: no upstream to take it");
                }
                upstream.flush();
                let effects = line.finish(io, &upstream);
                if !effects.to_client.is_empty() {
                    let _ = io.client.send(&effects.to_client, true);
                }
            }
            Ok(Read::Eof) => return,
            Err(e) => {
                tracing::warn!("reading stdin failed: {e}");
                return;
            }
        }
    }
}

/// A client line too long to hold, on its way to the upstream through the client pump: only its
/// top level is followed, for the id and method of a request in it.
#[derive(Default)]
struct LongLine {
    scanner: IdScanner,
    registered: bool,
}

impl LongLine {
    /// Writes a piece of the line, registering the request in it first as soon as the pieces
    /// so far tell it is one: a server may answer from the head of a line, and its answer must
    /// find the request waiting.
    fn pass(&mut self, io: &Io, upstream: &mut Inlet, piece: &[u8]) {
        self.scanner.feed(piece);
        if !self.registered && upstream.pipe.is_some() {
            self.registered = io.inspector.client_long_request(&self.scanner);
        }
        upstream.write_through(piece);
    }

    /// What the client gets now: an answer to a request that never reached an upstream.
    fn finish(&self, io: &Io, upstream: &Inlet) -> Effects {
        if self.registered || upstream.pipe.is_some() {
            return Effects::default();
        }
        io.inspector.client_long_line_lost(&self.scanner)
    }
}

/// How an upstream pump ended.
#[derive(Debug)]
pub(super) enum PumpEnd {
    /// The upstream closed its stdout (it exited, usually).
    Eof,
    /// The client is gone: nothing can be delivered any more.
    ClientGone,
}

/// Upstream to client, on its own thread, one per upstream: every line through the inspector,
/// which forwards it as it came unless it is a failed tool call (rewritten, or retried) or
/// non-JSON noise. Once retired (the upstream is gone and a process it started still holds the
/// pipe), the pipe ends for it (`UpstreamOut`).
pub(super) fn upstream_pump(io: Arc<Io>, stdout: UpstreamOut, ended: oneshot::Sender<PumpEnd>) {
    let end = pump_upstream(&io, stdout);
    let _ = ended.send(end);
}

fn pump_upstream(io: &Arc<Io>, stdout: UpstreamOut) -> PumpEnd {
    let mut reader = LineReader::new(stdout);
    let mut batch = Flush::default();
    loop {
        let read = reader.read_line_or_let_go(io.stream_over, io.max_line, |head| {
            io.inspector.may_stream(head)
        });
        let effects = match read {
            Ok(Read::Line(mut line)) => {
                // A last line without its newline would run into whatever is written next.
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                io.inspector.upstream_line(line)
            }
            Ok(Read::Long(first)) => match stream_to_client(io, &mut reader, first) {
                Ok(effects) => effects,
                Err(end) => return end,
            },
            Ok(Read::Eof) => return PumpEnd::Eof,
            Err(e) => {
                tracing::warn!("reading the upstream's stdout failed: {e}");
                return PumpEnd::Eof;
            }
        };
        io.record_unmatched(&effects.unmatched);
        io.schedule(effects.retries, effects.deadline);
        let flush = batch.due(reader.has_line());
        if io.client.send(&effects.to_client, flush).is_err() {
            return PumpEnd::ClientGone;
        }
        io.send_upstream(effects.to_upstream);
    }
}

/// Streams an upstream line that is not held whole (too long, or let go early) to the client
/// as it comes, holding the client's end so nothing else cuts into it; only its top level is
/// followed, to settle the request it answers.
fn stream_to_client(
    io: &Arc<Io>,
    reader: &mut LineReader<UpstreamOut>,
    first: Vec<u8>,
) -> Result<Effects, PumpEnd> {
    let over_limit = first.len() >= io.max_line;
    let mut scanner = IdScanner::default();
    let mut mentions = Mentions::new(b"\"isError\"");
    scanner.feed(&first);
    mentions.feed(&first);
    // A banner or a dump that long is kept from the client like a short one.
    let not_a_message = io.inspector.keeps_off_client(&first);
    let mut out = io.client.lock();
    // An answer to a call that timed out since (its client has the TIMEOUT) goes nowhere.
    let deliver = !not_a_message && !io.inspector.drops_answer(&scanner);
    if deliver {
        out.write_all(&first).map_err(|_| PumpEnd::ClientGone)?;
    }
    let mut len = first.len() as u64;
    let mut pass = |bytes: &[u8]| {
        scanner.feed(bytes);
        mentions.feed(bytes);
        len += bytes.len() as u64;
        if !deliver {
            return Ok(());
        }
        out.write_all(bytes).map_err(|_| PumpEnd::ClientGone)
    };
    if !reader.pass_rest(&mut pass)? {
        // The upstream ended mid-line: end the line, so the next one is whole.
        let _ = pass(b"\n");
        let _ = out.flush();
        return Err(PumpEnd::Eof);
    }
    if out.flush().is_err() {
        return Err(PumpEnd::ClientGone);
    }
    if not_a_message {
        drop(out);
        io.inspector.kept_long_line(&first, len);
        return Ok(Effects::default());
    }
    let why = if over_limit {
        Streamed::OverLimit
    } else {
        Streamed::Early {
            may_be_failure: mentions.found(),
        }
    };
    // Settled before the client's end is let go: a deadline passed meanwhile finds the call
    // answered, instead of answering it a second time (`Io::expire_due`).
    let effects = io.inspector.streamed_line(&scanner, why);
    drop(out);
    Ok(effects)
}

impl Expiring for Io {
    fn deadlines(&self) -> Arc<Deadlines> {
        self.deadlines.clone()
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.inspector.next_deadline()
    }

    fn expire_due(self: &Arc<Self>) {
        Io::expire_due(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_none_read_after_it_goes_out_at_once() {
        let mut batch = Flush::default();
        assert!(batch.due(false));
        assert!(batch.oldest.is_none(), "a single line reads no clock");
    }

    #[test]
    fn lines_read_together_go_out_together_until_the_first_has_waited_long_enough() {
        let mut batch = Flush::default();
        assert!(!batch.due(true), "the next line is here: inspect it first");
        std::thread::sleep(FLUSH_WITHIN * 100);
        assert!(batch.due(true), "the first line has waited its time");
        assert!(!batch.due(true), "a new batch starts after a send");
        assert!(
            batch.due(false),
            "the last line read goes out with the rest"
        );
    }
}
