//! The proxy's own log on stderr, written by a thread of its own, so that a log line never
//! holds up a pump. A client that pipes our stderr and reads it only when something goes wrong
//! would otherwise stop the protocol once that pipe is full: every time limit that passes and
//! every banner a server prints on stdout is a log line, written from the thread that relays.
//!
//! Lines wait in a bounded queue; past it they are dropped and counted, and the count is said
//! as soon as stderr takes lines again. The server's own stderr is not queued: it is copied on
//! a thread of its own, and holding it back slows the server as it would without the proxy.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::relay::PatientStderr;

/// The most log text waiting for stderr; a line longer than this still goes, alone.
const QUEUE_BYTES: usize = 1 << 20;

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Lines dropped since the count was last said.
    dropped: u64,
    /// The writer thread has lines in hand.
    writing: bool,
    started: bool,
}

#[derive(Default)]
struct Log {
    queue: Mutex<Queue>,
    changed: Condvar,
}

static LOG: LazyLock<Log> = LazyLock::new(Log::default);

fn lock() -> MutexGuard<'static, Queue> {
    LOG.queue.lock().unwrap_or_else(|p| p.into_inner())
}

/// One log line on its way to stderr: what is written to it is queued when it is dropped (the
/// log's formatter makes one per line).
#[derive(Default)]
pub struct LineWriter(Vec<u8>);

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            queue(std::mem::take(&mut self.0));
        }
    }
}

fn queue(line: Vec<u8>) {
    let mut queue = lock();
    if queue.bytes + line.len() > QUEUE_BYTES && !queue.lines.is_empty() {
        queue.dropped += 1;
        return;
    }
    if !queue.started {
        let spawned = std::thread::Builder::new()
            .name("mcp-errnorm-log".into())
            .spawn(write_lines);
        if spawned.is_err() {
            // No thread to write it: written here, as before there was one.
            drop(queue);
            let _ = PatientStderr.write_all(&line);
            return;
        }
        queue.started = true;
    }
    queue.bytes += line.len();
    queue.lines.push_back(line);
    LOG.changed.notify_all();
}

/// The writer thread: every line queued, in order, as long as writing to stderr takes.
fn write_lines() {
    loop {
        let (lines, dropped) = {
            let mut queue = lock();
            while queue.lines.is_empty() {
                queue = LOG.changed.wait(queue).unwrap_or_else(|p| p.into_inner());
            }
            queue.bytes = 0;
            queue.writing = true;
            (
                std::mem::take(&mut queue.lines),
                std::mem::take(&mut queue.dropped),
            )
        };
        let mut out = PatientStderr;
        if dropped > 0 {
            let _ = writeln!(
                out,
                "mcp-errnorm: {dropped} log lines were dropped while stderr was not read"
            );
        }
        for line in lines {
            let _ = out.write_all(&line);
        }
        lock().writing = false;
        LOG.changed.notify_all();
    }
}

/// Waits up to `limit` for the lines logged so far to reach stderr: at exit, where a stderr
/// nobody reads must not keep the proxy.
pub fn flush(limit: Duration) {
    let deadline = Instant::now() + limit;
    let mut queue = lock();
    while !queue.lines.is_empty() || queue.writing {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return;
        };
        queue = LOG
            .changed
            .wait_timeout(queue, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}
