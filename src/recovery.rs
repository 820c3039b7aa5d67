//! Recovery policy: which failed calls the proxy retries itself and after how long, which calls
//! time out, and the per-tool circuit breaker. Pure: time and randomness come in as values, so
//! every decision is testable without clocks or processes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::render::StructuredError;
use crate::session::ToolInfo;
use crate::taxonomy::Category;
use crate::taxonomy::MAX_RETRY_AFTER_SECONDS;

/// `[retry]` in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Extra attempts after a failed call; 0 turns local retries off.
    pub attempts: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
    /// A retry-after longer than this is handed to the agent instead of slept on.
    pub max_retry_after_seconds: u64,
    /// Tools safe to repeat besides those annotated `readOnlyHint` or `idempotentHint`.
    pub tools: Vec<String>,
    /// Tools annotated `destructiveHint: true` that may be retried all the same.
    pub destructive_tools: Vec<String>,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            attempts: 2,
            base_delay_ms: 250,
            max_delay_ms: 4000,
            max_retry_after_seconds: 10,
            tools: Vec::new(),
            destructive_tools: Vec::new(),
        }
    }
}

/// `[timeouts]` in the config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutConfig {
    /// Seconds a call may take; 0 means no limit.
    pub default_seconds: f64,
    /// Limits for some tools, first match wins.
    pub tool: Vec<ToolTimeout>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolTimeout {
    pub tools: Vec<String>,
    pub seconds: f64,
}

/// `[breaker]` in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Consecutive transient failures of a tool that open its breaker; 0 turns it off.
    pub failures: u32,
    pub cooldown_seconds: f64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            failures: 0,
            cooldown_seconds: 30.0,
        }
    }
}

/// A recovery setting the proxy cannot use, and the key it is at (`retry.tools`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct PolicyError {
    pub key: &'static str,
    pub message: String,
}

/// The tool globs at `key`.
fn globs(key: &'static str, patterns: &[String]) -> Result<GlobSet, PolicyError> {
    let at = |message| PolicyError { key, message };
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        builder.add(Glob::new(p).map_err(|e| at(format!("invalid tool glob '{p}': {e}")))?);
    }
    builder.build().map_err(|e| at(e.to_string()))
}

/// The compiled recovery settings.
#[derive(Debug, Clone)]
pub struct Policy {
    retry: RetryConfig,
    retry_tools: GlobSet,
    destructive_ok: GlobSet,
    default_timeout: Option<Duration>,
    timeouts: Vec<(GlobSet, Option<Duration>)>,
    breaker: BreakerConfig,
}

/// The longest time limit or cool-down: a year. Longer ones would overflow the clock arithmetic
/// (and mean "never", which 0 says for a time limit).
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// The seconds at `key`: `None` for 0, no limit.
fn seconds(key: &'static str, s: f64) -> Result<Option<Duration>, PolicyError> {
    let at = |message| PolicyError { key, message };
    if !s.is_finite() || s < 0.0 {
        return Err(at(format!("{s} is not a number of seconds")));
    }
    if s > MAX_SECONDS {
        return Err(at(format!(
            "{s} seconds is more than a year, the longest allowed (0 means no time limit)"
        )));
    }
    Ok((s > 0.0).then(|| Duration::from_secs_f64(s)))
}

