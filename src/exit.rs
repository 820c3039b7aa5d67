//! The exit codes of the proxy itself (sysexits where one fits); otherwise it exits with the
//! upstream's status. A leaf: every subcommand names its codes from here, and only `main`
//! exits.

/// All well.
pub const OK: i32 = 0;
/// A check found something (a rule example failed, a failure no rule decided, a line unread).
pub const FOUND: i32 = 1;
/// Bad usage, or an invalid config or rule file (sysexits EX_USAGE).
pub const USAGE: i32 = 64;
/// The upstream server could not be started (sysexits EX_UNAVAILABLE).
pub const CANNOT_START: i32 = 69;
/// An internal error (sysexits EX_SOFTWARE).
pub const INTERNAL: i32 = 70;
/// A file that `init` or `coverage --suggest` would write is there already, or cannot be
/// created (sysexits EX_CANTCREAT).
pub const CANNOT_CREATE: i32 = 73;
/// `install`/`uninstall` could not write a file (sysexits EX_IOERR).
pub const IO_ERROR: i32 = 74;
