//! The shutdown ladder of one upstream: close its stdin and wait (longer while the client's
//! requests still wait for answers), SIGTERM and wait, SIGKILL.

use std::time::Duration;

use tokio::time::Instant;

use super::Io;
use crate::config::Settings;

/// How often the ladder looks whether the requests it waits for are answered.
const ANSWER_POLL: Duration = Duration::from_millis(100);

/// The shutdown ladder: close stdin and wait, SIGTERM and wait, SIGKILL.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ladder {
    Running,
    /// The client closed stdin while requests still waited (a pipeline that sent its last call):
    /// the upstream may answer them until then, as it could without the proxy; `Closing` comes
    /// once nothing waits.
    Answering(Instant),
    Closing(Instant),
    Terminating(Instant),
    Killed,
}

impl Ladder {
    /// Where the ladder starts when the client closed stdin.
    pub(super) fn closed(io: &Io, settings: &Settings) -> Ladder {
        if io.inspector.waiting() > 0 {
            Ladder::Answering(Instant::now() + settings.answer_wait)
        } else {
            Ladder::Closing(Instant::now() + settings.close_wait)
        }
    }

    fn rank(self) -> u8 {
        match self {
            Ladder::Running => 0,
            Ladder::Answering(_) => 1,
            Ladder::Closing(_) => 2,
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
            Ladder::Answering(_) | Ladder::Closing(_) | Ladder::Terminating(_)
        )
    }

    pub(super) fn deadline(self) -> Instant {
        match self {
            Ladder::Answering(until) => until.min(Instant::now() + ANSWER_POLL),
            Ladder::Closing(at) | Ladder::Terminating(at) => at,
            _ => Instant::now() + Duration::from_secs(86_400),
        }
    }
}
