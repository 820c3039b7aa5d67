//! What the binary carries for its users besides the proxy: the JSON Schemas of the errors it
//! writes (`schema`), the example config with every key (`init --print`), and the man pages
//! (`man`), made from the command line's own definition so that they never drift from it.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap_mangen::roff::{bold, roman, Roff};

use crate::exit;

/// The example config: every key, its default and what it does.
pub const EXAMPLE_CONFIG: &str = include_str!("../config.example.toml");

/// The JSON Schemas (draft 2020-12) of what the proxy writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Schema {
    /// The error the model reads with `--profile mcp` (the default).
    Mcp,
    /// The error the model reads with `--profile enterprise`.
    Enterprise,
    /// The full error in `_meta["mcp-errnorm/error"]`, whatever the profile.
    Canonical,
}

impl Schema {
    /// The schema's text, as published in `schema/`.
    pub fn text(self) -> &'static str {
        match self {
            Schema::Mcp => include_str!("../schema/profile-mcp.schema.json"),
            Schema::Enterprise => include_str!("../schema/profile-enterprise.schema.json"),
            Schema::Canonical => include_str!("../schema/structured-error.schema.json"),
        }
    }
}

/// Why a man page could not be given.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no subcommand '{0}' (see `mcp-errnorm --help`)")]
    NoSuchPage(String),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoSuchPage(_) => exit::USAGE,
            Error::Write { .. } => exit::CANNOT_CREATE,
        }
    }
}

/// One man page: its name (`mcp-errnorm-rules-list`) and its roff text.
#[derive(Debug, Clone)]
pub struct Page {
    pub name: String,
    pub roff: String,
}

impl Page {
    /// The file it goes in: `mcp-errnorm-install.1`.
    pub fn file_name(&self) -> String {
        format!("{}.1", self.name)
    }
}

/// Every page: the command's own, then one for each subcommand (and each of theirs), hidden
/// ones left out.
pub fn pages(root: clap::Command) -> Vec<Page> {
    let mut root = root.disable_help_subcommand(true);
    root.build();
    let mut out = Vec::new();
    collect(&root, &mut Vec::new(), &mut out);
    out
}

fn collect(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Page>) {
    out.push(page_of(cmd, path));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        path.push(sub.get_name().to_owned());
        collect(sub, path, out);
        path.pop();
    }
}