impl Policy {
    /// The policy of these sections; an error names the key it is about (`retry.tools`).
    pub fn new(
        retry: RetryConfig,
        timeouts: TimeoutConfig,
        breaker: BreakerConfig,
    ) -> Result<Policy, PolicyError> {
        let at = |key: &'static str| move |message: String| PolicyError { key, message };
        // Bounded so that a delay in milliseconds never overflows, and a retry the proxy sleeps
        // on never outlasts any client's patience by years.
        if retry.max_retry_after_seconds > MAX_RETRY_AFTER_SECONDS {
            return Err(at("retry.max_retry_after_seconds")(format!(
                "{} is more than {MAX_RETRY_AFTER_SECONDS} seconds (a day), the longest allowed",
                retry.max_retry_after_seconds
            )));
        }
        if retry.max_delay_ms > MAX_RETRY_AFTER_SECONDS * 1000 {
            return Err(at("retry.max_delay_ms")(format!(
                "{} is more than {} ms (a day), the longest allowed",
                retry.max_delay_ms,
                MAX_RETRY_AFTER_SECONDS * 1000
            )));
        }
        if retry.base_delay_ms > retry.max_delay_ms {
            return Err(at("retry.base_delay_ms")(
                "must not exceed retry.max_delay_ms".into(),
            ));
        }
        seconds("breaker.cooldown_seconds", breaker.cooldown_seconds)?;
        Ok(Policy {
            retry_tools: globs("retry.tools", &retry.tools)?,
            destructive_ok: globs("retry.destructive_tools", &retry.destructive_tools)?,
            default_timeout: seconds("timeouts.default_seconds", timeouts.default_seconds)?,
            timeouts: timeouts
                .tool
                .iter()
                .map(|t| {
                    Ok((
                        globs("timeouts.tool.tools", &t.tools)?,
                        seconds("timeouts.tool.seconds", t.seconds)?,
                    ))
                })
                .collect::<Result<_, _>>()?,
            retry,
            breaker,
        })
    }

    /// Whether a tool may be called again after a failure: annotated read-only or idempotent,
    /// or named in `retry.tools`; never one annotated destructive unless `destructive_tools`
    /// names it, even if it also claims to be read-only (annotations that contradict each
    /// other are read the safer way). An unknown tool is not retried.
    pub fn safe_to_repeat(&self, tool: &str, info: Option<&ToolInfo>) -> bool {
        let destructive = info.is_some_and(|i| i.destructive == Some(true));
        if destructive && !self.destructive_ok.is_match(tool) {
            return false;
        }
        self.retry_tools.is_match(tool)
            || info.is_some_and(|i| i.read_only == Some(true) || i.idempotent == Some(true))
    }

    /// How long to wait before attempt `attempt + 1` of a call that failed with `error`, or
    /// `None` when the failure goes to the agent. `jitter` is uniform in [0, 1).
    pub fn retry_delay(
        &self,
        tool: &str,
        info: Option<&ToolInfo>,
        error: &StructuredError,
        attempt: u32,
        jitter: f64,
    ) -> Option<Duration> {
        if attempt > self.retry.attempts
            || error.category != Category::Transient
            || !error.retryable
            || !self.safe_to_repeat(tool, info)
        {
            return None;
        }
        if error
            .retry_after_seconds
            .is_some_and(|s| s > self.retry.max_retry_after_seconds)
        {
            return None;
        }
        // Full jitter over an exponential ceiling: retries of many clients spread out.
        let ceiling = self
            .retry
            .base_delay_ms
            .saturating_mul(1u64 << (attempt - 1).min(20))
            .min(self.retry.max_delay_ms);
        let backoff = Duration::from_millis((ceiling as f64 * jitter.clamp(0.0, 1.0)) as u64);
        // At most `max_retry_after_seconds`, checked above.
        let announced = Duration::from_secs(error.retry_after_seconds.unwrap_or(0));
        Some(backoff.max(announced))
    }

    /// Whether any call has a time limit.
    pub fn has_timeouts(&self) -> bool {
        self.default_timeout.is_some() || self.timeouts.iter().any(|(_, t)| t.is_some())
    }

    /// The time limit of a call to this tool, if any.
    pub fn timeout(&self, tool: &str) -> Option<Duration> {
        self.timeouts
            .iter()
            .find(|(g, _)| g.is_match(tool))
            .map_or(self.default_timeout, |(_, t)| *t)
    }

    fn cooldown(&self) -> Duration {
        Duration::from_secs_f64(self.breaker.cooldown_seconds)
    }

    pub fn breaker_enabled(&self) -> bool {
        self.breaker.failures > 0
    }
}

impl Policy {
    /// The defaults with local retries off: every failure is answered at once. For the tools
    /// that check what passes and what is rewritten (the property tests, the fuzzer).
    pub fn without_retries() -> Policy {
        let retry = RetryConfig {
            attempts: 0,
            ..RetryConfig::default()
        };
        Policy::new(retry, TimeoutConfig::default(), BreakerConfig::default())
            .expect("the defaults are valid")
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new(
            RetryConfig::default(),
            TimeoutConfig::default(),
            BreakerConfig::default(),
        )
        .expect("the defaults are valid")
    }
}

