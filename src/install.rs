//! `mcp-errnorm install` / `uninstall`: put the proxy in front of the stdio servers of a client's
//! MCP config, or take it away, in one reversible step.
//!
//! - [`locate`]: where each client keeps its config (pure; the environment is passed in).
//! - [`jsonc`]: a JSON/JSONC parser that keeps every value's byte span and the comments.
//! - [`edit`]: the pure edit: config text in, edited text and a per-server report out.
//! - [`diff`]: the unified diff `--dry-run` prints.
//!
//! This file is the I/O around them: finding the files, reading, reporting, the backup and the
//! atomic write. It prints on purpose: the `--dry-run` diff goes to stdout (so it can be piped
//! to `patch` or a pager), the report to stderr.
#![allow(clippy::print_stdout)]

pub mod diff;
pub mod edit;
pub mod ephemeral;
pub mod jsonc;
pub mod locate;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::exit;
pub use edit::{declared, Action, Declared, Status, Wrapper};
pub use locate::{log_places, Client, Env, LogPlace, Os};

const CLIENT_HELP: &str = "The client whose MCP config to edit: claude-desktop, claude-code, \
    cursor, vscode, windsurf; or the path of a config FILE (its format is told by its keys: \
    \"mcpServers\" or \"servers\"). Default: the one client whose config exists.";

/// `mcp-errnorm install`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each chosen stdio server's command becomes
  <this mcp-errnorm binary> [--config FILE] --name <server> -- <original command> <original args>
(<server> is the server's name in the client config: the logs of several servers tell them
apart by it)
(run from an npx, uvx or pipx cache, which can be cleaned at any time, the binary's place is
taken by `npx -y mcp-errnorm@VERSION`, `uvx mcp-errnorm@VERSION` or
`pipx run --spec mcp-errnorm==VERSION mcp-errnorm`), with \"env\" and every other key kept.
HTTP/SSE servers are listed and left alone; servers already wrapped are not wrapped twice and
keep their options (--config replaces only their --config). The file as it was before
mcp-errnorm changed it is kept in <file>.mcp-errnorm.bak, and the file is replaced atomically.

Config files looked at:
  claude-desktop  ~/Library/Application Support/Claude/claude_desktop_config.json (macOS)
                  %APPDATA%\\Claude\\claude_desktop_config.json (Windows)
                  ~/.config/Claude/claude_desktop_config.json (Linux)
  claude-code     ~/.claude.json (user and per-project servers), ./.mcp.json
  cursor          ~/.cursor/mcp.json, ./.cursor/mcp.json
  vscode          the user mcp.json (~/Library/Application Support/Code/User, %APPDATA%\\Code\\User,
                  ~/.config/Code/User), ./.vscode/mcp.json (comments are kept)
  windsurf        ~/.codeium/windsurf/mcp_config.json

Examples:
  mcp-errnorm install --client claude-desktop --dry-run
  mcp-errnorm install --client cursor --server filesystem --server github
  mcp-errnorm install --client vscode --config ~/.config/mcp-errnorm.toml
  mcp-errnorm install --client ./my-client/mcp.json

