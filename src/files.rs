//! The user's files on disk, the shell's side of `config`: the config file located (the
//! environment read, the default location probed), config and rule files read (regular
//! files only, of a sane size), the rule files named twice found out, the environment's log
//! level read, then everything handed to [`Settings::resolve`]; and the log paths probed as a
//! start would open them.

use std::path::{Path, PathBuf};

use crate::config::{
    self, ConfigChoice, ConfigEnv, ConfigFile, Flags, Settings, Sources, CONFIG_ENV, LOG_LEVEL_ENV,
};
use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};
use crate::sys;

/// The largest config or rule file read: far above any real one (the embedded rules are a few
/// hundred KiB in all).
pub const MAX_FILE: u64 = 8 << 20;

/// The bytes of a regular file of at most [`MAX_FILE`], opened without blocking (a FIFO put in
/// its place since it was looked at would otherwise wait for a writer).
fn read_regular(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let file = sys::open_nonblocking(std::fs::OpenOptions::new().read(true)).open(path)?;
    let meta = file.metadata()?;
    // A FIFO (`<(...)` too) can only be read by waiting for its writer, which a reload must
    // not; a character device (`/dev/null`) reads at once, and the cap below bounds it.
    if !meta.is_file() && !meta.file_type().is_char_device() {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO or `<(...)` cannot be reread: write it to a file)",
        ));
    }
    if meta.len() > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {MAX_FILE} a config or rule file may have",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(
            "it grew past the size a config or rule file may have",
        ));
    }
    Ok(bytes)
}

/// The environment's word on where the config is (see [`config::choose_config`]).
pub fn config_env() -> ConfigEnv {
    ConfigEnv {
        config: std::env::var_os(CONFIG_ENV),
        xdg_config_home: std::env::var_os("XDG_CONFIG_HOME"),
        home: std::env::var_os("HOME"),
        macos: cfg!(target_os = "macos"),
    }
}

/// The config file a run reads: `--config`'s, else [`CONFIG_ENV`]'s (an error when it names
/// no file), else the default location's if it is there, else none (the embedded defaults).
pub fn locate_config(flag: Option<&Path>) -> Result<ConfigChoice, Diagnostics> {
    // A link to nowhere counts as there: reading it says what is wrong.
    let exists = |path: &Path| std::fs::symlink_metadata(path).is_ok();
    config::choose_config(flag, &config_env(), exists).map_err(|missing| {
        Diagnostics(vec![Diagnostic {
            file: CONFIG_ENV.to_owned(),
            line: 0,
            col: 0,
            rule: None,
            message: format!("{} does not exist", missing.path.display()),
        }])
    })
}

impl SourceFile {
    /// Reads a config or rule file from disk, naming it by the path given. Only a regular file
    /// (or a character device) of at most [`MAX_FILE`] is read: a FIFO would block the reader
    /// (at start, or a reload) until someone writes to it, `/dev/zero` would never end.
    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        let name = path.display().to_string();
        match read_regular(path) {
            Ok(bytes) => SourceFile::from_bytes(name, bytes),
            Err(e) => Err(Diagnostic {
                file: name,
                line: 0,
                col: 0,
                rule: None,
                message: format!("cannot read: {e}"),
            }),
        }
    }
}

impl Settings {
    /// Reads the config file and every rule file, then resolves them. All or nothing: any
    /// problem in any file fails the whole, with every problem listed.
    pub fn load(flags: &Flags) -> Result<Settings, Diagnostics> {
        let config = match &flags.config {
            Some(path) => Some(read_config(path)?),
            None => None,
        };
        let named = config::files_of(
            flags,
            config.as_ref().map_or(&ConfigFile::default(), |c| &c.1),
        );
        let mut rule_files = Vec::new();
        let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
        for path in &named[flags.config.iter().len()..] {
            // The same file twice would only report each of its rules as its own duplicate.
            let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if let Some((_, first)) = seen.iter().find(|(known, _)| *known == identity) {
                rule_files.push(Err(Diagnostic {
                    file: path.display().to_string(),
                    line: 0,
                    col: 0,
                    rule: None,
                    message: format!(
                        "the same rule file as {} is given twice: name each file once",
                        first.display()
                    ),
                }));
                continue;
            }
            seen.push((identity, path));
            rule_files.push(SourceFile::read(path));
        }
        let sources = Sources {
            config,
            rule_files,
            env_level: std::env::var(LOG_LEVEL_ENV).ok(),
        };
        Settings::resolve(flags, sources)
    }
}

