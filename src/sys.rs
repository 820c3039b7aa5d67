//! The operating system, below the standard library: every `libc` call and every `unsafe`
//! block of the crate is here (the crate root denies `unsafe_code` everywhere else), each
//! wrapped in a safe function that says what it does and why it is sound.
//!
//! Part of the shell: nothing in the core calls it.

use std::io;
use std::os::fd::RawFd;
use std::path::Path;

/// A signal number, as `kill(2)` takes it.
pub type Signal = libc::c_int;

pub const SIGINT: Signal = libc::SIGINT;
pub const SIGTERM: Signal = libc::SIGTERM;
pub const SIGQUIT: Signal = libc::SIGQUIT;
pub const SIGKILL: Signal = libc::SIGKILL;

/// What [`poll`] waits for, and what it reports, on a descriptor (`poll(2)` events).
pub type Events = libc::c_short;

pub const POLLIN: Events = libc::POLLIN;
pub const POLLOUT: Events = libc::POLLOUT;
/// The other end is gone (a pipe's reader closed it), or the descriptor failed.
pub const POLLGONE: Events = libc::POLLERR | libc::POLLHUP;

/// Makes reads and writes on `fd`, a pipe of our own, return at once instead of waiting; a
/// failure leaves it blocking, as before.
pub fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Opens without waiting: a FIFO opened for reading does not wait for a writer, nor one opened
/// for writing for a reader (it fails instead).
pub fn open_nonblocking(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NONBLOCK)
}

/// Waits until one of `fds` is ready for `events`, or `timeout_ms` passed (-1: no limit, 0:
/// only look); what each is ready for. An error (EINTR) only means the caller looks again
/// sooner.
pub fn poll<const N: usize>(fds: [RawFd; N], events: Events, timeout_ms: i32) -> [Events; N] {
    let mut ready = fds.map(|fd| libc::pollfd {
        fd,
        events,
        revents: 0,
    });
    // SAFETY: `ready` holds N pollfds, valid for the call.
    unsafe { libc::poll(ready.as_mut_ptr(), N as libc::nfds_t, timeout_ms) };
    ready.map(|r| r.revents)
}

/// How much the pipe `fd` holds (Linux: `F_GETPIPE_SZ`); `None` where the system does not say.
pub fn pipe_capacity(fd: RawFd) -> Option<u64> {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a descriptor we own; a failure (not a pipe) returns -1.
    if let Ok(size) = u64::try_from(unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) }) {
        return Some(size);
    }
    let _ = fd;
    None
}

/// Whether this user may write in (or to) `path`, as `access(2)` with `W_OK` judges it.
pub fn may_write(path: &Path) -> io::Result<()> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a valid NUL-terminated path; access only looks.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Gives the allocator's free pages back after loading: checking every rule compiles it once,
/// and that transient memory would otherwise stay in the proxy's resident size for its life.
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Keeps the allocator to two arenas, unless `MALLOC_ARENA_MAX` says otherwise. glibc gives a
/// thread that meets contention an arena of its own, up to eight per core, and memory freed in
/// one arena is not reused by another, so a flood's peak depends on how the threads happened to
/// collide: the likeliest reason one run of the stalled-client flood peaked at 48 MB where it
/// measures 36-38 MB (debug build). The proxy's work is I/O; the bench shows no cost of two
/// arenas. Called before any thread starts.
pub fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator parameter; no thread allocates concurrently yet.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Restores SIGPIPE's default (end the process): the offline tools end as any Unix tool does
/// when their reader goes, where Rust's ignored SIGPIPE would make their next print panic.
/// Called before any thread starts.
pub fn default_sigpipe() {
    // SAFETY: setting a signal's disposition to its default, before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Has the child that `cmd` starts get SIGTERM when the thread that forked it ends (Linux
/// `PR_SET_PDEATHSIG`); nothing elsewhere.
pub fn terminate_with_parent(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent. The proxy runs a
    // current-thread runtime, so the thread that forks lives as long as the proxy, which is what
    // PDEATHSIG is tied to: if the proxy is killed outright, the server gets SIGTERM, not orphaned.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Makes this process the "subreaper" of its descendants (Linux `PR_SET_CHILD_SUBREAPER`): an
/// orphan goes to it instead of init. Does nothing elsewhere.
pub fn become_subreaper() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with an integer argument; it changes no memory.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `signal` to the process `pid`; one that already exited (ESRCH) is ignored.
pub fn kill(pid: u32, signal: Signal) {
    // SAFETY: kill has no memory effects.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// Reaps the child `pid` if it has exited, without waiting.
pub fn reap_if_exited(pid: u32) {
    // SAFETY: waitpid on a child of ours; WNOHANG never blocks, a null status is allowed.
    unsafe {
        libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG);
    }
}

/// Creates a FIFO at `path` (for tests of readers that must not wait on one).
pub fn mkfifo(path: &Path) -> io::Result<()> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