Undo with `mcp-errnorm uninstall` and the same --client.")]
pub struct InstallArgs {
    #[arg(long, value_name = "CLIENT|FILE", help = CLIENT_HELP)]
    pub client: Option<String>,
    /// Wrap only this server (repeatable). Default: every stdio server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// An mcp-errnorm config file for the wrapped servers (checked now, written as an absolute
    /// path). Without it, the proxy looks for its config at each start, as `mcp-errnorm
    /// --help` says (MCP_ERRNORM_CONFIG, then ~/.config/mcp-errnorm/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the change as a unified diff on stdout; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `mcp-errnorm uninstall`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each wrapped server gets its original command and args back: whatever follows the first \"--\"
of its args; the proxy's options are dropped. No backup is needed. When the file has not been
changed otherwise since `install`, the backup's bytes are restored exactly.

Examples:
  mcp-errnorm uninstall --client claude-desktop
  mcp-errnorm uninstall --client cursor --server github --dry-run")]
pub struct UninstallArgs {
    #[arg(long, value_name = "CLIENT|FILE", help = CLIENT_HELP)]
    pub client: Option<String>,
    /// Unwrap only this server (repeatable). Default: every wrapped server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Print the change as a unified diff on stdout; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Why `install` or `uninstall` failed, with the exit code it means.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// [`exit::USAGE`], [`exit::INTERNAL`] or [`exit::IO_ERROR`].
    pub code: i32,
    pub message: String,
}

fn usage(message: impl Into<String>) -> Error {
    Error {
        code: exit::USAGE,
        message: message.into(),
    }
}

/// Runs `install`.
pub fn install(args: &InstallArgs) -> Result<i32, Error> {
    let (w, own) = wrapper(args.config.as_deref())?;
    let action = Action::Install(w);
    run(
        &Env::from_process(),
        args.client.as_deref(),
        &action,
        &args.servers,
        args.dry_run,
        Some(&own),
    )?;
    Ok(exit::OK)
}

/// Runs `uninstall`.
pub fn uninstall(args: &UninstallArgs) -> Result<i32, Error> {
    let own = own_program().ok();
    run(
        &Env::from_process(),
        args.client.as_deref(),
        &Action::Uninstall,
        &args.servers,
        args.dry_run,
        own.as_deref(),
    )?;
    Ok(exit::OK)
}

/// How this binary is wrapped around servers: its absolute path (or, run from an npx, uv or
/// pipx cache, the runner pinned to this version: see [`ephemeral`]), and `--config` made
/// absolute (after checking the config loads, so no server is set up to fail). Also this
/// binary's own path, by which the servers it wrapped are known.
fn wrapper(config: Option<&Path>) -> Result<(Wrapper, String), Error> {
    let own = own_program()?;
    let resolved = std::env::current_exe().ok();
    let (program, launcher, runner) = ephemeral::launch_command(
        &own,
        resolved.as_deref().and_then(Path::to_str),
        env!("CARGO_PKG_VERSION"),
    );
    if runner.is_some() {
        let note = format!(
            "note: running from a package cache ({own}), which can be cleaned at any \
             time: servers are wrapped with `{program} {}` instead",
            launcher.join(" ")
        );
        crate::tell::say(&note);
    }
    let mut options = Vec::new();
    if let Some(config) = config {
        let config =
            std::path::absolute(config).map_err(|e| usage(format!("{}: {e}", config.display())))?;
        let flags = crate::config::Flags {
            config: Some(config.clone()),
            ..Default::default()
        };
        if let Err(problems) = crate::config::Settings::load(&flags) {
            return Err(usage(format!(
                "invalid configuration, nothing changed:\n{problems}"
            )));
        }
        let config = config
            .to_str()
            .ok_or_else(|| usage(format!("{}: the path is not UTF-8", config.display())))?;
        options = vec!["--config".to_owned(), config.to_owned()];
    }
    Ok((
        Wrapper {
            program,
            launcher,
            options,
            name: true,
        },
        own,
    ))
}

/// This binary's absolute path as the user ran it. Not the resolved one: a package manager's
/// stable symlink (Homebrew's `bin/`, a Nix profile) must not become the versioned path it
/// points to, which an upgrade removes; and on Linux `current_exe` is always resolved.
pub fn own_program() -> Result<String, Error> {
    let unknown = |e: std::io::Error| Error {
        code: exit::INTERNAL,
        message: format!("cannot tell where this binary is: {e}"),
    };
    let exe = std::env::current_exe().map_err(unknown)?;
    let invoked = std::env::args_os().next().map(PathBuf::from);
    let as_run = invoked
        .and_then(|arg0| {
            if arg0.components().count() > 1 {
                std::path::absolute(arg0).ok()
            } else {
                // Run by name: the first match on PATH, as the shell found it.
                std::env::split_paths(&std::env::var_os("PATH")?)
                    .map(|dir| dir.join(&arg0))
                    .find(|p| p.is_file())
                    .and_then(|p| std::path::absolute(p).ok())
            }
        })
        .filter(|p| same_file(p, &exe));
    let path = match as_run {
        Some(path) => path,
        None => std::path::absolute(&exe).map_err(unknown)?,
    };
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| usage(format!("{}: the path is not UTF-8", path.display())))
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// The config files to edit, each with the client it belongs to (None: a file given by path).
fn targets(env: &Env, client: Option<&str>) -> Result<Vec<(Option<Client>, PathBuf)>, Error> {
    let existing = |c: Client| -> Vec<PathBuf> {
        locate::candidates(c, env)
            .into_iter()
            .filter(|p| p.is_file())
            .collect()
    };
    let looked_at = |clients: &[Client]| -> String {
        clients
            .iter()
            .flat_map(|&c| locate::candidates(c, env))
            .map(|p| format!("\n  {}", p.display()))
            .collect()
    };
    match client {
        Some(name) => match Client::from_name(name) {
            Some(c) => {
                let files = existing(c);
                if files.is_empty() {
                    return Err(usage(format!(
                        "no {name} MCP config found; looked at:{}",
                        looked_at(&[c])
                    )));
                }
                Ok(files.into_iter().map(|p| (Some(c), p)).collect())
            }
            None => {
                let path = PathBuf::from(name);
                if !path.is_file() {
                    let names: Vec<_> = Client::ALL.iter().map(|c| c.name()).collect();
                    return Err(usage(format!(
                        "{name}: neither a client ({}) nor an existing file",
                        names.join(", ")
                    )));
                }
                Ok(vec![(None, path)])
            }
        },
        None => {
            let found: Vec<(Client, Vec<PathBuf>)> = Client::ALL
                .into_iter()
                .map(|c| (c, existing(c)))
                .filter(|(_, files)| !files.is_empty())
                .collect();
            match found.len() {
                0 => Err(usage(format!(
                    "no MCP client config found; looked at:{}",
                    looked_at(&Client::ALL)
                ))),
                1 => {
                    let (c, files) = found.into_iter().next().unwrap_or_else(|| unreachable!());
                    Ok(files.into_iter().map(|p| (Some(c), p)).collect())
                }
                _ => {
                    let list: String = found
                        .iter()
                        .flat_map(|(c, files)| {
                            files
                                .iter()
                                .map(move |p| format!("\n  {:<15} {}", c.name(), p.display()))
                        })
                        .collect();
                    Err(usage(format!(
                        "several clients have an MCP config; choose one with --client:{list}"
                    )))
                }
            }
        }
    }
}

/// One file, read and edited in memory.
struct Planned {
    path: PathBuf,
    original: String,
    outcome: edit::Outcome,
    /// Uninstall only: the backup's bytes, when they are exactly what is being restored.
    restore_backup: bool,
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".mcp-errnorm.bak");
    PathBuf::from(name)
}

