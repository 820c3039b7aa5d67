//! `doctor`: what this installation looks like from where the user stands. The version; the
//! config file in use and why; the rules and where they come from; every MCP client config
//! found, the servers each declares, whether mcp-errnorm wraps them and whether their commands
//! can be found; where each client keeps its servers' logs. The problems last; exit 1 when
//! there is one.
//!
//! It prints on purpose (no proxied session runs). The environment is read once, into
//! [`Env`] and the config's [`crate::config::ConfigEnv`], so tests can point it at a temporary
//! home; what it finds is a [`Doctor`] value, shown as text or as JSON.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::commands::RuleArgs;
use crate::config::{ConfigChoice, ConfigOrigin, Settings, CONFIG_ENV};
use crate::exit;
use crate::install::{self, Client, Declared, Env};
use crate::report::table;

/// The options of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub source: RuleArgs,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The config file in use.
#[derive(Debug, Serialize)]
pub struct ConfigReport {
    /// None: no config file, the embedded defaults.
    pub file: Option<PathBuf>,
    /// `--config`, `MCP_ERRNORM_CONFIG`, `default location` or `embedded defaults`.
    pub from: String,
    /// Where the default config file is looked for (none without a home).
    pub default_location: Option<PathBuf>,
    /// The config and the rule files load.
    pub valid: bool,
}

/// Rules from one file.
#[derive(Debug, Serialize)]
pub struct RuleFile {
    pub file: String,
    /// `embedded`, `--rules` or `config`.
    pub from: &'static str,
    pub rules: usize,
}

/// A command of a server, and where it was found.
#[derive(Debug, Serialize)]
pub struct Command {
    pub command: String,
    /// The file it runs; None when it cannot be found.
    pub found: Option<PathBuf>,
}

/// One server of a client's config.
#[derive(Debug, Serialize)]
pub struct Server {
    pub name: String,
    /// The object that lists it in the file.
    pub table: String,
    /// `stdio`, `remote` (HTTP or SSE: nothing to run), or `no command`.
    pub kind: &'static str,
    pub wrapped: bool,
    /// For a wrapped server: how mcp-errnorm is started.
    pub proxy: Option<Command>,
    /// The server's own command.
    pub command: Option<Command>,
}

/// A client's config file, found.
#[derive(Debug, Serialize)]
pub struct ClientFile {
    pub client: &'static str,
    pub file: PathBuf,
    /// Why its servers could not be read, if they could not.
    pub error: Option<String>,
    pub servers: Vec<Server>,
}

/// Where a client keeps its servers' logs.
#[derive(Debug, Serialize)]
pub struct LogPlace {
    pub client: &'static str,
    pub dir: Option<PathBuf>,
    /// Whether `dir` is there.
    pub exists: bool,
    pub note: &'static str,
}

/// Everything `doctor` found.
#[derive(Debug, Serialize)]
pub struct Doctor {
    pub version: &'static str,
    pub config: ConfigReport,
    pub rules: usize,
    pub rule_files: Vec<RuleFile>,
    /// The client config files looked at, found or not.
    pub looked_at: Vec<(&'static str, PathBuf)>,
    pub clients: Vec<ClientFile>,
    pub logs: Vec<LogPlace>,
    /// What is wrong: each one makes the exit status 1.
    pub problems: Vec<String>,
    /// What may be wrong.
    pub warnings: Vec<String>,
}

/// Runs `doctor`: 0 when nothing is wrong, 1 otherwise.
pub fn doctor(args: &DoctorArgs) -> i32 {
    let env = Env::from_process();
    let path = std::env::var("PATH").unwrap_or_default();
    let found = examine(args, &env, &path);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&found).expect("a report is JSON")
        );
    } else {
        print!("{}", found.render());
    }
    if found.problems.is_empty() {
        exit::OK
    } else {
        exit::FOUND
    }
}

