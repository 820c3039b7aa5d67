//! The pure part of `install` / `uninstall`: a client config's text in, the edited text out, with
//! a report of what happened to each server. Edits replace only the `command` value and the
//! `args` array of the servers that change (or add `args` after `command` where there was
//! none), so everything else in the file (other keys and their order, `env`, comments,
//! indentation) stays byte for byte.
//!
//! Wrapping reuses the source text of the original command and arguments, and unwrapping reuses
//! the source text of the wrapped ones, with the array's own layout (what follows `[`, what
//! separates two items, what precedes `]`): an install followed by an uninstall gives back the
//! original bytes.

use std::fmt;
use std::ops::Range;

use serde_json::Value;

use super::jsonc::{self, Doc, Kind, Member, Node};

/// What to do with each chosen server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Put the proxy in front of it.
    Install(Wrapper),
    /// Take the proxy away.
    Uninstall,
}

/// How a server is wrapped: `program launcher... options... -- original command and args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    /// The absolute path of the mcp-errnorm binary, or the package runner that fetches it
    /// (`npx`, `uvx`, `pipx`).
    pub program: String,
    /// What the package runner needs to run mcp-errnorm (`-y mcp-errnorm@0.1.0` for `npx`);
    /// empty for the binary itself. See [`runner_prefix`].
    pub launcher: Vec<String>,
    /// The proxy's own options, before `--` (e.g. `--config /abs/path.toml`).
    pub options: Vec<String>,
    /// Whether each server is given its name in the client config with `--name`, after
    /// `options`, so that the logs of several servers tell them apart. A server already
    /// wrapped with a `--name` keeps it.
    pub name: bool,
}

/// What happened (or would happen) to one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Wrapped,
    /// Already wrapped, now with this binary path and these options.
    Rewrapped,
    AlreadyWrapped,
    Unwrapped,
    NotWrapped,
    /// An HTTP or SSE server: nothing to wrap.
    Remote,
    /// No `command`: not a stdio server we understand.
    NoCommand,
    /// Not named by `--server`.
    NotSelected,
}

impl Status {
    pub fn changes(&self) -> bool {
        matches!(
            self,
            Status::Wrapped | Status::Rewrapped | Status::Unwrapped
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Wrapped => "wrapped",
            Status::Rewrapped => "wrapped again with the new options",
            Status::AlreadyWrapped => "already wrapped, unchanged",
            Status::Unwrapped => "unwrapped",
            Status::NotWrapped => "not wrapped, unchanged",
            Status::Remote => "HTTP/SSE server, left alone",
            Status::NoCommand => "no \"command\", left alone",
            Status::NotSelected => "not selected, unchanged",
        })
    }
}

/// One server of the file and its fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// Where the server is listed: `mcpServers`, `servers`, `projects["/path"].mcpServers`.
    pub table: String,
    pub name: String,
    pub status: Status,
}

/// A replacement of `range` in the source by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

/// The result of editing one file.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    /// Sorted, non-overlapping, against the source.
    pub edits: Vec<Edit>,
    pub servers: Vec<ServerReport>,
}

impl Outcome {
    pub fn changed(&self) -> bool {
        !self.edits.is_empty()
    }
}

