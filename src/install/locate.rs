//! Where each client keeps its MCP config, per OS. Pure: the environment is passed in.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
}

impl Client {
    pub const ALL: [Client; 5] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
        }
    }

    pub fn from_name(name: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.name() == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    MacOs,
    Windows,
    /// Linux and the other Unixes (XDG).
    Unix,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Unix
        }
    }
}

/// What locating depends on.
#[derive(Debug, Clone)]
pub struct Env {
    pub os: Os,
    /// `HOME` (`USERPROFILE` on Windows when `HOME` is not set).
    pub home: Option<PathBuf>,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (Linux; default `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// The current folder, for project configs.
    pub cwd: PathBuf,
}

impl Env {
    pub fn from_process() -> Env {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            os: Os::current(),
            home: var("HOME").or_else(|| var("USERPROFILE")),
            appdata: var("APPDATA"),
            xdg_config_home: var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }

    /// The per-user application data folder: `~/Library/Application Support`, `%APPDATA%`, or
    /// `$XDG_CONFIG_HOME` (`~/.config`).
    fn app_data(&self) -> Option<PathBuf> {
        match self.os {
            Os::MacOs => self
                .home
                .as_ref()
                .map(|h| h.join("Library/Application Support")),
            Os::Windows => self
                .appdata
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join("AppData/Roaming"))),
            Os::Unix => self
                .xdg_config_home
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join(".config"))),
        }
    }
}

/// The config files `client` may use, user files first, then the current folder's.
pub fn candidates(client: Client, env: &Env) -> Vec<PathBuf> {
    let home = |rel: &str| env.home.as_ref().map(|h| h.join(rel));
    let app = |rel: &str| env.app_data().map(|a| a.join(rel));
    let here = |rel: &str| Some(env.cwd.join(rel));
    let paths = match client {
        Client::ClaudeDesktop => vec![app("Claude/claude_desktop_config.json")],
        Client::ClaudeCode => vec![home(".claude.json"), here(".mcp.json")],
        Client::Cursor => vec![home(".cursor/mcp.json"), here(".cursor/mcp.json")],
        Client::Vscode => vec![app("Code/User/mcp.json"), here(".vscode/mcp.json")],
        Client::Windsurf => vec![home(".codeium/windsurf/mcp_config.json")],
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths.into_iter().flatten() {
        if !out.iter().any(|q| same_path(q, &p)) {
            out.push(p);
        }
    }
    out
}

/// Where a client keeps what its servers write on stderr (and so the proxy's log, unless
/// `--log-file` sends it elsewhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPlace {
    /// A folder to look in, when the client writes files.
    pub dir: Option<PathBuf>,
    /// What to look for there, or where to look in the client when it keeps no file.
    pub note: &'static str,
}

/// The places `client` is known to keep its MCP servers' logs on `env.os`. Claude Desktop:
/// `~/Library/Logs/Claude` (macOS), `%APPDATA%\Claude\logs` (Windows; newer builds
/// `%LOCALAPPDATA%\Claude\Logs`), `~/.config/Claude/logs` (Linux). Claude Code: its cache
/// folder, one folder per project and server. Cursor and VS Code keep them in their Output
/// panel; Windsurf's place is not known.
pub fn log_places(client: Client, env: &Env) -> Vec<LogPlace> {
    let home = |rel: &str| env.home.as_ref().map(|h| h.join(rel));
    let place = |dir: Option<PathBuf>, note| LogPlace { dir, note };
    match (client, env.os) {
        (Client::ClaudeDesktop, Os::MacOs) => vec![place(
            home("Library/Logs/Claude"),
            "mcp.log, mcp-server-NAME.log",
        )],
        (Client::ClaudeDesktop, Os::Windows) => vec![place(
            env.app_data().map(|a| a.join("Claude/logs")),
            "mcp.log, mcp-server-NAME.log (newer builds: %LOCALAPPDATA%\\Claude\\Logs)",
        )],
        (Client::ClaudeDesktop, Os::Unix) => vec![place(
            env.app_data().map(|a| a.join("Claude/logs")),
            "mcp.log, mcp-server-NAME.log",
        )],
        (Client::ClaudeCode, Os::MacOs) => vec![place(
            home("Library/Caches/claude-cli-nodejs"),
            "PROJECT/mcp-logs-NAME/",
        )],
        (Client::ClaudeCode, _) => vec![place(
            home(".cache/claude-cli-nodejs"),
            "PROJECT/mcp-logs-NAME/",
        )],
        (Client::Cursor, _) => vec![place(
            None,
            "no file: View > Output, then \"MCP Logs\" in the list",
        )],
        (Client::Vscode, _) => vec![place(
            None,
            "no file: command \"MCP: List Servers\", a server, \"Show Output\"",
        )],
        (Client::Windsurf, _) => vec![place(None, "not known: give the proxy --log-file FILE")],
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(os: Os) -> Env {
        Env {
            os,
            home: Some(PathBuf::from("/h")),
            appdata: Some(PathBuf::from("/appdata")),
            xdg_config_home: None,
            cwd: PathBuf::from("/w"),
        }
    }

    fn paths(client: Client, env: &Env) -> Vec<String> {
        candidates(client, env)
            .iter()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .collect()
    }

    #[test]
    fn per_os_locations() {
        assert_eq!(
            paths(Client::ClaudeDesktop, &env(Os::MacOs)),
            ["/h/Library/Application Support/Claude/claude_desktop_config.json"]
        );
        assert_eq!(
            paths(Client::ClaudeDesktop, &env(Os::Windows)),
            ["/appdata/Claude/claude_desktop_config.json"]
        );
        assert_eq!(
            paths(Client::ClaudeDesktop, &env(Os::Unix)),
            ["/h/.config/Claude/claude_desktop_config.json"]
        );
        let mut xdg = env(Os::Unix);
        xdg.xdg_config_home = Some(PathBuf::from("/x"));
        assert_eq!(
            paths(Client::Vscode, &xdg),
            ["/x/Code/User/mcp.json", "/w/.vscode/mcp.json"]
        );
        assert_eq!(
            paths(Client::ClaudeCode, &env(Os::Unix)),
            ["/h/.claude.json", "/w/.mcp.json"]
        );
        assert_eq!(
            paths(Client::Cursor, &env(Os::Windows)),
            ["/h/.cursor/mcp.json", "/w/.cursor/mcp.json"]
        );
        assert_eq!(
            paths(Client::Windsurf, &env(Os::MacOs)),
            ["/h/.codeium/windsurf/mcp_config.json"]
        );
    }

    #[test]
    fn the_home_folder_as_project_is_listed_once() {
        let mut e = env(Os::Unix);
        e.cwd = PathBuf::from("/h");
        assert_eq!(paths(Client::Cursor, &e), ["/h/.cursor/mcp.json"]);
    }

    #[test]
    fn log_places_per_os() {
        let dirs = |client, os| -> Vec<String> {
            log_places(client, &env(os))
                .into_iter()
                .map(|p| p.dir.map(|d| d.display().to_string()).unwrap_or_default())
                .collect()
        };
        assert_eq!(
            dirs(Client::ClaudeDesktop, Os::MacOs),
            ["/h/Library/Logs/Claude"]
        );
        assert_eq!(
            dirs(Client::ClaudeDesktop, Os::Unix),
            ["/h/.config/Claude/logs"]
        );
        assert_eq!(
            dirs(Client::ClaudeDesktop, Os::Windows),
            ["/appdata/Claude/logs"]
        );
        assert_eq!(
            dirs(Client::ClaudeCode, Os::Unix),
            ["/h/.cache/claude-cli-nodejs"]
        );
        assert_eq!(dirs(Client::Cursor, Os::Unix), [""]);
    }

    #[test]
    fn names() {
        for c in Client::ALL {
            assert_eq!(Client::from_name(c.name()), Some(c));
        }
        assert_eq!(Client::from_name("emacs"), None);
    }
}
