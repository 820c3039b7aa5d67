//! The upstream server process: spawning it (directly, never through a shell), signalling it,
//! and describing how it ended.

use std::collections::BTreeMap;
use std::io;
use std::process::{ExitStatus, Stdio};

use tokio::process::{Child, Command};

/// Starts the server with its stdin, stdout and stderr piped (its stderr is copied to ours, the
/// client's log, by `relay`).
pub fn spawn(command: &[String], env: &BTreeMap<String, String>) -> io::Result<Child> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    cmd.spawn()
}

/// Sends a signal to the server and to every process it started, if they are still there: a
/// server run through a wrapper (`sh -c`, `npx`, `uvx`) is the wrapper's child, and signalling
/// the wrapper alone would orphan it. (The server shares the proxy's process group, so that a
/// client that kills the group kills it too; its own tree is found in `/proc`.)
pub fn signal(child: &Child, signal: libc::c_int) {
    if let Some(pid) = child.id() {
        for pid in tree(pid) {
            // SAFETY: kill has no memory effects; a pid that already exited yields ESRCH,
            // ignored.
            unsafe {
                libc::kill(pid as libc::pid_t, signal);
            }
        }
    }
}

/// `root` and its descendants, from `/proc` (just `root` where there is none), deepest first:
/// a wrapper that is signalled after its child cannot start another in between.
fn tree(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`; the name may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    tree.reverse();
    tree
}

/// The proxy's exit code for the server's end: its own code, or 128 + the signal, as shells do.
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// How the server ended, in words for messages.
pub fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "exited".to_owned(),
    }
}