fn examine(args: &DoctorArgs, env: &Env, path: &str) -> Doctor {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();

    let default_location = crate::files::config_env().default_file();
    let mut config = ConfigReport {
        file: None,
        from: "embedded defaults".into(),
        default_location,
        valid: false,
    };
    let mut rules = 0;
    let mut rule_files = Vec::new();
    match args.source.flags() {
        Err(missing) => problems.push(format!("the config file: {missing}")),
        Ok((flags, choice)) => {
            if let ConfigChoice::File { path, origin } = &choice {
                config.file = Some(path.clone());
                config.from = match origin {
                    ConfigOrigin::Flag => "--config".into(),
                    ConfigOrigin::Env => CONFIG_ENV.into(),
                    ConfigOrigin::DefaultLocation => "the default location".into(),
                };
            }
            match Settings::load(&flags) {
                Err(diagnostics) => {
                    problems.push(format!(
                        "the config or rule files do not load (run `mcp-errnorm check`):\n{}",
                        diagnostics.to_string().trim_end()
                    ));
                }
                Ok(settings) => {
                    config.valid = true;
                    let all = settings.rules.rules();
                    rules = all.len();
                    for rule in all {
                        match rule_files
                            .iter_mut()
                            .find(|f: &&mut RuleFile| f.file == rule.file)
                        {
                            Some(file) => file.rules += 1,
                            None => rule_files.push(RuleFile {
                                file: rule.file.clone(),
                                from: if !rule.user {
                                    "embedded"
                                } else if args
                                    .source
                                    .rules
                                    .iter()
                                    .any(|p| p.display().to_string() == rule.file)
                                {
                                    "--rules"
                                } else {
                                    "config"
                                },
                                rules: 1,
                            }),
                        }
                    }
                }
            }
        }
    }

    let own = install::own_program().ok();
    let mut looked_at = Vec::new();
    let mut clients = Vec::new();
    for client in Client::ALL {
        for file in install::locate::candidates(client, env) {
            looked_at.push((client.name(), file.clone()));
            if !file.is_file() {
                continue;
            }
            clients.push(client_file(
                client,
                file,
                own.as_deref(),
                env,
                path,
                &mut problems,
                &mut warnings,
            ));
        }
    }

    let logs = Client::ALL
        .into_iter()
        .flat_map(|client| {
            install::log_places(client, env)
                .into_iter()
                .map(move |place| LogPlace {
                    client: client.name(),
                    exists: place.dir.as_deref().is_some_and(Path::is_dir),
                    dir: place.dir,
                    note: place.note,
                })
        })
        .collect();

    Doctor {
        version: env!("CARGO_PKG_VERSION"),
        config,
        rules,
        rule_files,
        looked_at,
        clients,
        logs,
        problems,
        warnings,
    }
}

/// A client's config file read: its servers, each command looked for.
fn client_file(
    client: Client,
    file: PathBuf,
    own: Option<&str>,
    env: &Env,
    path: &str,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> ClientFile {
    let mut out = ClientFile {
        client: client.name(),
        file,
        error: None,
        servers: Vec::new(),
    };
    let declared = std::fs::read_to_string(&out.file)
        .map_err(|e| e.to_string())
        .and_then(|text| install::declared(&text, own).map_err(|e| e.to_string()));
    let declared = match declared {
        Ok(declared) => declared,
        Err(e) => {
            problems.push(format!(
                "{} ({}): cannot be read: {e}",
                out.file.display(),
                client.name()
            ));
            out.error = Some(e);
            return out;
        }
    };
    let is_program = |p: &Path| is_program(p);
    for server in declared {
        let search = server.path_env.as_deref().unwrap_or(path);
        let look = |command: &str| Command {
            command: command.to_owned(),
            found: resolve(command, search, &env.cwd, is_program),
        };
        let (kind, proxy, command) = match (&server, server.remote) {
            (_, true) => ("remote", None, None),
            (
                Declared {
                    command: Some(command),
                    wrapped: true,
                    inner,
                    ..
                },
                _,
            ) => ("stdio", Some(look(command)), inner.as_deref().map(look)),
            (
                Declared {
                    command: Some(command),
                    ..
                },
                _,
            ) => ("stdio", None, Some(look(command))),
            _ => ("no command", None, None),
        };
        let whose = format!(
            "{} ({}): server \"{}\"",
            out.file.display(),
            client.name(),
            server.name
        );
        if let Some(Command {
            command,
            found: None,
        }) = &proxy
        {
            problems.push(format!(
                "{whose}: it is wrapped by mcp-errnorm, but {command} is not found{}",
                on_path(command)
            ));
        }
        match &command {
            Some(Command {
                command,
                found: None,
            }) if server.wrapped => problems.push(format!(
                "{whose}: its command {command} is not found{}",
                on_path(command)
            )),
            Some(Command {
                command,
                found: None,
            }) => warnings.push(format!(
                "{whose}: its command {command} is not found{} (the client may start it with \
                 another PATH)",
                on_path(command)
            )),
            _ => {}
        }
        if kind == "stdio" && server.wrapped && command.is_none() {
            problems.push(format!(
                "{whose}: it is wrapped by mcp-errnorm, but nothing follows \"--\""
            ));
        }
        out.servers.push(Server {
            name: server.name,
            table: server.table,
            kind,
            wrapped: server.wrapped,
            proxy,
            command,
        });
    }
    out
}

fn on_path(command: &str) -> &'static str {
    if command.contains('/') {
        ""
    } else {
        " on PATH"
    }
}

/// An executable regular file.
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The file `command` runs: a path (absolute, or relative to `cwd`) as it is, a bare name
/// looked for in each folder of `path` (`:`-separated), as a shell would.
pub fn resolve(
    command: &str,
    path: &str,
    cwd: &Path,
    is_program: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    if command.contains('/') {
        let file = cwd.join(command);
        return is_program(&file).then_some(file);
    }
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(command))
        .find(|file| is_program(file))
}

