//! Lines for the person at the terminal, on stderr: problems and notes of the subcommands and
//! of the proxy's start, each with its severity word first and coloured where colour is on
//! (`--color`, `NO_COLOR`). Never a panic when stderr is gone (`eprintln!` would): a client that
//! closed it still gets every answer and the exit status.

use std::io::Write as _;

/// Writes `text` (one line or several) on stderr, its severity words coloured.
pub fn say(text: &str) {
    let _ = writeln!(anstream::stderr(), "{}", crate::diagnostic::paint(text));
}
