//! The upstream's pipes as the pumps use them: without blocking, so that a pump waiting on an
//! upstream that has exited can be let go. A grandchild that inherited the pipes may hold them
//! open forever: it never reads the server's stdin, and its stdout never ends.

use std::fs::File;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sys;

/// The upstream's stdin, written without blocking: while the pipe is full, a write waits for
/// room a little at a time, and gives up once its upstream has exited.
pub(super) struct UpstreamPipe {
    file: File,
    generation: u64,
    exited: Arc<AtomicU64>,
}

/// How long a write waits for room before it looks whether its upstream has exited.
const ROOM_POLL: Duration = Duration::from_millis(100);

/// Whether whoever reads what we write to `fd` is gone (a pipe's reader closed it): nothing
/// written there will be read.
pub(super) fn reader_gone(fd: RawFd) -> bool {
    let [ready] = sys::poll([fd], 0, 0);
    ready & sys::POLLGONE != 0
}

impl UpstreamPipe {
    pub(super) fn new(stdin: OwnedFd, generation: u64, exited: Arc<AtomicU64>) -> UpstreamPipe {
        sys::set_nonblocking(stdin.as_raw_fd());
        UpstreamPipe {
            file: stdin.into(),
            generation,
            exited,
        }
    }

    /// Whether the upstream closed its stdin: what was written and not yet read is gone with
    /// it, though no write failed.
    pub(super) fn reader_gone(&self) -> bool {
        reader_gone(self.file.as_raw_fd())
    }
}

impl Write for UpstreamPipe {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        loop {
            match self.file.write(bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if self.exited.load(Ordering::SeqCst) >= self.generation {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::BrokenPipe,
                            "the upstream exited; its stdin is held but not read",
                        ));
                    }
                    let limit = ROOM_POLL.as_millis() as i32;
                    sys::poll([self.file.as_raw_fd()], sys::POLLOUT, limit);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                written => return written,
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a pipe holds, where the system does not say: Linux's default.
const PIPE_DEFAULT: u64 = 64 << 10;

/// How much the pipe `fd` holds (Linux: `F_GETPIPE_SZ`, 64 KiB unless a process asked for
/// more).
fn pipe_capacity(fd: RawFd) -> u64 {
    sys::pipe_capacity(fd).unwrap_or(PIPE_DEFAULT)
}

/// The upstream's stdout, read without blocking: while the pipe is empty, a read waits for the
/// upstream or for [`Retire::retire`]. Once retired, the pipe ends for the pump as its end
/// would, at the first read that would wait, or after as much more as the pipe holds: what
/// the upstream left in it is read whole, and what a process it started goes on writing is
/// nobody's.
pub(super) struct UpstreamOut {
    file: File,
    retire: Arc<Retire>,
    /// Readable once the pump is retired.
    woken: PipeReader,
}

/// [`Retire::read_at_retire`] of a pipe not retired.
const NOT_RETIRED: u64 = u64::MAX;

/// Lets the supervisor see whether the upstream pump waits on an empty pipe, and let it go.
pub(super) struct Retire {
    waiting: AtomicBool,
    /// Bytes read from the pipe so far.
    read: AtomicU64,
    /// Bytes read from the pipe when it was retired; [`NOT_RETIRED`] until then.
    read_at_retire: AtomicU64,
    /// How much the pipe holds: the most an upstream that exited can have left in it.
    pub(super) capacity: u64,
    wake: PipeWriter,
}

impl Retire {
    /// Bytes read from the pipe so far.
    pub(super) fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// The pump waits for the upstream to write (all it wrote so far is read).
    pub(super) fn waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst)
    }

    /// From now on, a read that would wait ends the pipe instead (one waiting now ends at
    /// once), and so does one past as much more as the pipe holds.
    pub(super) fn retire(&self) {
        self.read_at_retire.store(self.read(), Ordering::SeqCst);
        // Never read: the wake pipe stays readable, and a full one is readable too.
        let _ = (&self.wake).write(&[1]);
    }

    fn retired(&self) -> bool {
        self.read_at_retire.load(Ordering::SeqCst) != NOT_RETIRED
    }

    /// Retired, and as much more read since as the pipe holds: what comes now is not the
    /// upstream's.
    fn past_what_was_left(&self) -> bool {
        let at = self.read_at_retire.load(Ordering::SeqCst);
        at != NOT_RETIRED && self.read() - at > self.capacity
    }
}

