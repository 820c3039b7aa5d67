//! The shutdown ladder of one upstream: close its stdin and wait (longer while the client's
//! requests still wait for answers), SIGTERM and wait, SIGKILL.

use std::time::Duration;

use tokio::time::Instant;

use super::Io;
use crate::config::Settings;

/// How often the ladder looks again while it waits on the client: whether the requests it waits
/// for are answered, and whether the client is still taking what the upstream wrote.
const POLL: Duration = Duration::from_millis(100);

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
        let taken_now = delivery.taken();
        if delivery.writing() && taken_now != taken {
            return Some(Ladder::closing(io, settings));
        }
        (Instant::now() < at).then_some(Ladder::Closing {
            at,
            taken: taken_now,
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
