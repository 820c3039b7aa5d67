//! Where the config file is looked for, in order: `--config FILE`; else the file
//! [`CONFIG_ENV`] names (which must exist); else `config.toml` in the platform's config folder
//! for mcp-errnorm, if it is there; else none (the embedded defaults). Pure: the shell reads
//! the environment ([`ConfigEnv`]) and answers whether a file exists.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that names the config file when `--config` does not.
pub const CONFIG_ENV: &str = "MCP_ERRNORM_CONFIG";

/// What the environment says about where the config is, as the shell read it.
#[derive(Debug, Clone, Default)]
pub struct ConfigEnv {
    /// The value of [`CONFIG_ENV`].
    pub config: Option<OsString>,
    pub xdg_config_home: Option<OsString>,
    pub home: Option<OsString>,
    /// macOS keeps configs in `~/Library/Application Support`.
    pub macos: bool,
}

/// Who named the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOrigin {
    Flag,
    Env,
    DefaultLocation,
}

/// The config file a run reads, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigChoice {
    File {
        path: PathBuf,
        origin: ConfigOrigin,
    },
    /// No config file: the embedded defaults.
    Embedded,
}

impl ConfigChoice {
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigChoice::File { path, .. } => Some(path),
            ConfigChoice::Embedded => None,
        }
    }
}

impl std::fmt::Display for ConfigChoice {
    /// What `check` says about it: `config: FILE (from ...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigChoice::File { path, origin } => {
                let from = match origin {
                    ConfigOrigin::Flag => "--config".to_owned(),
                    ConfigOrigin::Env => CONFIG_ENV.to_owned(),
                    ConfigOrigin::DefaultLocation => "the default location".to_owned(),
                };
                write!(f, "config file: {} (from {from})", path.display())
            }
            ConfigChoice::Embedded => f.write_str("no config file: embedded defaults"),
        }
    }
}

/// [`CONFIG_ENV`] names a file that is not there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{CONFIG_ENV} names {}, which does not exist", path.display())]
pub struct MissingConfig {
    pub path: PathBuf,
}

/// A value that is set and not empty (an empty variable counts as unset, as shells mean it).
fn set(value: &Option<OsString>) -> Option<&OsString> {
    value.as_ref().filter(|v| !v.is_empty())
}

impl ConfigEnv {
    /// The platform's config folder for mcp-errnorm, whether it exists or not:
    /// `$XDG_CONFIG_HOME/mcp-errnorm`, else `~/.config/mcp-errnorm` (on macOS
    /// `~/Library/Application Support/mcp-errnorm`). None without an absolute home to put it
    /// in (MCP clients may start the proxy with an environment that has no `HOME`). A relative
    /// `XDG_CONFIG_HOME` is ignored, as the XDG specification asks.
    pub fn default_dir(&self) -> Option<PathBuf> {
        let absolute = |v: &OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
        if let Some(xdg) = set(&self.xdg_config_home).and_then(absolute) {
            return Some(xdg.join("mcp-errnorm"));
        }
        let home = set(&self.home).and_then(absolute)?;
        Some(if self.macos {
            home.join("Library/Application Support/mcp-errnorm")
        } else {
            home.join(".config/mcp-errnorm")
        })
    }

    /// `config.toml` in [`Self::default_dir`].
    pub fn default_file(&self) -> Option<PathBuf> {
        self.default_dir().map(|dir| dir.join("config.toml"))
    }
}

