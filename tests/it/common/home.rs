//! A temporary home for runs of the binary: every place it looks for a config (HOME, the
//! config folders of each OS) is under one temporary folder, and none of the tester's variables
//! that change what it does (its config, its log, colour) reach it.

use std::path::Path;
use std::process::{Command, Stdio};

/// The variables of the tester's own environment that would change what the binary does.
const TESTERS_OWN: [&str; 5] = [
    "MCP_ERRNORM_CONFIG",
    "MCP_ERRNORM_LOG",
    "NO_COLOR",
    "CLICOLOR_FORCE",
    "CLICOLOR",
];

/// Points `command` at a home under `root`: `root/home` (HOME, USERPROFILE), `root/xdg`
/// (XDG_CONFIG_HOME), `root/appdata` (APPDATA); the folders are the caller's to create.
/// Without stdin, and without the tester's variables.
pub fn at_home<'c>(command: &'c mut Command, root: &Path) -> &'c mut Command {
    command
        .env("HOME", root.join("home"))
        .env("USERPROFILE", root.join("home"))
        .env("APPDATA", root.join("appdata"))
        .env("XDG_CONFIG_HOME", root.join("xdg"))
        .stdin(Stdio::null());
    for var in TESTERS_OWN {
        command.env_remove(var);
    }
    command
}

/// What a finished run printed, and its exit code.
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Runs `command` to the end.
    pub fn of(command: &mut Command) -> Output {
        let out = command.output().unwrap();
        Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}