impl UpstreamOut {
    pub(super) fn new(stdout: OwnedFd) -> std::io::Result<UpstreamOut> {
        let (woken, wake) = std::io::pipe()?;
        sys::set_nonblocking(stdout.as_raw_fd());
        sys::set_nonblocking(wake.as_raw_fd());
        let capacity = pipe_capacity(stdout.as_raw_fd());
        Ok(UpstreamOut {
            file: stdout.into(),
            retire: Arc::new(Retire {
                waiting: AtomicBool::new(false),
                read: AtomicU64::new(0),
                read_at_retire: AtomicU64::new(NOT_RETIRED),
                capacity,
                wake,
            }),
            woken,
        })
    }

    /// How the supervisor sees this pipe's pump.
    pub(super) fn retire(&self) -> Arc<Retire> {
        self.retire.clone()
    }

    /// Waits until the upstream wrote, or the pump is retired.
    fn wait(&self) {
        let fds = [self.file.as_raw_fd(), self.woken.as_raw_fd()];
        self.retire.waiting.store(true, Ordering::SeqCst);
        sys::poll(fds, sys::POLLIN, -1);
        self.retire.waiting.store(false, Ordering::SeqCst);
    }
}

impl Read for UpstreamOut {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.retire.past_what_was_left() {
            return Ok(0);
        }
        loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if self.retire.retired() {
                        return Ok(0);
                    }
                    self.wait();
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(n) => {
                    self.retire.read.fetch_add(n as u64, Ordering::Relaxed);
                    return Ok(n);
                }
                failed => return failed,
            }
        }
    }
}

/// Runs `io` on `fd` until it does not report that it would block, waiting for `events` in
/// between, as a blocking descriptor would.
fn patiently<T>(
    fd: RawFd,
    events: sys::Events,
    mut io: impl FnMut() -> std::io::Result<T>,
) -> std::io::Result<T> {
    loop {
        match io() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                sys::poll([fd], events, -1);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            done => return done,
        }
    }
}

/// Our own stdin or stdout, which the client may have handed us non-blocking (the flag belongs
/// to the pipe, shared with a parent that uses it so, as libuv and asyncio do): a read or write
/// that would wait, waits, as on a blocking pipe, instead of failing as if the client had gone.
pub(super) struct ClientPipe(File);

impl ClientPipe {
    pub(super) fn new(fd: OwnedFd) -> ClientPipe {
        ClientPipe(fd.into())
    }
}

impl Read for ClientPipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let fd = self.0.as_raw_fd();
        patiently(fd, sys::POLLIN, || self.0.read(buf))
    }
}

