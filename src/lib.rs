//! mcp-errnorm: a transparent stdio proxy for MCP servers that turns every failed tool call into
//! a structured, actionable error.
//!
//! # Layout
//!
//! A pure core (values in, values out; no I/O, unit-tested without processes):
//! - [`taxonomy`]: categories, sources, well-known error codes and their defaults, and the
//!   limits every layer shares (`MAX_RETRY_AFTER_SECONDS`).
//! - [`diagnostic`]: problems in user files, located as `file:line:col` with the rule id; the
//!   severity word each problem we print starts with, and its colour.
//! - [`template`]: `{capture}` message templates, checked at load.
//! - [`sync`]: the one lock policy (a poisoned lock is taken over, never a second panic).
//! - [`rules`]: TOML rule files -> one compiled, ordered [`rules::RuleSet`] (by priority, then
//!   [`rules::Tier`]: a server's own text, then what a failure means, then status tokens).
//! - [`model`]: the fallback classifier for what no rule matches, its deterministic training,
//!   its glossary of failure words in many languages, and the labelled corpus format it learns
//!   from.
//! - [`classify`]: a failure + the rule set (and the model) -> a [`classify::Verdict`]; a
//!   business verdict's words for the user (`classify/business.rs`).
//! - [`check`]: what `check` verifies beyond loading: rule examples, shadowed rules, user rules
//!   that decide what a meaning rule was written for.
//! - [`coverage`]: failures no rule decided, grouped by shape; draft rules for the groups.
//! - [`report`]: the proxy's log read back (text or JSON lines, mixed, any servers): failures
//!   by category, by server and tool, by rule; retries; unclassified texts by shape (through
//!   [`coverage`]); as aligned tables. Lines are read by their fields (`event=...`), never by
//!   their message.
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
//! - [`config`]: the config file as written (`config/schema.rs`), where it is looked for
//!   (`config/location.rs`: flag, environment, default location), and its resolution, with the
//!   flags, into the [`config::Settings`] of a run (`config/settings.rs`), from texts the shell
//!   read; the name the log gives the server, from its command (`config/server.rs`).
//!
//! A thin I/O shell:
//! - [`sys`]: every `libc` call and every `unsafe` block of the crate (the root denies
//!   `unsafe_code` elsewhere): pipes without blocking, signals, `prctl`, memory release.
//! - [`files`]: the user's files on disk: the config file located (environment read, default
//!   location probed), config and rule files read (regular files only),
//!   `Settings::load`, the log paths probed for `check`.
//! - [`exit`]: the proxy's own exit codes; only `main` exits.
//! - [`tell`]: lines for the person at the terminal on stderr, severity first, coloured where
//!   colour is on.
//! - [`relay`]: the pumps between client and upstream, retry timers, the one thread that
//!   enforces time limits (`relay/deadlines.rs`), the server's stderr copied (masked) to ours
//!   (and to the log file), the pipes used without blocking (`relay/pipe.rs`), and the
//!   upstream's lifecycle (shutdown ladder, the last answers of a server that exited,
//!   restart). Its [`relay::Inspector`] holds the per-line decisions (session, rewrite,
//!   retries, timeouts, breakers) as values, apart from any I/O: it returns [`relay::Effects`]
//!   (lines for each side, retries, deadlines, unmatched failures to record) that the pumps
//!   carry out.
//! - [`upstream`]: spawning the server (no shell), signals, exit statuses, and the processes it
//!   leaves behind (adopted, found in `/proc`, ended with it).
//! - [`reload`]: polling the config and rule files, swapping in a valid new table.
//! - [`unmatched`]: `--log-unmatched`, failures no rule matched as JSON lines.
//! - [`log_writer`]: the proxy's log on stderr, from a thread of its own and a bounded queue:
//!   a stderr nobody reads never holds up a pump.
//! - [`cli`]: the command line (run mode and the subcommands), and its one error type.
//! - [`commands`]: the rule tools, each with its own arguments: `check`, `classify`,
//!   `coverage`, `init`, `rules list`/`rules show`; and `report`, which reads the log files.
//! - [`install`]: `install`/`uninstall`: wrapping the servers of a client's MCP config (a pure
//!   span-keeping JSONC edit, plus locating, backup and atomic write).
//! - [`demo`]: a built-in legacy server that fails in the typical ways, and the demo itself.
//! - [`doctor`]: `doctor`: the config in use and why, the rules by origin, every client config
//!   found (through `install`'s locating and parsing) with its servers, wrapped or not, their
//!   commands looked for on PATH, and where each client keeps its logs.
//! - [`manual`]: what the binary carries for its users: the errors' JSON Schemas, the example
//!   config, the man pages (made from the `clap` command it is handed).
//!
//! # Dependencies go one way
//!
//! The shell uses the core; the core never imports the shell (it is handed values instead: the
//! texts `files` read, a function to release memory). Between the top-level modules there is no
//! circle, nor between the files of one module (`relay/deadlines.rs` knows the pumps only
//! through a trait), and `cli` is imported by no one: each subcommand owns its arguments and
//! names its exit codes from `exit`. Each line below uses only the lines above it:
//!
//! ```text
//! core   taxonomy, diagnostic, template, sync, wire
//!        rules, model, session
//!        classify
//!        render, check, coverage
//!        report
//!        recovery, redact
//!        rewrite
//!        config
//! shell  sys, exit, tell
//!        files, upstream, unmatched
//!        reload
//!        relay
//!        log_writer, commands, install, demo, manual
//!        doctor
//!        cli (and main)
//! ```
//!
//! `src/layout.rs` (a test) reads the sources and fails when the core imports the shell, when
//! a circle appears, when a module is on neither list, or when `libc` or `unsafe` leaves `sys`.
//!
//! # Errors
//!
//! Each layer has its own typed error (`thiserror`): [`diagnostic::Diagnostics`] for the user's
//! files, [`relay::StartError`], [`commands::Error`], [`install::Error`], [`demo::Error`],
//! gathered in [`cli::Error`], which knows each one's exit code. Subcommands return
//! `Result<exit code, Error>`; `main` is the one place that prints an error and exits.

// stdout belongs to the protocol: only the demo and the offline tools print, on purpose.
#![deny(clippy::print_stdout)]
// Every `unsafe` block is in `sys`, the one module allowed it.
#![deny(unsafe_code)]

pub mod check;
pub mod classify;
pub mod cli;
pub mod commands;
pub mod config;
pub mod coverage;
pub mod demo;
pub mod diagnostic;
pub mod doctor;
pub mod exit;
pub mod files;
pub mod install;
#[cfg(test)]
mod layout;
pub mod log_writer;
pub mod manual;
pub mod model;
pub mod recovery;
pub mod redact;
pub mod relay;
pub mod reload;
pub mod render;
pub mod report;
pub mod rewrite;
pub mod rules;
pub mod session;
pub mod sync;
#[allow(unsafe_code)]
pub mod sys;
pub mod taxonomy;
pub mod tell;
pub mod template;
pub mod unmatched;
pub mod upstream;
pub mod wire;