/// Carries out `action` on the chosen servers of the client's files; `own` is this binary's
/// path, by which the servers it wraps are known whatever its name.
// Long: the servers of every file chosen, wrapped or unwrapped, reported, and written at once.
fn run(
    env: &Env,
    client: Option<&str>,
    action: &Action,
    select: &[String],
    dry_run: bool,
    own: Option<&str>,
) -> Result<(), Error> {
    let targets = targets(env, client)?;

    // Read and edit everything first: any problem anywhere, and nothing is written.
    let mut planned = Vec::new();
    let mut problems = Vec::new();
    for (_, path) in &targets {
        let original = match fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => {
                    problems.push(format!("{}: not UTF-8 text", path.display()));
                    continue;
                }
            },
            Err(e) => {
                problems.push(format!("{}: cannot read: {e}", path.display()));
                continue;
            }
        };
        match edit::apply_as(&original, action, select, own) {
            Ok(outcome) if outcome.changed() && !dry_run && !writable(path) => {
                problems.push(format!(
                    "{}: read-only (no write permission): make it writable first",
                    path.display()
                ));
            }
            Ok(mut outcome) => {
                // A full uninstall of a file nobody else changed since install: the backup's
                // bytes exactly.
                let backup = (*action == Action::Uninstall && select.is_empty())
                    .then(|| fs::read_to_string(backup_path(path)).ok())
                    .flatten()
                    .filter(|backup| {
                        outcome.changed() && edit::restores_backup(&original, backup, own)
                    });
                let restore_backup = backup.is_some();
                if let Some(backup) = backup {
                    outcome.edits = vec![edit::whole_edit(&original, &backup)];
                    outcome.text = backup;
                }
                planned.push(Planned {
                    path: path.clone(),
                    original,
                    outcome,
                    restore_backup,
                });
            }
            Err(e) => problems.push(e.in_file(path)),
        }
    }
    if !problems.is_empty() {
        let problems: Vec<String> = problems.iter().map(|p| format!("error: {p}")).collect();
        return Err(usage(format!("nothing changed:\n{}", problems.join("\n"))));
    }
    let unknown: Vec<&String> = select
        .iter()
        .filter(|name| {
            !planned
                .iter()
                .any(|p| p.outcome.servers.iter().any(|s| &s.name == *name))
        })
        .collect();
    if !unknown.is_empty() {
        let names: Vec<String> = planned
            .iter()
            .flat_map(|p| p.outcome.servers.iter().map(|s| s.name.clone()))
            .collect();
        let files: Vec<String> = planned
            .iter()
            .map(|p| p.path.display().to_string())
            .collect();
        return Err(usage(format!(
            "no server named {} in {}; nothing changed (servers there: {})",
            unknown
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", "),
            files.join(", "),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    }

    let mut changed_any = false;
    for p in &planned {
        eprintln!("{}:", p.path.display());
        if p.outcome.servers.is_empty() {
            eprintln!("  no MCP servers configured");
        }
        for s in &p.outcome.servers {
            eprintln!("  {}.{}: {}", s.table, s.name, s.status);
        }
        if !p.outcome.changed() {
            continue;
        }
        changed_any = true;
        if dry_run {
            let label = p.path.display().to_string();
            // Coloured where colour is on (see `--color`): a pipe to `patch` gets none.
            let diff = diff::unified(&label, &p.original, &p.outcome.edits);
            let _ = write!(anstream::stdout(), "{}", diff::painted(&diff));
            continue;
        }
        let backup = backup_path(&p.path);
        // The backup keeps the file as it was before mcp-errnorm changed it: a version that
        // already wraps servers does not replace it, so that copying it back (after another
        // install, or an uninstall) never brings the proxy back.
        let keep_backup = backup.exists()
            && edit::apply_as(&p.original, &Action::Uninstall, &[], own).is_ok_and(|o| o.changed());
        write_file(
            &p.path,
            (!keep_backup).then_some(backup.as_path()),
            p.original.as_bytes(),
            p.outcome.text.as_bytes(),
        )?;
        eprintln!(
            "  written; {} {}{}",
            if keep_backup {
                "the version from before mcp-errnorm stays in"
            } else {
                "the previous version is in"
            },
            backup.display(),
            if p.restore_backup {
                " (the original bytes were restored from the backup)"
            } else {
                ""
            }
        );
    }
    if dry_run {
        eprintln!("dry run: nothing written");
    } else if changed_any {
        let undo = match action {
            Action::Install(_) => " Undo with `mcp-errnorm uninstall` and the same --client.",
            Action::Uninstall => "",
        };
        eprintln!("Restart the client (or reload its MCP servers) to apply.{undo}");
    } else {
        eprintln!("nothing to change");
    }
    Ok(())
}

fn io_failure(path: &Path, what: &str, e: &std::io::Error) -> Error {
    Error {
        code: exit::IO_ERROR,
        message: format!("{}: {what}: {e}", path.display()),
    }
}

/// Whether the file may be written: not read-only for everyone (which its owner set on purpose,
/// and which root would override), and writable by this user. Replacing it by a rename would
/// succeed either way.
fn writable(path: &Path) -> bool {
    if fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return false;
    }
    crate::sys::may_write(path).is_ok()
}

