//! The shutdown ladder of one upstream: close its stdin and wait (longer while the client's
//! requests still wait for answers), SIGTERM and wait, SIGKILL.

use std::time::Duration;

use tokio::time::Instant;

use super::Io;
use crate::config::Settings;

/// How often the ladder looks again while it waits on the client: whether the requests it waits
/// for are answered, and whether the client is still taking what the upstream wrote.
const POLL: Duration = Duration::from_millis(100);

/// How the client stands when the ladder looks: what it has taken of what the proxy wrote, and
/// whether a write to it is under way.
#[derive(Debug, Clone, Copy)]
struct Client {
    taken: u64,
    writing: bool,
}

/// The shutdown ladder: close stdin and wait, SIGTERM and wait, SIGKILL.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ladder {
    Running,
    /// The client closed stdin while requests still waited (a pipeline that sent its last call):
    /// the upstream may answer them until then, as it could without the proxy; `Closing` comes
    /// once nothing waits.
    Answering(Instant),
    /// Waiting for the upstream to exit by itself, until `at`; `taken` is what the client had
    /// taken when the ladder last looked ([`Ladder::closing_on`]).
    Closing {
        at: Instant,
        taken: u64,
    },
    Terminating(Instant),
    Killed,
}

impl Ladder {
    /// Where the ladder starts when the client closed stdin.
    pub(super) fn closed(io: &Io, settings: &Settings) -> Ladder {
        if io.inspector.waiting() > 0 {
            Ladder::Answering(Instant::now() + settings.answer_wait)
        } else {
            Ladder::closing(io, settings)
        }
    }

    /// The upstream's stdin is closed: it has `close_wait` to exit by itself.
    pub(super) fn closing(io: &Io, settings: &Settings) -> Ladder {
        Ladder::Closing {
            at: Instant::now() + settings.close_wait,
            taken: io.client.delivery.taken(),
        }
    }

    /// A `Closing` ladder looking again: its `close_wait` starts over while the upstream is held
    /// up by a client that reads slowly (a write to the client waits, and the client took bytes
    /// since the last look), as run directly it would have all the time the client takes. A
    /// client that takes nothing holds nothing up. `None` once the time is up.
    pub(super) fn closing_on(
        at: Instant,
        taken: u64,
        io: &Io,
        settings: &Settings,
    ) -> Option<Ladder> {
        let delivery = &io.client.delivery;
        let client = Client {
            taken: delivery.taken(),
            writing: delivery.writing(),
        };
        Ladder::look_again(at, taken, client, Instant::now(), settings.close_wait)
    }

    /// [`Ladder::closing_on`] at `now`, the client seen as `client`.
    fn look_again(
        at: Instant,
        taken: u64,
        client: Client,
        now: Instant,
        close_wait: Duration,
    ) -> Option<Ladder> {
        if client.writing && client.taken != taken {
            return Some(Ladder::Closing {
                at: now + close_wait,
                taken: client.taken,
            });
        }
        (now < at).then_some(Ladder::Closing {
            at,
            taken: client.taken,
        })
    }

    fn rank(self) -> u8 {
        match self {
            Ladder::Running => 0,
            Ladder::Answering(_) => 1,
            Ladder::Closing { .. } => 2,
            Ladder::Terminating(_) => 3,
            Ladder::Killed => 4,
        }
    }

    /// Moves forward, never back: a second signal does not restart a wait.
    pub(super) fn at_least(self, other: Ladder) -> Ladder {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }

    pub(super) fn deadline_set(self) -> bool {
        matches!(
            self,
            Ladder::Answering(_) | Ladder::Closing { .. } | Ladder::Terminating(_)
        )
    }

    pub(super) fn deadline(self) -> Instant {
        match self {
            Ladder::Answering(at) | Ladder::Closing { at, .. } => at.min(Instant::now() + POLL),
            Ladder::Terminating(at) => at,
            _ => Instant::now() + Duration::from_secs(86_400),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOSE_WAIT: Duration = Duration::from_secs(2);

    #[test]
    fn the_ladder_moves_forward_never_back() {
        let now = Instant::now();
        let closing = Ladder::Closing { at: now, taken: 0 };
        let terminating = Ladder::Terminating(now);
        assert!(matches!(
            Ladder::Running.at_least(closing),
            Ladder::Closing { .. }
        ));
        assert!(matches!(
            closing.at_least(terminating),
            Ladder::Terminating(_)
        ));
        // A second signal does not restart a wait, nor does a client closing late.
        assert!(matches!(
            terminating.at_least(closing),
            Ladder::Terminating(_)
        ));
        assert!(matches!(
            Ladder::Killed.at_least(Ladder::Terminating(now)),
            Ladder::Killed
        ));
        let later = Ladder::Terminating(now + CLOSE_WAIT);
        match terminating.at_least(later) {
            Ladder::Terminating(at) => assert_eq!(at, now),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_the_waiting_steps_have_a_deadline() {
        let now = Instant::now();
        assert!(!Ladder::Running.deadline_set());
        assert!(!Ladder::Killed.deadline_set());
        assert!(Ladder::Answering(now).deadline_set());
        assert!(Ladder::Terminating(now).deadline_set());
        // SIGKILL comes at the end of the wait; waits on the client are looked at every POLL.
        let far = now + Duration::from_secs(60);
        assert_eq!(Ladder::Terminating(far).deadline(), far);
        assert!(Ladder::Closing { at: far, taken: 0 }.deadline() <= Instant::now() + POLL);
        assert!(Ladder::Answering(now).deadline() <= now);
    }

    #[test]
    fn a_client_taking_what_the_upstream_wrote_holds_the_close_wait_open() {
        let now = Instant::now();
        let at = now + Duration::from_millis(10);
        let slow = Client {
            taken: 5,
            writing: true,
        };
        // It took bytes since the last look while a write waits: the wait starts over.
        match Ladder::look_again(at, 1, slow, now + CLOSE_WAIT, CLOSE_WAIT) {
            Some(Ladder::Closing { at, taken }) => {
                assert_eq!(at, now + CLOSE_WAIT + CLOSE_WAIT);
                assert_eq!(taken, 5);
            }
            other => panic!("{other:?}"),
        }
        // It took nothing: it holds nothing up, and once the time is up, SIGTERM comes.
        assert!(Ladder::look_again(at, 5, slow, now + CLOSE_WAIT, CLOSE_WAIT).is_none());
        // Not writing: bytes taken earlier do not count either.
        let idle = Client {
            taken: 9,
            writing: false,
        };
        assert!(Ladder::look_again(at, 5, idle, now + CLOSE_WAIT, CLOSE_WAIT).is_none());
        // Before the time is up, the wait goes on, remembering what was taken.
        match Ladder::look_again(at, 5, idle, now, CLOSE_WAIT) {
            Some(Ladder::Closing { at: same, taken }) => {
                assert_eq!(same, at);
                assert_eq!(taken, 9);
            }
            other => panic!("{other:?}"),
        }
    }
}