/// One tool's breaker.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BreakerState {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// The cool-down passed and one trial call is out (since then); others still fail fast.
    /// A trial whose outcome never comes (cancelled, hung) is replaced after another cool-down.
    Trial {
        since: Instant,
    },
}

/// Per-tool circuit breakers: after `failures` consecutive transient failures a tool fails fast
/// for the cool-down; then one trial call decides whether it closes again.
#[derive(Debug, Default)]
pub struct Breakers {
    tools: HashMap<String, BreakerState>,
}

impl Breakers {
    /// Whether a call may go to the upstream now; `Err` holds the time left to wait.
    pub fn admit(&mut self, policy: &Policy, tool: &str, now: Instant) -> Result<(), Duration> {
        if !policy.breaker_enabled() {
            return Ok(());
        }
        let state = self
            .tools
            .entry(tool.to_owned())
            .or_insert(BreakerState::Closed { failures: 0 });
        match *state {
            BreakerState::Closed { .. } => Ok(()),
            BreakerState::Open { until } if now >= until => {
                *state = BreakerState::Trial { since: now };
                Ok(())
            }
            BreakerState::Open { until } => Err(until - now),
            BreakerState::Trial { since } if now >= since + policy.cooldown() => {
                *state = BreakerState::Trial { since: now };
                Ok(())
            }
            // While the trial call is out, the others wait the shortest sensible time.
            BreakerState::Trial { .. } => Err(Duration::from_secs(1)),
        }
    }

