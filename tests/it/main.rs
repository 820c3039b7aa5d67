//! The integration tests, in one binary (as ripgrep's `tests/tests.rs`): one link instead of
//! fifteen, and the helpers in [`common`] shared as a module, so that a helper no test uses is a
//! warning again. Run a group by its module path: `cargo test --test it faults::`.

mod common;

mod cli;
mod cli_manners;
mod corpus;
mod docs;
mod doctor;
mod faults;
mod install;
mod lifecycle;
mod logs;
mod manners;
mod manners_output;
mod memory;
mod property;
mod real_failures;
mod recovery;
mod report;
mod rewriting;
mod rule_tools;
mod server_exit;
mod transparency;
