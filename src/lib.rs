//! mcp-errnorm: a transparent stdio proxy for MCP servers that turns every failed tool call into
//! a structured, actionable error.
//!
//! # Layout
//!
//! A pure core (values in, values out; no I/O, unit-tested without processes):
//! - [`taxonomy`]: categories, sources, well-known error codes and their defaults.
//! - [`diagnostic`]: problems in user files, located as `file:line:col` with the rule id.
//! - [`template`]: `{capture}` message templates, checked at load.
//! - [`rules`]: TOML rule files -> one compiled, ordered [`rules::RuleSet`] (by priority, then
//!   [`rules::Tier`]: a server's own text, then what a failure means, then status tokens).
//! - [`model`]: the fallback classifier for what no rule matches, its deterministic training,
//!   and the labelled corpus format it learns from.
//! - [`classify`]: a failure + the rule set (and the model) -> a [`classify::Verdict`]; a
//!   business verdict's words for the user (`classify/business.rs`).
//! - [`check`]: what `check` verifies beyond loading: rule examples, shadowed rules, user rules
//!   that decide what a meaning rule was written for.
//! - [`coverage`]: failures no rule decided, grouped by shape; draft rules for the groups.
//! - [`render`]: the canonical [`render::StructuredError`] and its profiles (`mcp`, `enterprise`).
//! - [`rewrite`]: is this `tools/call` answer a failure (a failure answered as a success is
//!   recognised by its shape in `rewrite/hidden.rs`)? If so, the `CallToolResult` to send
//!   instead.
//! - [`wire`]: JSON-RPC lines through a borrowed envelope; byte-exact, builds only rewritten lines.
//! - [`recovery`]: which failed calls are retried and when, time limits, circuit breakers.
//! - [`redact`]: secrets masked in everything the proxy writes itself (the shipped patterns in
//!   `redact/patterns.rs`).
//! - [`session`]: requests in flight and their deadlines, the tools the upstream declared, the
//!   protocol version.
//! - [`config`]: the config file and the options of a run.
//!
//! A thin I/O shell:
//! - [`relay`]: the pumps between client and upstream, retry timers, the one thread that
//!   enforces time limits, the server's stderr copied (masked) to ours (and to the log file),
//!   the pipes used without blocking (`relay/pipe.rs`: the server's, so that a pump waiting on
//!   a server that exited can be let go; ours, which a client may hand over non-blocking), and
//!   the upstream's lifecycle (shutdown ladder, the last answers of a server that exited,
//!   restart). Its
//!   [`relay::Inspector`] holds the per-line decisions (session, rewrite, retries, timeouts,
//!   breakers) as values, apart from any I/O.
//! - [`upstream`]: spawning the server (no shell), signals, exit statuses, and the processes it
//!   leaves behind (adopted, found in `/proc`, ended with it).
//! - [`reload`]: polling the config and rule files, swapping in a valid new table.
//! - [`unmatched`]: `--log-unmatched`, failures no rule matched as JSON lines.
//! - [`cli`]: the command line (run mode, `demo`, the rule tools).
//! - [`log_writer`]: the proxy's log on stderr, from a thread of its own and a bounded queue:
//!   a stderr nobody reads never holds up a pump.
//! - [`commands`]: the rule tools: `check`, `classify`, `coverage`, `init`.
//! - [`install`]: `install`/`uninstall`: wrapping the servers of a client's MCP config (a pure
//!   span-keeping JSONC edit, plus locating, backup and atomic write).
//! - [`demo`]: a built-in legacy server that fails in the typical ways, and the demo itself.
//!
//! The core never reaches the shell: `relay` calls `session` and `rewrite`, never the reverse.

// stdout belongs to the protocol: only the demo and the offline tools print, on purpose.
#![deny(clippy::print_stdout)]

pub mod check;
pub mod classify;
pub mod cli;
pub mod commands;
pub mod config;
pub mod coverage;
pub mod demo;
pub mod diagnostic;
pub mod install;
pub mod log_writer;
pub mod model;
pub mod recovery;
pub mod redact;
pub mod relay;
pub mod reload;
pub mod render;
pub mod rewrite;
pub mod rules;
pub mod session;
pub mod taxonomy;
pub mod template;
pub mod unmatched;
pub mod upstream;
pub mod wire;