impl Write for ClientPipe {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let fd = self.0.as_raw_fd();
        patiently(fd, sys::POLLOUT, || self.0.write(bytes))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Our stdout: a [`ClientPipe`] that tells the shutdown ladder how the client takes what is
/// written to it ([`Delivery`]).
pub(super) struct ClientOut {
    pipe: ClientPipe,
    delivery: Arc<Delivery>,
}

impl ClientOut {
    pub(super) fn new(fd: OwnedFd, delivery: Arc<Delivery>) -> ClientOut {
        ClientOut {
            pipe: ClientPipe::new(fd),
            delivery,
        }
    }
}

/// The most one write to the client asks for: a blocking write returns only once all of it is
/// taken, so a slow client's progress shows at least this often.
const CLIENT_WRITE: usize = 64 << 10;

impl Write for ClientOut {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let bytes = &bytes[..bytes.len().min(CLIENT_WRITE)];
        self.delivery.writing.store(true, Ordering::Relaxed);
        let written = self.pipe.write(bytes);
        self.delivery.writing.store(false, Ordering::Relaxed);
        if let Ok(n) = written {
            self.delivery.taken.fetch_add(n as u64, Ordering::Relaxed);
        }
        written
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How the client takes what the proxy writes to it. An upstream that goes on writing after its
/// stdin closed, to a client that reads slowly, waits for the proxy, which waits for the client:
/// the shutdown ladder must not take that upstream for one that will not exit.
#[derive(Debug, Default)]
pub(super) struct Delivery {
    taken: AtomicU64,
    writing: AtomicBool,
}

impl Delivery {
    /// Bytes the client has taken so far.
    pub(super) fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// A write to the client is under way (waiting, when the client is slow).
    pub(super) fn writing(&self) -> bool {
        self.writing.load(Ordering::Relaxed)
    }
}

/// Our stderr, written as `ClientPipe` writes stdout: the log and the server's stderr lines
/// are not lost to a client that hands it over non-blocking.
pub struct PatientStderr;

impl Write for PatientStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let stderr = std::io::stderr();
        patiently(stderr.as_raw_fd(), sys::POLLOUT, || {
            stderr.lock().write(bytes)
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> (OwnedFd, OwnedFd) {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        (reader.into(), writer.into())
    }

    #[test]
    fn a_retired_pump_reads_what_was_left_then_the_pipe_ends() {
        let (reader, writer) = pipe();
        // The writer stays open, as a grandchild that holds the upstream's stdout would.
        let mut writer = File::from(writer);
        let mut out = UpstreamOut::new(reader).expect("set up");
        let retire = out.retire();
        writer.write_all(b"last words").unwrap();
        retire.retire();
        let mut buf = [0; 64];
        assert_eq!(out.read(&mut buf).unwrap(), 10);
        assert_eq!(&buf[..10], b"last words");
        assert_eq!(retire.read(), 10);
        // Nothing left: the read that would wait ends the pipe instead.
        assert_eq!(out.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn past_as_much_as_the_pipe_holds_after_retiring_nothing_more_is_the_upstreams() {
        let (_, wake) = std::io::pipe().expect("a pipe");
        let retire = Retire {
            waiting: AtomicBool::new(false),
            read: AtomicU64::new(100),
            read_at_retire: AtomicU64::new(NOT_RETIRED),
            capacity: 10,
            wake,
        };
        assert!(!retire.retired());
        retire.read.store(1_000, Ordering::SeqCst);
        assert!(
            !retire.past_what_was_left(),
            "not retired: all of it is read"
        );
        retire.retire();
        assert!(retire.retired());
        retire.read.store(1_010, Ordering::SeqCst);
        assert!(
            !retire.past_what_was_left(),
            "the pipe's worth is the upstream's"
        );
        retire.read.store(1_011, Ordering::SeqCst);
        assert!(retire.past_what_was_left());
    }

    #[test]
    fn a_write_to_a_full_pipe_gives_up_once_its_upstream_exited() {
        let (_reader, writer) = pipe();
        let exited = Arc::new(AtomicU64::new(0));
        let mut stdin = UpstreamPipe::new(writer, 2, exited.clone());
        // Generation 1 exited, not this one's: the pipe takes what it holds.
        exited.store(1, Ordering::SeqCst);
        assert!(stdin.write(&[b'x'; 1024]).is_ok());
        // Its own upstream exited: a write that would wait fails instead of waiting for ever.
        exited.store(2, Ordering::SeqCst);
        let e = stdin.write_all(&vec![b'x'; 1 << 20]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_reader_gone_is_seen_without_writing() {
        let (reader, writer) = pipe();
        assert!(!reader_gone(writer.as_raw_fd()));
        drop(reader);
        assert!(reader_gone(writer.as_raw_fd()));
    }

    #[test]
    fn the_client_is_seen_taking_what_is_written_to_it() {
        let (reader, writer) = pipe();
        let delivery = Arc::new(Delivery::default());
        let mut out = ClientOut::new(writer, delivery.clone());
        out.write_all(b"0123456789").unwrap();
        assert_eq!(delivery.taken(), 10);
        assert!(!delivery.writing());
        let mut got = [0; 10];
        File::from(reader).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"0123456789");
    }
}
