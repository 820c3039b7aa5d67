//! The upstream server process: spawning it (directly, never through a shell), signalling it,
//! and describing how it ended.

use std::collections::BTreeMap;
use std::io;
use std::process::{ExitStatus, Stdio};

use tokio::process::{Child, Command};

use crate::sys;

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
    sys::terminate_with_parent(&mut cmd);
    cmd.spawn()
}

/// Makes the proxy the parent of every process the server leaves behind (Linux): a process
/// whose parent exits goes to its nearest "subreaper" ancestor instead of init, so a server
/// whose wrapper died, or a helper it daemonized with a double fork, stays within the proxy's
/// reach (found through [`descendants`], ended by [`signal_leftovers`], reaped by
/// [`reap_adopted`]).
/// Not a new process group: the server shares the proxy's, so that a client that kills the
/// group kills it too, and the group may hold the client itself, which must not be signalled.
pub fn adopt_orphans() {
    if let Err(e) = sys::become_subreaper() {
        tracing::warn!(
            "cannot adopt the processes the server leaves behind ({}): one that outlives its \
             parent may outlive the proxy",
            e
        );
    }
}

/// Sends a signal to the server and to every other process the proxy started that still runs:
/// those the server started (a server run through a wrapper, `sh -c`, `npx`, `uvx`, is the
/// wrapper's child, and signalling the wrapper alone would orphan it), and those adopted
/// ([`adopt_orphans`]) after their parent exited. The server itself even where there is no
/// `/proc` to find the others in.
pub fn signal(server: &Child, signal: sys::Signal) {
    let mut pids = descendants();
    if let Some(pid) = server.id().filter(|pid| !pids.contains(pid)) {
        pids.push(pid);
    }
    kill_all(&pids, signal);
}

/// Sends a signal to every process the proxy started that still runs, once the server has
/// exited ([`signal`] while it runs).
pub fn signal_leftovers(signal: sys::Signal) {
    kill_all(&descendants(), signal);
}

/// Deepest first, as [`descendants`] lists them: a wrapper signalled after its child cannot
/// start another in between.
fn kill_all(pids: &[u32], signal: sys::Signal) {
    for &pid in pids {
        sys::kill(pid, signal);
    }
}

/// The processes the proxy started that still run (zombies left out), from `/proc`, deepest
/// first; none where there is no `/proc`.
pub fn descendants() -> Vec<u32> {
    let processes = processes();
    let mut tree = vec![std::process::id()];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            processes
                .iter()
                .filter(|p| p.ppid == parent && !p.zombie)
                .map(|p| p.pid),
        );
        i += 1;
    }
    tree.remove(0);
    tree.reverse();
    tree
}

/// Reaps the processes adopted by the proxy that have exited (zombies whose parent it is),
/// except `server`, the upstream tokio waits for: its status is the proxy's.
pub fn reap_adopted(server: Option<u32>) {
    let me = std::process::id();
    for p in processes() {
        if p.ppid == me && p.zombie && Some(p.pid) != server {
            sys::reap_if_exited(p.pid);
        }
    }
}

/// A process as `/proc/PID/stat` shows it.
struct Process {
    pid: u32,
    ppid: u32,
    /// Exited, and not reaped yet.
    zombie: bool,
}

fn processes() -> Vec<Process> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`; the name may hold spaces and parentheses.
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let zombie = fields.next()? == "Z";
            let ppid = fields.next()?.parse().ok()?;
            Some(Process { pid, ppid, zombie })
        })
        .collect()
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