/// Why a file cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// Line and column (1-based) of a syntax error.
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl EditError {
    fn new(message: impl Into<String>) -> EditError {
        EditError {
            at: None,
            message: message.into(),
        }
    }

    /// `file:line:col: message` or `file: message`.
    pub fn in_file(&self, file: &std::path::Path) -> String {
        match self.at {
            Some((line, col)) => format!("{}:{line}:{col}: {}", file.display(), self.message),
            None => format!("{}: {}", file.display(), self.message),
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((line, col)) = self.at {
            write!(f, "{line}:{col}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// The file names of the proxy's binary.
const PROGRAM_NAMES: [&str; 2] = ["mcp-errnorm", "mcp-errnorm.exe"];

/// The package runners `install` may write in front of mcp-errnorm (see `super::ephemeral`),
/// by file name.
const RUNNERS: [&str; 6] = ["npx", "npx.cmd", "uvx", "uvx.exe", "pipx", "pipx.exe"];

/// Whether `command` + `args` is a server already wrapped by mcp-errnorm: the command is
/// `mcp-errnorm` (by file name) or `own` (this binary's path, whatever its name), or a package
/// runner running mcp-errnorm ([`runner_prefix`]); and the arguments contain `--`.
pub fn is_wrapped(command: &str, args: &[Value], own: Option<&str>) -> bool {
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    (PROGRAM_NAMES.iter().any(|n| file.eq_ignore_ascii_case(n))
        || own == Some(command)
        || runner_prefix(command, args).is_some())
        && args.iter().any(|a| a.as_str() == Some("--"))
}

/// When `command` is a package runner (`npx`, `uvx`, `pipx`) running mcp-errnorm, how many of
/// `args` are the runner's: up to and including the last mcp-errnorm package spec before the
/// first `--` (`mcp-errnorm`, `mcp-errnorm@0.1.0`, `mcp-errnorm==0.1.0`, possibly as
/// `--from=...`). The proxy's own options follow them. None for anything else.
pub fn runner_prefix(command: &str, args: &[Value]) -> Option<usize> {
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    if !RUNNERS.iter().any(|r| file.eq_ignore_ascii_case(r)) {
        return None;
    }
    let is_spec = |arg: &str| {
        let arg = arg
            .split_once('=')
            .filter(|(k, _)| k.starts_with("--"))
            .map_or(arg, |(_, v)| v);
        let rest = arg.strip_prefix(PROGRAM_NAMES[0]);
        matches!(rest, Some(r) if r.is_empty() || r.starts_with('@') || r.starts_with("=="))
    };
    args.iter()
        .map_while(|a| a.as_str().filter(|a| *a != "--"))
        .enumerate()
        .filter(|(_, a)| is_spec(a))
        .map(|(k, _)| k + 1)
        .last()
}

impl Action {
    /// The binary an install wraps servers with.
    pub fn program(&self) -> Option<&str> {
        match self {
            Action::Install(w) => Some(&w.program),
            Action::Uninstall => None,
        }
    }
}

/// Edits every chosen server of `src` (all when `select` is empty).
pub fn apply(src: &str, action: &Action, select: &[String]) -> Result<Outcome, EditError> {
    apply_as(src, action, select, action.program())
}

/// [`apply`], for the binary at `own` (this one): servers it wraps count as wrapped whatever
/// its name.
pub fn apply_as(
    src: &str,
    action: &Action,
    select: &[String],
    own: Option<&str>,
) -> Result<Outcome, EditError> {
    let doc = jsonc::parse(src).map_err(|e| EditError {
        at: Some((e.line, e.col)),
        message: format!("{} (not valid JSON)", e.message),
    })?;
    let tables = server_tables(&doc)?;
    let mut edits = Vec::new();
    let mut servers = Vec::new();
    for (table, node) in &tables {
        let Kind::Object(members) = &node.kind else {
            return Err(EditError::new(format!("\"{table}\" is not an object")));
        };
        for member in members {
            let name = member.key.clone();
            let status = if !select.is_empty() && !select.contains(&name) {
                Status::NotSelected
            } else {
                edit_server(src, &doc, table, member, action, own, &mut edits)?
            };
            servers.push(ServerReport {
                table: table.clone(),
                name,
                status,
            });
        }
    }
    edits.sort_by_key(|e| e.range.start);
    let mut text = String::with_capacity(src.len() + 256);
    let mut at = 0;
    for e in &edits {
        text.push_str(&src[at..e.range.start]);
        text.push_str(&e.text);
        at = e.range.end;
    }
    text.push_str(&src[at..]);
    Ok(Outcome {
        text,
        edits,
        servers,
    })
}

/// The one edit turning `old` into `new`: what lies between their common start and end.
pub fn whole_edit(old: &str, new: &str) -> Edit {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    Edit {
        range: prefix..old.len() - suffix,
        text: new[prefix..new.len() - suffix].to_owned(),
    }
}

/// Whether uninstalling `current` gives back `backup` (the file before `install`) except for
/// what unwrapping cannot know (an `"args"` the original did not have): true when `backup`
/// wraps nothing and unwrapping `current` equals wrapping and unwrapping `backup`. Then the
/// backup's bytes can be restored as they are.
pub fn restores_backup(current: &str, backup: &str, own: Option<&str>) -> bool {
    let unwrap = |text: &str| apply_as(text, &Action::Uninstall, &[], own).ok();
    let Some(before) = unwrap(backup) else {
        return false;
    };
    if before.changed() {
        return false;
    }
    let any = Action::Install(Wrapper {
        program: PROGRAM_NAMES[0].to_owned(),
        launcher: Vec::new(),
        options: Vec::new(),
        name: false,
    });
    let Some(wrapped) = apply(backup, &any, &[]).ok() else {
        return false;
    };
    match (unwrap(&wrapped.text), unwrap(current)) {
        (Some(a), Some(b)) => a.text == b.text,
        _ => false,
    }
}

/// A server as a client's config declares it, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The object that lists it (`mcpServers`, `servers`, `projects["/p"].mcpServers`).
    pub table: String,
    pub name: String,
    /// Reached over HTTP or SSE: no command to run.
    pub remote: bool,
    /// `command`, if it is a string.
    pub command: Option<String>,
    /// The string items of `args`.
    pub args: Vec<String>,
    /// Run through mcp-errnorm ([`is_wrapped`]).
    pub wrapped: bool,
    /// For a wrapped server: the server's own command, the first item after `--`.
    pub inner: Option<String>,
    /// `env.PATH`, when the entry sets one for the server.
    pub path_env: Option<String>,
}

/// Every server `src` (a client's config) declares, in order; `own` is this binary's path, by
/// which the servers it wraps are known whatever its name. Only reads: nothing is checked
/// beyond what telling them apart needs.
pub fn declared(src: &str, own: Option<&str>) -> Result<Vec<Declared>, EditError> {
    let doc = jsonc::parse(src).map_err(|e| EditError {
        at: Some((e.line, e.col)),
        message: format!("{} (not valid JSON)", e.message),
    })?;
    let mut out = Vec::new();
    for (table, node) in server_tables(&doc)? {
        let Kind::Object(members) = &node.kind else {
            return Err(EditError::new(format!("\"{table}\" is not an object")));
        };
        for member in members {
            let server = &member.value;
            let text = |key: &str| server.get(key).and_then(|m| m.value.as_str());
            let transport = text("type");
            let remote = server.get("url").is_some()
                || server.get("serverUrl").is_some()
                || matches!(
                    transport,
                    Some("http" | "sse" | "streamable-http" | "streamableHttp" | "streamable_http")
                );
            let args: Vec<String> = match server.get("args").map(|m| &m.value.kind) {
                Some(Kind::Array(items)) => items
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect(),
                _ => Vec::new(),
            };
            let command = text("command").map(str::to_owned);
            let values: Vec<Value> = args.iter().map(|a| Value::String(a.clone())).collect();
            let wrapped = command
                .as_deref()
                .is_some_and(|c| is_wrapped(c, &values, own));
            let inner = wrapped
                .then(|| {
                    let at = args.iter().position(|a| a == "--")?;
                    args.get(at + 1).cloned()
                })
                .flatten();
            let path_env = server
                .get("env")
                .and_then(|m| m.value.get("PATH"))
                .and_then(|m| m.value.as_str())
                .map(str::to_owned);
            out.push(Declared {
                table: table.clone(),
                name: member.key.clone(),
                remote,
                command,
                args,
                wrapped,
                inner,
                path_env,
            });
        }
    }
    Ok(out)
}

/// The objects listing servers: `mcpServers` (Claude Desktop, Claude Code, Cursor, Windsurf),
/// `servers` (VS Code), and Claude Code's per-project `projects.<path>.mcpServers`.
fn server_tables(doc: &Doc) -> Result<Vec<(String, &Node)>, EditError> {
    let root = &doc.root;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(EditError::new(
            "not an MCP client config: the top level is not a JSON object",
        ));
    }
    let mut tables = Vec::new();
    for key in ["mcpServers", "servers"] {
        if let Some(m) = root.get(key) {
            tables.push((key.to_owned(), &m.value));
        }
    }
    // Claude Code's ~/.claude.json is recognised by its "projects" even with no server yet.
    let mut has_projects = false;
    if let Some(Member {
        value: Node {
            kind: Kind::Object(projects),
            ..
        },
        ..
    }) = root.get("projects")
    {
        has_projects = true;
        for project in projects {
            if let Some(m) = project.value.get("mcpServers") {
                let path = serde_json::to_string(&project.key).unwrap_or_default();
                tables.push((format!("projects[{path}].mcpServers"), &m.value));
            }
        }
    }
    if tables.is_empty() && !has_projects {
        return Err(EditError::new(
            "not an MCP client config: no \"mcpServers\" or \"servers\" object",
        ));
    }
    Ok(tables)
}

// Long: one server's wrap or unwrap, every shape of entry in turn, each edit kept with its span.
fn edit_server(
    src: &str,
    doc: &Doc,
    table: &str,
    member: &Member,
    action: &Action,
    own: Option<&str>,
    edits: &mut Vec<Edit>,
) -> Result<Status, EditError> {
    let name = &member.key;
    let server = &member.value;
    let problem = |what: &str| EditError::new(format!("{table}.{name}: {what}"));
    if !matches!(server.kind, Kind::Object(_)) {
        return Err(problem("not an object"));
    }
    let transport = server.get("type").and_then(|m| m.value.as_str());
    let remote = server.get("url").is_some()
        || server.get("serverUrl").is_some()
        || matches!(
            transport,
            Some("http" | "sse" | "streamable-http" | "streamableHttp" | "streamable_http")
        );
    if remote {
        return Ok(Status::Remote);
    }
    let Some(command) = server.get("command") else {
        return Ok(Status::NoCommand);
    };
    let Some(command_str) = command.value.as_str() else {
        return Err(problem("\"command\" is not a string"));
    };
    let args = server.get("args");
    let items: &[Node] = match args.map(|m| &m.value.kind) {
        None => &[],
        Some(Kind::Array(items)) => items,
        Some(_) => return Err(problem("\"args\" is not an array")),
    };
    if items.iter().any(|n| n.as_str().is_none()) {
        return Err(problem("\"args\" holds something other than strings"));
    }
    if let Some(args) = args {
        let span = &args.value.span;
        if doc
            .comments
            .iter()
            .any(|c| c.start > span.start && c.end < span.end)
        {
            return Err(problem(
                "a comment inside \"args\" cannot be kept; move it out of the array first",
            ));
        }
    }
    let values: Vec<Value> = items.iter().map(|n| n.to_value(src)).collect();
    let wrapped = is_wrapped(command_str, &values, own);
    let raw = |n: &Node| src[n.span.clone()].to_owned();
    // Where the original command is in a wrapped server's args.
    let dashes = values.iter().position(|v| v.as_str() == Some("--"));

    // The new args: `head`, then the old items from `keep_from` on.
    let (new_command, head, keep_from, status) = match action {
        Action::Install(w) => {
            let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
            if wrapped {
                let i = dashes.unwrap_or_default();
                if i + 1 >= items.len() {
                    return Err(problem(
                        "wrapped by mcp-errnorm, but nothing follows \"--\"",
                    ));
                }
                // The options it is wrapped with stay (a `--log-file` set by hand); a new
                // `--config` takes the place of the old one.
                // A package runner's own arguments (`-y mcp-errnorm@0.1.0`) are not options:
                // they make way for `w.launcher`.
                let mut options: Vec<(&str, String)> =
                    w.launcher.iter().map(|o| (o.as_str(), quoted(o))).collect();
                let mut config: Vec<(&str, String)> =
                    w.options.iter().map(|o| (o.as_str(), quoted(o))).collect();
                let mut k = runner_prefix(command_str, &values).unwrap_or(0).min(i);
                while k < i {
                    let o = values[k].as_str().unwrap_or_default();
                    if !w.options.is_empty() && (o == "--config" || o.starts_with("--config=")) {
                        k += if o == "--config" { 2 } else { 1 };
                        options.append(&mut config);
                        continue;
                    }
                    options.push((o, raw(&items[k])));
                    k += 1;
                }
                options.append(&mut config);
                let named = |o: &str| o == "--name" || o.starts_with("--name=");
                if w.name && !options.iter().any(|(o, _)| named(o)) {
                    options.push(("--name", quoted("--name")));
                    options.push((name.as_str(), quoted(name)));
                }
                let old = values[..i].iter().map(|v| v.as_str().unwrap_or_default());
                if command_str == w.program && options.iter().map(|(o, _)| *o).eq(old) {
                    return Ok(Status::AlreadyWrapped);
                }
                let mut head: Vec<String> = options.into_iter().map(|(_, text)| text).collect();
                head.push(quoted("--"));
                (quoted(&w.program), head, i + 1, Status::Rewrapped)
            } else {
                let mut head: Vec<String> = w
                    .launcher
                    .iter()
                    .chain(&w.options)
                    .map(|o| quoted(o))
                    .collect();
                if w.name {
                    head.extend([quoted("--name"), quoted(name)]);
                }
                head.push(quoted("--"));
                head.push(raw(&command.value));
                (quoted(&w.program), head, 0, Status::Wrapped)
            }
        }
        Action::Uninstall => {
            if !wrapped {
                return Ok(Status::NotWrapped);
            }
            let i = dashes.unwrap_or_default();
            let Some(original) = items.get(i + 1) else {
                return Err(problem(
                    "wrapped by mcp-errnorm, but nothing follows \"--\"",
                ));
            };
            (raw(original), Vec::new(), i + 2, Status::Unwrapped)
        }
    };

    edits.push(Edit {
        range: command.value.span.clone(),
        text: new_command,
    });
    match args {
        Some(args) => edits.push(Edit {
            range: args.value.span.clone(),
            text: render_array(src, Some(&args.value), &head, keep_from),
        }),
        None => {
            // No "args": add it right after "command", laid out like "command".
            let before_key = &src[..command.key_span.start];
            let lead_start = before_key.trim_end().len();
            let lead = &before_key[lead_start..];
            // The line break and indentation before "command" (CRLF kept as CRLF).
            let gap = match lead.rfind('\n') {
                Some(i) if lead[..i].ends_with('\r') => format!(",{}", &lead[i - 1..]),
                Some(i) => format!(",{}", &lead[i..]),
                None => ", ".to_owned(),
            };
            let colon = &src[command.key_span.end..command.value.span.start];
            let at = command.value.span.end;
            edits.push(Edit {
                range: at..at,
                text: format!("{gap}\"args\"{colon}{}", render_array(src, None, &head, 0)),
            });
        }
    }
    Ok(status)
}

/// The array `head` (source texts) followed by the items of `like` from `keep_from` on, laid
/// out like `like`: the same text after `[` and before `]`, the kept items with the separators
/// they had, and the separator of `like`'s first two items wherever a new one is needed. Without
/// a model (or from an empty one): `["a", "b"]`.
fn render_array(src: &str, like: Option<&Node>, head: &[String], keep_from: usize) -> String {
    let (old, span): (&[Node], _) = match like {
        Some(Node {
            kind: Kind::Array(items),
            span,
        }) => (items, span.clone()),
        _ => (&[], 0..0),
    };
    let kept = &old[keep_from.min(old.len())..];
    if head.is_empty() && kept.is_empty() {
        return "[]".to_owned();
    }
    let (open, close, sep) = match (old.first(), old.last()) {
        (Some(first), Some(last)) => {
            let open = &src[span.start + 1..first.span.start];
            let sep = match old.get(1) {
                Some(second) => src[first.span.end..second.span.start].to_owned(),
                None if open.contains('\n') => format!(",{open}"),
                None => ", ".to_owned(),
            };
            (open, &src[last.span.end..span.end - 1], sep)
        }
        _ => ("", "", ", ".to_owned()),
    };
    let mut out = format!("[{open}");
    out.push_str(&head.join(&sep));
    for (k, node) in kept.iter().enumerate() {
        if k > 0 {
            out.push_str(&src[kept[k - 1].span.end..node.span.start]);
        } else if !head.is_empty() {
            out.push_str(&sep);
        }
        out.push_str(&src[node.span.clone()]);
    }
    out.push_str(close);
    out.push(']');
    out
}

#[cfg(test)]
mod tests;