/// Keeps `old` in `backup` (when given), then replaces `path` (following a symlink to the real
/// file) with `new`, atomically, with the file's permissions and owner.
fn write_file(path: &Path, backup: Option<&Path>, old: &[u8], new: &[u8]) -> Result<(), Error> {
    let target = path
        .canonicalize()
        .map_err(|e| io_failure(path, "cannot resolve", &e))?;
    let meta = fs::metadata(&target).map_err(|e| io_failure(&target, "cannot read", &e))?;
    if let Some(backup) = backup {
        write_atomic(backup, old, &meta)
            .map_err(|e| io_failure(backup, "cannot write the backup", &e))?;
    }
    write_atomic(&target, new, &meta).map_err(|e| io_failure(&target, "cannot write", &e))
}

/// Writes a temp file in the same folder with the permissions (and, where allowed, the owner)
/// of `like`, then renames it over `path`: run with sudo, the user's own file stays theirs.
fn write_atomic(path: &Path, bytes: &[u8], like: &fs::Metadata) -> std::io::Result<()> {
    let perms = like.permissions();
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.mcp-errnorm-{}.tmp", std::process::id()));
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(perms.mode() & 0o7777);
        }
        let mut file = options.open(&tmp)?;
        fs::set_permissions(&tmp, perms.clone())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Only root may give a file away (and needs to, under sudo); for anyone else the
            // file is theirs already, and the refusal changes nothing.
            let _ = std::os::unix::fs::fchown(&file, Some(like.uid()), Some(like.gid()));
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