fn read_config(path: &Path) -> Result<(SourceFile, ConfigFile), Diagnostics> {
    let file = SourceFile::read(path).map_err(|d| Diagnostics(vec![d]))?;
    match ConfigFile::parse(&file) {
        Ok(config) => Ok((file, config)),
        Err(d) => Err(Diagnostics(vec![d])),
    }
}

/// The files to watch for a reload, even when they do not load: the config and whatever rule
/// files it names, or, when the config itself does not read, the ones named before.
pub fn files_named(flags: &Flags, before: &[PathBuf]) -> Vec<PathBuf> {
    match flags.config.as_deref().map(read_config) {
        None => config::files_of(flags, &ConfigFile::default()),
        Some(Ok((_, config))) => config::files_of(flags, &config),
        Some(Err(_)) => before.to_vec(),
    }
}

/// The log paths of `settings` that the proxy could not open at start, judged without creating
/// or changing anything, said at their key or flag.
pub fn unusable_log_paths(settings: &Settings) -> Vec<Diagnostic> {
    settings
        .log_paths
        .iter()
        .filter_map(|log| log_path_problem(&log.path).map(|problem| log.problem(&problem)))
        .collect()
}

/// Why a log the proxy appends to could not be opened at start, judged without creating or
/// truncating it: an existing file is opened for appending (nothing written), a new one needs
/// a folder it may create files in.
fn log_path_problem(path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Some(format!("{shown} is a folder, not a file")),
        // Opening a FIFO waits for a reader: the start will, and so it may well be meant.
        Ok(meta) if meta.file_type().is_fifo() => None,
        Ok(_) => sys::open_nonblocking(std::fs::OpenOptions::new().append(true))
            .open(path)
            .err()
            .map(|e| format!("cannot open {shown} to append to it: {e}")),
        Err(_) => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !folder.is_dir() {
                return Some(if folder.exists() {
                    format!(
                        "{} is not a folder: {shown} cannot be created in it",
                        folder.display()
                    )
                } else {
                    format!("the folder {} does not exist", folder.display())
                });
            }
            match sys::may_write(folder) {
                // A path with a NUL in it is for the start to find out about.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => None,
                Err(e) => Some(format!("cannot create {shown}: {e}")),
                Ok(_) => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_a_sane_size_in_utf8_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let message = |path: &std::path::Path| SourceFile::read(path).unwrap_err().to_string();
        // A FIFO would block the reader until someone writes to it.
        let fifo = dir.path().join("rules.toml");
        crate::sys::mkfifo(&fifo).unwrap();
        assert!(
            message(&fifo).contains("not a regular file"),
            "{}",
            message(&fifo)
        );
        let zero = message(std::path::Path::new("/dev/zero"));
        assert!(zero.contains("grew past"), "{zero}");
        assert_eq!(
            SourceFile::read(std::path::Path::new("/dev/null"))
                .unwrap()
                .text,
            ""
        );
        let big = dir.path().join("big.toml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE + 1)
            .unwrap();
        assert!(message(&big).contains("more than"), "{}", message(&big));
        let latin1 = dir.path().join("latin1.toml");
        std::fs::write(&latin1, b"[[rule]]\nid = \"caf\xe9\"\n").unwrap();
        assert_eq!(
            message(&latin1),
            format!("error: {}:2:10: not UTF-8 text", latin1.display())
        );
    }
}
