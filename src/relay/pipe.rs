//! The upstream's stdin as the pumps write it: without blocking, so that a write waiting for
//! room can give up once its server has exited (a grandchild holding the pipe never reads it).

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The upstream's stdin, written without blocking: while the pipe is full, a write waits for
/// room a little at a time, and gives up once its upstream has exited.
pub(super) struct UpstreamPipe {
    file: File,
    generation: u64,
    exited: Arc<AtomicU64>,
}

/// How long a write waits for room before it looks whether its upstream has exited.
const ROOM_POLL: Duration = Duration::from_millis(100);

impl UpstreamPipe {
    pub(super) fn new(stdin: OwnedFd, generation: u64, exited: Arc<AtomicU64>) -> UpstreamPipe {
        let fd = stdin.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own; a failure leaves it blocking, as before.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
        UpstreamPipe {
            file: stdin.into(),
            generation,
            exited,
        }
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
                    let mut room = libc::pollfd {
                        fd: self.file.as_raw_fd(),
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: one pollfd, valid for the call.
                    unsafe { libc::poll(&mut room, 1, ROOM_POLL.as_millis() as libc::c_int) };
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