/// The page of the subcommand named by `words` (`["rules", "list"]`; none: the command's own).
pub fn page(root: clap::Command, words: &[String]) -> Result<Page, Error> {
    let name = std::iter::once("mcp-errnorm")
        .chain(words.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    pages(root)
        .into_iter()
        .find(|p| p.name == name)
        .ok_or_else(|| Error::NoSuchPage(words.join(" ")))
}

/// Writes every page into `dir` (created if need be); the files written.
pub fn write_pages(root: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(failed(dir))?;
    let mut written = Vec::new();
    for page in pages(root) {
        let path = dir.join(page.file_name());
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(page.roff.as_bytes()))
            .map_err(failed(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// One page: clap's sections (name, synopsis, description, options, subcommands, the help's
/// closing text as NOTES), then ENVIRONMENT, EXIT STATUS and SEE ALSO.
fn page_of(cmd: &clap::Command, path: &[String]) -> Page {
    let name = std::iter::once("mcp-errnorm")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let man = clap_mangen::Man::new(cmd.clone()).title(name.clone());
    let mut out: Vec<u8> = Vec::new();
    // Into a Vec: cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut out);
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        let _ = man.render_subcommands_section(&mut out);
    }
    if cmd.get_after_help().is_some() {
        let mut notes = Vec::new();
        let _ = man.render_extra_section(&mut notes);
        let notes = String::from_utf8_lossy(&notes).replacen(".SH EXTRA", ".SH NOTES", 1);
        out.extend_from_slice(notes.as_bytes());
    }
    let mut roff = Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    for (var, meaning) in environment(path) {
        roff.control("TP", []);
        roff.text([bold(var)]);
        roff.text([roman(meaning)]);
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in exit_statuses(path) {
        roff.control("TP", []);
        roff.text([bold(code)]);
        roff.text([roman(meaning)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let see_also = if path.is_empty() {
        "mcp-errnorm-<subcommand>(1) for each subcommand; `mcp-errnorm init --print` for every \
         config key; `mcp-errnorm schema` for the errors' JSON Schemas."
    } else {
        "mcp-errnorm(1)"
    };
    roff.text([roman(see_also)]);
    let _ = roff.to_writer(&mut out);
    if cmd.get_version().is_some() {
        let _ = man.render_version_section(&mut out);
    }
    Page {
        name,
        roff: String::from_utf8_lossy(&out).into_owned(),
    }
}

/// Whether the page of `path` (subcommand words) reads the config (and so the variables that
/// locate it).
fn reads_config(path: &[String]) -> bool {
    match path.first().map(String::as_str) {
        None => true,
        Some(first) => ["check", "classify", "coverage", "rules", "init"].contains(&first),
    }
}

/// The environment variables that matter to the page of `path`, with what they do.
fn environment(path: &[String]) -> Vec<(&'static str, &'static str)> {
    let first = path.first().map(String::as_str);
    let mut vars = Vec::new();
    if reads_config(path) && first != Some("init") {
        vars.push((
            "MCP_ERRNORM_CONFIG",
            "The config file to read when --config is not given (empty counts as unset).",
        ));
    }
    if reads_config(path) || matches!(first, Some("install" | "uninstall")) {
        vars.push((
            "XDG_CONFIG_HOME",
            "The folder of user configs (default: ~/.config): mcp-errnorm's own config is \
             $XDG_CONFIG_HOME/mcp-errnorm/config.toml, and on Linux some clients keep their MCP \
             config there.",
        ));
        vars.push((
            "HOME",
            "Where ~/.config and the clients' configs are looked for.",
        ));
    }
    if matches!(first, None | Some("demo")) {
        vars.push((
            "MCP_ERRNORM_LOG",
            "The log level or tracing filter when --log-level and the config set none (off, \
             error, warn, info, debug, trace).",
        ));
    }
    vars.push((
        "NO_COLOR",
        "Any value but the empty one: no colour (https://no-color.org). --color always wins \
         over it.",
    ));
    vars.push((
        "CLICOLOR_FORCE",
        "Any value but the empty one: colour even when the output is not a terminal, as \
         with --color always (NO_COLOR wins over it).",
    ));
    vars
}

/// The exit statuses of the page of `path`, with what they mean.
fn exit_statuses(path: &[String]) -> Vec<(String, &'static str)> {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    let mut codes: Vec<(i32, &'static str)> = match words.as_slice() {
        [] => {
            return vec![
                (
                    exit::USAGE.to_string(),
                    "Bad usage, or an invalid config or rule file: nothing started.",
                ),
                (
                    exit::CANNOT_START.to_string(),
                    "The server could not be started.",
                ),
                (exit::INTERNAL.to_string(), "An internal error."),
                (
                    "other".to_owned(),
                    "The server's own exit status, or 128+N when a signal N ended it.",
                ),
            ]
        }
        ["check"] => vec![
            (
                exit::OK,
                "The files are valid and every rule's examples pass.",
            ),
            (exit::FOUND, "A rule's example failed."),
            (
                exit::USAGE,
                "Bad usage, invalid files, or a rule of yours that can never fire.",
            ),
        ],
        ["classify"] => vec![
            (exit::OK, "Classified."),
            (
                exit::FOUND,
                "With --jsonl: a line was not a failure record.",
            ),
            (exit::USAGE, "Bad usage, or an invalid config or rule file."),
        ],
        ["coverage"] => vec![
            (exit::OK, "A rule decided every failure."),
            (
                exit::FOUND,
                "Some failures were left undecided, or lines could not be read.",
            ),
            (
                exit::USAGE,
                "Bad usage, an invalid config or rule file, or FILE cannot be read.",
            ),
            (
                exit::CANNOT_CREATE,
                "The --suggest file exists already or cannot be written.",
            ),
        ],
        ["init"] => vec![
            (exit::OK, "Written (or, with --print, printed)."),
            (
                exit::USAGE,
                "Bad usage, or no folder to write into (no --dir, and neither XDG_CONFIG_HOME nor \
                 HOME is set).",
            ),
            (
                exit::CANNOT_CREATE,
                "A file exists already (nothing is overwritten) or cannot be written.",
            ),
        ],
        ["rules", ..] => vec![
            (exit::OK, "Done."),
            (exit::FOUND, "rules show: no rule has that id."),
            (exit::USAGE, "Bad usage, or an invalid config or rule file."),
        ],
        ["install" | "uninstall"] => vec![
            (exit::OK, "Done, or nothing to change."),
            (
                exit::USAGE,
                "Bad usage, no client config found, a config that cannot be edited, or an \
                 invalid --config: nothing changed.",
            ),
            (exit::INTERNAL, "An internal error."),
            (exit::IO_ERROR, "A file could not be written."),
        ],
        ["demo"] => vec![
            (exit::OK, "The demo ran."),
            (exit::USAGE, "Bad usage."),
            (exit::INTERNAL, "The demo server could not be run."),
        ],
        ["man"] => vec![
            (exit::OK, "Printed or written."),
            (exit::USAGE, "Bad usage, or no such subcommand."),
            (
                exit::CANNOT_CREATE,
                "With --dir: a page could not be written.",
            ),
        ],
        _ => vec![(exit::OK, "Done."), (exit::USAGE, "Bad usage.")],
    };
    codes.sort_by_key(|(code, _)| *code);
    codes
        .into_iter()
        .map(|(code, meaning)| (code.to_string(), meaning))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schemas_are_json() {
        for schema in [Schema::Mcp, Schema::Enterprise, Schema::Canonical] {
            let value: serde_json::Value = serde_json::from_str(schema.text()).unwrap();
            assert_eq!(
                value["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }

    #[test]
    fn every_page_has_the_environment_and_the_exit_statuses() {
        let root = clap::Command::new("mcp-errnorm")
            .subcommand(clap::Command::new("check"))
            .subcommand(clap::Command::new("rules").subcommand(clap::Command::new("list")));
        let pages = pages(root);
        let names: Vec<&str> = pages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "mcp-errnorm",
                "mcp-errnorm-check",
                "mcp-errnorm-rules",
                "mcp-errnorm-rules-list"
            ]
        );
        for page in &pages {
            assert!(page.roff.contains("\n.SH ENVIRONMENT\n"), "{}", page.name);
            assert!(
                page.roff.contains("\n.SH \"EXIT STATUS\"\n"),
                "{}",
                page.roff
            );
            assert!(page.roff.contains(&format!(".TH {} 1", page.name)));
        }
    }
}