/// The config file to read: the flag's; else [`CONFIG_ENV`]'s, which must exist; else the
/// default location's when `exists` says it is there; else none.
pub fn choose_config(
    flag: Option<&Path>,
    env: &ConfigEnv,
    exists: impl Fn(&Path) -> bool,
) -> Result<ConfigChoice, MissingConfig> {
    if let Some(path) = flag {
        return Ok(ConfigChoice::File {
            path: path.to_owned(),
            origin: ConfigOrigin::Flag,
        });
    }
    if let Some(named) = set(&env.config) {
        let path = PathBuf::from(named);
        if !exists(&path) {
            return Err(MissingConfig { path });
        }
        return Ok(ConfigChoice::File {
            path,
            origin: ConfigOrigin::Env,
        });
    }
    Ok(match env.default_file() {
        Some(path) if exists(&path) => ConfigChoice::File {
            path,
            origin: ConfigOrigin::DefaultLocation,
        },
        _ => ConfigChoice::Embedded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(config: Option<&str>, xdg: Option<&str>, home: Option<&str>, macos: bool) -> ConfigEnv {
        ConfigEnv {
            config: config.map(OsString::from),
            xdg_config_home: xdg.map(OsString::from),
            home: home.map(OsString::from),
            macos,
        }
    }

    fn choose(
        flag: Option<&str>,
        env: &ConfigEnv,
        existing: &[&str],
    ) -> Result<ConfigChoice, MissingConfig> {
        choose_config(flag.map(Path::new), env, |p| {
            existing.iter().any(|e| Path::new(e) == p)
        })
    }

    fn file(path: &str, origin: ConfigOrigin) -> Result<ConfigChoice, MissingConfig> {
        Ok(ConfigChoice::File {
            path: path.into(),
            origin,
        })
    }

    #[test]
    fn the_flag_wins_over_the_environment_and_the_default_location() {
        let all = env(Some("/e.toml"), Some("/x"), Some("/h"), false);
        let existing = ["/e.toml", "/x/mcp-errnorm/config.toml"];
        // Even a flag naming a missing file: reading it says so.
        assert_eq!(
            choose(Some("mine.toml"), &all, &existing),
            file("mine.toml", ConfigOrigin::Flag)
        );
    }

    #[test]
    fn the_environment_variable_comes_next_and_must_name_a_file_that_exists() {
        let e = env(Some("/e.toml"), Some("/x"), Some("/h"), false);
        assert_eq!(
            choose(None, &e, &["/e.toml", "/x/mcp-errnorm/config.toml"]),
            file("/e.toml", ConfigOrigin::Env)
        );
        let missing = choose(None, &e, &["/x/mcp-errnorm/config.toml"]).unwrap_err();
        assert_eq!(missing.path, Path::new("/e.toml"));
        assert_eq!(
            missing.to_string(),
            "MCP_ERRNORM_CONFIG names /e.toml, which does not exist"
        );
        // Set but empty counts as unset.
        let empty = env(Some(""), Some("/x"), None, false);
        assert_eq!(
            choose(None, &empty, &["/x/mcp-errnorm/config.toml"]),
            file("/x/mcp-errnorm/config.toml", ConfigOrigin::DefaultLocation)
        );
    }

    #[test]
    fn the_default_location_is_read_only_when_the_file_is_there() {
        let e = env(None, Some("/x"), Some("/h"), false);
        assert_eq!(
            choose(None, &e, &["/x/mcp-errnorm/config.toml"]),
            file("/x/mcp-errnorm/config.toml", ConfigOrigin::DefaultLocation)
        );
        assert_eq!(choose(None, &e, &[]), Ok(ConfigChoice::Embedded));
        // The home's folder is not looked at when XDG_CONFIG_HOME is set.
        assert_eq!(
            choose(None, &e, &["/h/.config/mcp-errnorm/config.toml"]),
            Ok(ConfigChoice::Embedded)
        );
    }

    #[test]
    fn without_xdg_config_home_the_home_folder_decides_by_platform() {
        let linux = env(None, None, Some("/h"), false);
        assert_eq!(
            choose(None, &linux, &["/h/.config/mcp-errnorm/config.toml"]),
            file(
                "/h/.config/mcp-errnorm/config.toml",
                ConfigOrigin::DefaultLocation
            )
        );
        let mac = env(None, None, Some("/Users/u"), true);
        let mac_file = "/Users/u/Library/Application Support/mcp-errnorm/config.toml";
        assert_eq!(
            choose(None, &mac, &[mac_file]),
            file(mac_file, ConfigOrigin::DefaultLocation)
        );
        // A relative XDG_CONFIG_HOME is ignored, as the specification asks.
        let relative = env(None, Some("rel"), Some("/h"), false);
        assert_eq!(
            relative.default_file(),
            Some(PathBuf::from("/h/.config/mcp-errnorm/config.toml"))
        );
    }

    #[test]
    fn no_home_means_the_embedded_defaults_not_a_failure() {
        for e in [
            env(None, None, None, false),
            env(None, None, Some(""), true),
            env(None, Some(""), Some("relative"), false),
        ] {
            assert_eq!(e.default_dir(), None, "{e:?}");
            assert_eq!(
                choose(None, &e, &["relative/.config/mcp-errnorm/config.toml"]),
                Ok(ConfigChoice::Embedded)
            );
        }
    }
}
