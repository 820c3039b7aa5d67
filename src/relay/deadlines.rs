//! Time limits on calls (`[timeouts]`): one thread for the whole relay gives up on the calls
//! whose time is up.
//!
//! The deadlines themselves live with the calls in the session; this thread only sleeps until
//! the earliest one. A new call wakes it only when its deadline comes before the one it sleeps
//! towards, which, with one limit for every call, is only the first call after a quiet spell:
//! under load a call costs a comparison, not a timer (a timer per call used to cost a wake-up of
//! the runtime each, and held every answered call's timer until its limit was up).
//!
//! The watcher knows the relay only as [`Expiring`]: it imports nothing of the pumps.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::sync::{lock, wait, wait_timeout};

/// How soon the watcher looks again after it looked: deadlines that fall close together are
/// answered together, a millisecond late at worst.
const TICK: Duration = Duration::from_millis(1);

/// What the watcher watches: the calls' deadlines, and who answers the calls whose time is up.
pub(super) trait Expiring: Send + Sync + 'static {
    /// Where the watcher sleeps.
    fn deadlines(&self) -> Arc<Deadlines>;
    /// The earliest deadline of the calls still waiting.
    fn next_deadline(&self) -> Option<Instant>;
    /// Answers the calls whose time is up.
    fn expire_due(self: &Arc<Self>);
}

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
    /// before what it sleeps towards. Whether it did.
    pub fn arm(&self, at: Instant) -> bool {
        let mut planned = self.lock();
        let sooner = planned.is_none_or(|p| at < p);
        if sooner {
            *planned = Some(at);
            self.wake.notify_one();
        }
        sooner
    }
}

/// Starts the watcher, for a relay whose policy has time limits. It ends with the relay.
pub(super) fn start<T: Expiring>(relay: &Arc<T>) {
    let deadlines = relay.deadlines();
    let relay = Arc::downgrade(relay);
    let started = std::thread::Builder::new()
        .name("mcp-errnorm-deadlines".into())
        .spawn(move || watch(&deadlines, &relay));
    if let Err(e) = started {
        tracing::error!("cannot start the thread that enforces time limits: {e}");
    }
}

fn watch<T: Expiring>(deadlines: &Deadlines, relay: &Weak<T>) {
    loop {
        {
            // Under the lock: a call armed meanwhile either is in this look at the session or
            // is compared with its result (`arm` waits for the lock). The relay is held only for
            // the look: the watcher ends with it.
            let mut planned = deadlines.lock();
            let Some(next) = relay.upgrade().map(|relay| relay.next_deadline()) else {
                return;
            };
            *planned = next;
            match next {
                None => drop(wait(&deadlines.wake, planned)),
                Some(at) => {
                    let sleep = at.saturating_duration_since(Instant::now()).max(TICK);
                    drop(wait_timeout(&deadlines.wake, planned, sleep));
                }
            }
        }
        // Not under the lock: the pumps arm deadlines while this may wait for the client.
        let Some(relay) = relay.upgrade() else {
            return;
        };
        relay.expire_due();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sooner_deadline_wakes_the_watcher() {
        let deadlines = Deadlines::default();
        let now = Instant::now();
        let later = now + Duration::from_secs(10);
        // Asleep until told: any deadline is sooner.
        assert!(deadlines.arm(later));
        assert_eq!(*deadlines.lock(), Some(later));
        // A later (or equal) one changes nothing: under load a call costs a comparison.
        assert!(!deadlines.arm(later + Duration::from_secs(1)));
        assert!(!deadlines.arm(later));
        assert_eq!(*deadlines.lock(), Some(later));
        // A sooner one is what the watcher sleeps towards now.
        let sooner = now + Duration::from_secs(1);
        assert!(deadlines.arm(sooner));
        assert_eq!(*deadlines.lock(), Some(sooner));
    }
}