    /// The outcome of a call that reached the upstream.
    pub fn record(&mut self, policy: &Policy, tool: &str, transient_failure: bool, now: Instant) {
        if !policy.breaker_enabled() {
            return;
        }
        let state = self
            .tools
            .entry(tool.to_owned())
            .or_insert(BreakerState::Closed { failures: 0 });
        *state = match (*state, transient_failure) {
            (_, false) => BreakerState::Closed { failures: 0 },
            (BreakerState::Closed { failures }, true) if failures + 1 < policy.breaker.failures => {
                BreakerState::Closed {
                    failures: failures + 1,
                }
            }
            (BreakerState::Open { until }, true) => BreakerState::Open { until },
            _ => {
                tracing::warn!(
                    tool,
                    "circuit breaker open: calls fail fast for the cool-down"
                );
                BreakerState::Open {
                    until: now + policy.cooldown(),
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::OriginalError;
    use crate::taxonomy::Source;

    fn error(category: Category, retryable: bool, retry_after: Option<u64>) -> StructuredError {
        StructuredError {
            category,
            code: "X".into(),
            retryable,
            retry_after_seconds: retry_after,
            message: String::new(),
            user_message: None,
            alternatives: vec![],
            attempted_query: None,
            partial_results: None,
            original_error: OriginalError {
                source: Source::Result,
                text: String::new(),
                rpc_code: None,
                rpc_data: None,
            },
            rule_id: None,
            attempts: 1,
        }
    }

    fn info(
        read_only: Option<bool>,
        idempotent: Option<bool>,
        destructive: Option<bool>,
    ) -> ToolInfo {
        ToolInfo {
            has_output_schema: false,
            read_only,
            idempotent,
            destructive,
        }
    }

    #[test]
    fn only_safe_tools_are_repeated() {
        let p = Policy::default();
        assert!(p.safe_to_repeat("t", Some(&info(Some(true), None, None))));
        assert!(p.safe_to_repeat("t", Some(&info(None, Some(true), None))));
        assert!(
            !p.safe_to_repeat("t", Some(&info(None, Some(true), Some(true)))),
            "destructive"
        );
        assert!(!p.safe_to_repeat("t", Some(&info(None, None, None))));
        assert!(
            !p.safe_to_repeat("t", None),
            "unknown tools are not retried"
        );
        let p = Policy::new(
            RetryConfig {
                tools: vec!["get_*".into()],
                destructive_tools: vec!["purge".into()],
                ..RetryConfig::default()
            },
            TimeoutConfig::default(),
            BreakerConfig::default(),
        )
        .unwrap();
        assert!(p.safe_to_repeat("get_x", None));
        assert!(!p.safe_to_repeat("get_x", Some(&info(None, None, Some(true)))));
        assert!(p.safe_to_repeat("purge", Some(&info(None, Some(true), Some(true)))));
    }

    #[test]
    fn destructive_wins_over_read_only() {
        let both = info(Some(true), None, Some(true));
        assert!(!Policy::default().safe_to_repeat("t", Some(&both)));
        let p = Policy::new(
            RetryConfig {
                destructive_tools: vec!["t".into()],
                ..RetryConfig::default()
            },
            TimeoutConfig::default(),
            BreakerConfig::default(),
        )
        .unwrap();
        assert!(
            p.safe_to_repeat("t", Some(&both)),
            "named in destructive_tools"
        );
    }

    #[test]
    fn retries_are_bounded_and_only_for_transient_failures() {
        let p = Policy::default();
        let ro = info(Some(true), None, None);
        let transient = error(Category::Transient, true, None);
        assert!(p.retry_delay("t", Some(&ro), &transient, 1, 0.5).is_some());
        assert!(p.retry_delay("t", Some(&ro), &transient, 2, 0.5).is_some());
        assert!(
            p.retry_delay("t", Some(&ro), &transient, 3, 0.5).is_none(),
            "at most 2 retries"
        );
        for category in [
            Category::Validation,
            Category::Permission,
            Category::Business,
            Category::Unknown,
        ] {
            assert!(p
                .retry_delay("t", Some(&ro), &error(category, false, None), 1, 0.5)
                .is_none());
        }
        assert!(p
            .retry_delay(
                "t",
                Some(&ro),
                &error(Category::Transient, false, None),
                1,
                0.5
            )
            .is_none());
    }

    #[test]
    fn backoff_is_exponential_with_full_jitter_and_honours_retry_after() {
        let p = Policy::default();
        let ro = info(Some(true), None, None);
        let e = error(Category::Transient, true, None);
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 1, 0.0),
            Some(Duration::ZERO)
        );
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 1, 0.999_9),
            Some(Duration::from_millis(249))
        );
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 2, 0.5),
            Some(Duration::from_millis(250))
        );
        let e = error(Category::Transient, true, Some(3));
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 1, 0.5),
            Some(Duration::from_secs(3))
        );
        let e = error(Category::Transient, true, Some(60));
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 1, 0.5),
            None,
            "too long: the agent decides"
        );
    }

    #[test]
    fn retry_waits_longer_than_a_day_are_refused() {
        let policy = |retry| Policy::new(retry, TimeoutConfig::default(), BreakerConfig::default());
        let refused = policy(RetryConfig {
            max_retry_after_seconds: 18_446_744_073_709_552,
            ..RetryConfig::default()
        });
        assert!(refused.is_err_and(|PolicyError { key, message: e }| key
            == "retry.max_retry_after_seconds"
            && e.contains("more than 86400 seconds (a day)")));
        let refused = policy(RetryConfig {
            max_delay_ms: u64::MAX,
            ..RetryConfig::default()
        });
        assert!(refused.is_err_and(|PolicyError { key, .. }| key == "retry.max_delay_ms"));
        // At the bounds, the longest delay is a day.
        let p = policy(RetryConfig {
            max_retry_after_seconds: MAX_RETRY_AFTER_SECONDS,
            max_delay_ms: MAX_RETRY_AFTER_SECONDS * 1000,
            base_delay_ms: MAX_RETRY_AFTER_SECONDS * 1000,
            ..RetryConfig::default()
        })
        .unwrap();
        let ro = info(Some(true), None, None);
        let e = error(Category::Transient, true, Some(MAX_RETRY_AFTER_SECONDS));
        assert_eq!(
            p.retry_delay("t", Some(&ro), &e, 2, 0.999),
            Some(Duration::from_secs(MAX_RETRY_AFTER_SECONDS))
        );
        // A failure that announces two days is not retried after one: it goes to the agent.
        let two_days = crate::classify::retry_after_hint("Retry-After: 172800");
        let e = error(Category::Transient, true, two_days);
        assert_eq!(p.retry_delay("t", Some(&ro), &e, 1, 0.5), None);
    }

    #[test]
    fn times_longer_than_a_year_are_refused() {
        let timeouts = |s| TimeoutConfig {
            default_seconds: s,
            ..TimeoutConfig::default()
        };
        let policy = |t| Policy::new(RetryConfig::default(), t, BreakerConfig::default());
        assert!(
            policy(timeouts(1e19)).is_err_and(|PolicyError { key, message: e }| {
                key == "timeouts.default_seconds" && e.contains("more than a year")
            })
        );
        assert!(policy(timeouts(MAX_SECONDS)).is_ok());
        let breaker = BreakerConfig {
            failures: 1,
            cooldown_seconds: 1e300,
        };
        assert!(Policy::new(RetryConfig::default(), TimeoutConfig::default(), breaker).is_err());
    }

    #[test]
    fn timeouts_by_tool_glob() {
        let p = Policy::new(
            RetryConfig::default(),
            TimeoutConfig {
                default_seconds: 30.0,
                tool: vec![
                    ToolTimeout {
                        tools: vec!["slow_*".into()],
                        seconds: 300.0,
                    },
                    ToolTimeout {
                        tools: vec!["stream".into()],
                        seconds: 0.0,
                    },
                ],
            },
            BreakerConfig::default(),
        )
        .unwrap();
        assert_eq!(p.timeout("slow_report"), Some(Duration::from_secs(300)));
        assert_eq!(p.timeout("stream"), None);
        assert_eq!(p.timeout("other"), Some(Duration::from_secs(30)));
        assert_eq!(Policy::default().timeout("x"), None, "off by default");
    }

    #[test]
    fn breaker_opens_fails_fast_then_closes_after_a_good_trial() {
        let p = Policy::new(
            RetryConfig::default(),
            TimeoutConfig::default(),
            BreakerConfig {
                failures: 2,
                cooldown_seconds: 10.0,
            },
        )
        .unwrap();
        let mut b = Breakers::default();
        let t0 = Instant::now();
        assert!(b.admit(&p, "t", t0).is_ok());
        b.record(&p, "t", true, t0);
        assert!(b.admit(&p, "t", t0).is_ok(), "one failure is not enough");
        b.record(&p, "t", true, t0);
        assert_eq!(
            b.admit(&p, "t", t0 + Duration::from_secs(4)),
            Err(Duration::from_secs(6))
        );
        assert!(b.admit(&p, "other", t0).is_ok(), "per tool");
        let later = t0 + Duration::from_secs(11);
        assert!(b.admit(&p, "t", later).is_ok(), "the trial call");
        assert!(b.admit(&p, "t", later).is_err(), "only one trial at a time");
        b.record(&p, "t", true, later);
        assert!(
            b.admit(&p, "t", later).is_err(),
            "a failed trial opens it again"
        );
        let much_later = later + Duration::from_secs(11);
        assert!(b.admit(&p, "t", much_later).is_ok());
        b.record(&p, "t", false, much_later);
        assert!(b.admit(&p, "t", much_later).is_ok());
        assert!(b.admit(&p, "t", much_later).is_ok(), "closed again");
    }

    #[test]
    fn a_trial_that_never_ends_is_replaced_after_another_cooldown() {
        let p = Policy::new(
            RetryConfig::default(),
            TimeoutConfig::default(),
            BreakerConfig {
                failures: 1,
                cooldown_seconds: 10.0,
            },
        )
        .unwrap();
        let mut b = Breakers::default();
        let t0 = Instant::now();
        b.record(&p, "t", true, t0);
        let trial = t0 + Duration::from_secs(10);
        assert!(b.admit(&p, "t", trial).is_ok());
        // The trial is cancelled: no outcome is ever recorded.
        assert!(b.admit(&p, "t", trial + Duration::from_secs(5)).is_err());
        assert!(
            b.admit(&p, "t", trial + Duration::from_secs(10)).is_ok(),
            "a new trial"
        );
    }

    #[test]
    fn breaker_off_by_default() {
        let p = Policy::default();
        let mut b = Breakers::default();
        for _ in 0..100 {
            b.record(&p, "t", true, Instant::now());
        }
        assert!(b.admit(&p, "t", Instant::now()).is_ok());
    }
}