impl Doctor {
    /// The text `doctor` prints.
    pub fn render(&self) -> String {
        let mut out = format!("mcp-errnorm {}\n", self.version);

        out.push_str("\nConfig\n");
        let file = match &self.config.file {
            Some(file) => format!("{} (from {})", file.display(), self.config.from),
            None => match &self.config.default_location {
                Some(default) => format!(
                    "none: the embedded defaults ({} does not exist)",
                    default.display()
                ),
                None => "none: the embedded defaults".to_owned(),
            },
        };
        let state = if self.config.valid {
            "loads"
        } else {
            "does not load (see the problems below)"
        };
        out.push_str(&indent(&table(
            &["", ""],
            &[
                vec!["config file".into(), file],
                vec!["config and rules".into(), state.into()],
            ],
        )));

        if self.config.valid {
            out.push_str(&format!("\nRules: {} in all\n", self.rules));
            let rows: Vec<Vec<String>> = self
                .rule_files
                .iter()
                .map(|f| vec![f.file.clone(), f.from.to_owned(), f.rules.to_string()])
                .collect();
            out.push_str(&indent(&table(&["FILE", "FROM", "RULES"], &rows)));
        }

        out.push_str("\nMCP client configs\n");
        let rows: Vec<Vec<String>> = self
            .looked_at
            .iter()
            .map(|(client, file)| {
                let state = if self.clients.iter().any(|c| &c.file == file) {
                    "found"
                } else {
                    "-"
                };
                vec![
                    (*client).to_owned(),
                    state.to_owned(),
                    file.display().to_string(),
                ]
            })
            .collect();
        out.push_str(&indent(&table(&["CLIENT", "", "FILE"], &rows)));

        let found = |c: &Option<Command>| match c {
            None => "-".to_owned(),
            Some(Command {
                command,
                found: Some(file),
            }) if file.as_os_str() == command.as_str() => format!("{command} (found)"),
            Some(Command {
                command,
                found: Some(file),
            }) => format!("{command} -> {}", file.display()),
            Some(Command {
                command,
                found: None,
            }) => format!("{command} (NOT FOUND)"),
        };
        let mut rows = Vec::new();
        for client in &self.clients {
            if let Some(error) = &client.error {
                rows.push(vec![
                    client.client.to_owned(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    format!("unreadable: {error}"),
                ]);
            }
            for server in &client.servers {
                let wrapped = match (server.kind, server.wrapped) {
                    ("stdio", true) => "yes",
                    ("stdio", false) => "no",
                    (kind, _) => kind,
                };
                rows.push(vec![
                    client.client.to_owned(),
                    server.name.clone(),
                    wrapped.to_owned(),
                    found(&server.proxy),
                    found(&server.command),
                ]);
            }
        }
        if self.clients.is_empty() {
            out.push_str("  none of these exists: no client's servers to look at\n");
        }
        if !rows.is_empty() {
            out.push_str("\nServers\n");
            out.push_str(&indent(&table(
                &["CLIENT", "SERVER", "WRAPPED", "MCP-ERRNORM", "COMMAND"],
                &rows,
            )));
        }

        out.push_str("\nWhere the clients keep their servers' logs\n");
        let rows: Vec<Vec<String>> = self
            .logs
            .iter()
            .map(|place| {
                let (dir, state) = match &place.dir {
                    Some(dir) => (
                        dir.display().to_string(),
                        if place.exists { "found" } else { "-" },
                    ),
                    None => ("-".to_owned(), ""),
                };
                vec![
                    place.client.to_owned(),
                    state.to_owned(),
                    dir,
                    place.note.to_owned(),
                ]
            })
            .collect();
        out.push_str(&indent(&table(&["CLIENT", "", "FOLDER", "WHAT"], &rows)));
        out.push_str(
            "  mcp-errnorm logs to the client's log unless --log-file FILE is given; read either \
             with `mcp-errnorm report FILE`.\n",
        );

        if !self.warnings.is_empty() {
            out.push_str("\nWarnings\n");
            for warning in &self.warnings {
                out.push_str(&format!("  - {}\n", warning.replace('\n', "\n    ")));
            }
        }
        if self.problems.is_empty() {
            out.push_str("\nNo problems found.\n");
        } else {
            out.push_str(&format!("\nProblems ({})\n", self.problems.len()));
            for problem in &self.problems {
                out.push_str(&format!("  - {}\n", problem.replace('\n', "\n    ")));
            }
        }
        out
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("  {l}\n")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_looked_for_as_a_shell_would() {
        let programs = ["/usr/bin/npx", "/opt/x/bin/uvx", "/w/run.sh"];
        let is = |p: &Path| programs.iter().any(|q| Path::new(q) == p);
        let cwd = Path::new("/w");
        let path = "/nowhere::/usr/bin:/opt/x/bin";
        assert_eq!(
            resolve("npx", path, cwd, is),
            Some(PathBuf::from("/usr/bin/npx"))
        );
        assert_eq!(
            resolve("uvx", path, cwd, is),
            Some(PathBuf::from("/opt/x/bin/uvx"))
        );
        assert_eq!(resolve("node", path, cwd, is), None);
        assert_eq!(
            resolve("/usr/bin/npx", "", cwd, is),
            Some(PathBuf::from("/usr/bin/npx"))
        );
        assert_eq!(
            resolve("./run.sh", path, cwd, is),
            Some(PathBuf::from("/w/./run.sh"))
        );
        assert_eq!(resolve("/opt/x/bin/missing", path, cwd, is), None);
        assert_eq!(resolve("", path, cwd, is), None);
    }
}
