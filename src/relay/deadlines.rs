//! Time limits on calls (`[timeouts]`): one thread for the whole relay gives up on the calls
//! whose time is up.
//!
//! The deadlines themselves live with the calls in the session; this thread only sleeps until
//! the earliest one. A new call wakes it only when its deadline comes before the one it sleeps
//! towards, which, with one limit for every call, is only the first call after a quiet spell:
//! under load a call costs a comparison, not a timer (a timer per call used to cost a wake-up of
//! the runtime each, and held every answered call's timer until its limit was up).

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::pumps::{lock, Io};

/// How soon the watcher looks again after it looked: deadlines that fall close together are
/// answered together, a millisecond late at worst.
const TICK: Duration = Duration::from_millis(1);

/// Where the watcher sleeps, and until when.
#[derive(Default)]
pub(super) struct Deadlines {
    /// The deadline the watcher sleeps towards; `None`: until it is told.
    planned: Mutex<Option<Instant>>,
    wake: Condvar,
}

impl Deadlines {
    fn lock(&self) -> MutexGuard<'_, Option<Instant>> {
        lock(&self.planned)
    }

    /// A call now waits until `at` (it is in the session already): wakes the watcher if that is
    /// before what it sleeps towards.
    pub fn arm(&self, at: Instant) {
        let mut planned = self.lock();
        if planned.is_none_or(|p| at < p) {
            *planned = Some(at);
            self.wake.notify_one();
        }
    }
}

/// Starts the watcher, for a relay whose policy has time limits. It ends with the relay.
pub(super) fn start(io: &Arc<Io>) {
    let deadlines = io.deadlines.clone();
    let io = Arc::downgrade(io);
    let started = std::thread::Builder::new()
        .name("mcp-errnorm-deadlines".into())
        .spawn(move || watch(&deadlines, &io));
    if let Err(e) = started {
        tracing::error!("cannot start the thread that enforces time limits: {e}");
    }
}

fn watch(deadlines: &Deadlines, io: &Weak<Io>) {
    loop {
        {
            // Under the lock: a call armed meanwhile either is in this look at the session or
            // is compared with its result (`arm` waits for the lock).
            let mut planned = deadlines.lock();
            let Some(next) = io.upgrade().map(|io| io.inspector.next_deadline()) else {
                return;
            };
            *planned = next;
            match next {
                None => drop(deadlines.wake.wait(planned)),
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now()).max(TICK);
                    drop(deadlines.wake.wait_timeout(planned, wait));
                }
            }
        }
        // Not under the lock: the pumps arm deadlines while this may wait for the client.
        let Some(io) = io.upgrade() else {
            return;
        };
        io.expire_due();
    }
}
