//! The restart decisions of a run, apart from processes and timers: once an upstream has
//! exited and what it left waiting is settled, whether to end or to start another, and after
//! how long. `relay::run` carries the decisions out.

use std::time::Duration;

use crate::config::RestartConfig;

/// What the supervisor knows of a run: what is left of `[restart]`, which upstream runs, and
/// how the client and the proxy stand.
#[derive(Debug)]
pub(super) struct Supervisor {
    /// Restarts left; 0 ends the run at the next exit.
    restarts_left: u32,
    /// The wait before the next restart, doubled for each one.
    backoff: Duration,
    /// The upstream running now: 1, then one more for each restart.
    generation: u64,
    /// The proxy was told to stop (SIGINT, SIGTERM, or the client stopped reading): what it
    /// still has to write is given a short wait, not as long as it takes.
    pub stopping: bool,
    /// The client closed its stdin.
    pub client_closed: bool,
    /// The last settle could not write to the client in time: nothing more is written to it.
    pub client_stuck: bool,
}

/// How an upstream's end looks once what it left waiting is settled.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Exit {
    /// The client left (closed stdin, or it was seen at its end).
    pub client_left: bool,
    /// Nobody reads our stdout any more.
    pub client_gone: bool,
    /// Requests still waiting for an answer (sent after the settle).
    pub waiting: usize,
    /// The requests of the exited upstream were settled in time.
    pub settled: bool,
}

/// What to do once an upstream has exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    /// End the run with this upstream's status.
    End,
    /// End: the requests of the exited upstream were not settled in time (the client's end is
    /// held), and a new upstream could be handed requests already answered.
    EndUnsettled,
    /// Start another upstream after `after`; `left` restarts remain after it.
    Restart { after: Duration, left: u32 },
}

/// What happened during a restart's backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Meanwhile {
    /// The backoff is over.
    Nothing,
    /// The proxy was told to stop.
    StopSignal,
    /// The client closed its stdin, leaving this many requests waiting.
    ClientClosed { waiting: usize },
}

impl Supervisor {
    pub fn new(restart: &RestartConfig) -> Supervisor {
        Supervisor {
            restarts_left: restart.attempts,
            backoff: Duration::from_millis(restart.backoff_ms),
            generation: 1,
            stopping: false,
            client_closed: false,
            client_stuck: false,
        }
    }

    /// The upstream running now.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// An upstream exited and its requests were settled (or not, `exit.settled`): end, or
    /// restart. A client that left needs a new server only for the requests it left waiting.
    pub fn exited(&mut self, exit: Exit) -> Decision {
        self.client_stuck = !exit.settled;
        let done = exit.client_left && exit.waiting == 0;
        if done || self.stopping || exit.client_gone || self.restarts_left == 0 {
            return Decision::End;
        }
        if !exit.settled {
            return Decision::EndUnsettled;
        }
        self.restarts_left -= 1;
        Decision::Restart {
            after: self.backoff,
            left: self.restarts_left,
        }
    }

    /// The backoff of a restart ended with `meanwhile`: whether to go on with the restart (then
    /// the next upstream is the current generation, and the next backoff twice as long).
    pub fn backoff_over(&mut self, meanwhile: Meanwhile) -> bool {
        match meanwhile {
            Meanwhile::StopSignal => {
                self.stopping = true;
                return false;
            }
            Meanwhile::ClientClosed { waiting } => {
                self.client_closed = true;
                if waiting == 0 {
                    return false;
                }
            }
            Meanwhile::Nothing => {}
        }
        self.backoff = self.backoff.saturating_mul(2);
        self.generation += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn supervisor(attempts: u32) -> Supervisor {
        Supervisor::new(&RestartConfig {
            attempts,
            backoff_ms: 100,
        })
    }

    fn settled() -> Exit {
        Exit {
            settled: true,
            ..Exit::default()
        }
    }

    #[test]
    fn without_restarts_the_first_exit_ends_the_run() {
        assert_eq!(supervisor(0).exited(settled()), Decision::End);
    }

    #[test]
    fn restarts_back_off_twice_as_long_each_time_until_none_are_left() {
        let mut s = supervisor(2);
        let ms = Duration::from_millis;
        assert_eq!(
            s.exited(settled()),
            Decision::Restart {
                after: ms(100),
                left: 1
            }
        );
        assert!(s.backoff_over(Meanwhile::Nothing));
        assert_eq!(s.generation(), 2);
        assert_eq!(
            s.exited(settled()),
            Decision::Restart {
                after: ms(200),
                left: 0
            }
        );
        assert!(s.backoff_over(Meanwhile::Nothing));
        assert_eq!(s.generation(), 3);
        assert_eq!(s.exited(settled()), Decision::End);
    }

    #[test]
    fn a_client_that_left_needs_a_new_server_only_for_requests_still_waiting() {
        let left = Exit {
            client_left: true,
            ..settled()
        };
        assert_eq!(supervisor(3).exited(left), Decision::End);
        let waiting = Exit { waiting: 2, ..left };
        assert!(matches!(
            supervisor(3).exited(waiting),
            Decision::Restart { left: 2, .. }
        ));
    }

    #[test]
    fn a_stop_or_a_client_gone_ends_the_run_whatever_restarts_are_left() {
        let mut s = supervisor(3);
        s.stopping = true;
        assert_eq!(s.exited(settled()), Decision::End);
        let gone = Exit {
            client_gone: true,
            ..settled()
        };
        assert_eq!(supervisor(3).exited(gone), Decision::End);
    }

    #[test]
    fn requests_not_settled_in_time_end_the_run_instead_of_a_restart() {
        let mut s = supervisor(3);
        assert_eq!(s.exited(Exit::default()), Decision::EndUnsettled);
        assert!(s.client_stuck);
        // Ending for another reason still says the client is stuck: nothing more is written.
        let mut s = supervisor(0);
        assert_eq!(s.exited(Exit::default()), Decision::End);
        assert!(s.client_stuck);
    }

    #[test]
    fn what_happens_during_the_backoff_can_call_the_restart_off() {
        let mut s = supervisor(3);
        s.exited(settled());
        assert!(!s.backoff_over(Meanwhile::StopSignal));
        assert!(s.stopping);
        assert_eq!(s.generation(), 1);

        let mut s = supervisor(3);
        s.exited(settled());
        assert!(!s.backoff_over(Meanwhile::ClientClosed { waiting: 0 }));
        assert!(s.client_closed);

        let mut s = supervisor(3);
        s.exited(settled());
        assert!(s.backoff_over(Meanwhile::ClientClosed { waiting: 1 }));
        assert!(s.client_closed);
        assert_eq!(s.generation(), 2);
    }
}
