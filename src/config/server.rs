//! The name a run's logs give the server it wraps: `--name`, or one derived from its command.

/// Commands that start a server named by a later word: package runners and interpreters. The
/// word `run` after one of them (`pipx run`, `deno run`, `docker run`, `uv run`) is skipped too.
pub const LAUNCHERS: &[&str] = &[
    "npx", "bunx", "uvx", "uv", "pipx", "node", "python", "python3", "deno", "docker",
];

/// The server's name for the logs, from its command: the basename of the first word that is
/// not a launcher ([`LAUNCHERS`]), not `run` after one, not an option (`-y`, `--rm`) and not a
/// setting (`KEY=VALUE`), without a version (`@latest`). So `npx -y
/// @modelcontextprotocol/server-filesystem /tmp` is `server-filesystem`, `uvx
/// mcp-server-time` is `mcp-server-time`, `docker run -i --rm mcp/fetch` is `fetch` and
/// `/opt/bin/my-server --port 3` is `my-server`. A command of launchers and options only is
/// named by its first word. (An option's value is taken for the name: `--name` says better.)
pub fn server_name(command: &[String]) -> String {
    let mut after_launcher = false;
    for word in command {
        let name = basename(word);
        if LAUNCHERS.contains(&name) {
            after_launcher = true;
            continue;
        }
        let skipped = word.starts_with('-') || word.contains('=') || name.is_empty();
        if skipped || (after_launcher && word == "run") {
            continue;
        }
        return without_version(name).to_owned();
    }
    command
        .first()
        .map(|w| basename(w).to_owned())
        .unwrap_or_default()
}

fn basename(word: &str) -> &str {
    word.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(word)
}

/// `mcp@latest` -> `mcp`; a name that starts with `@` keeps it.
fn without_version(name: &str) -> &str {
    match name.char_indices().skip(1).find(|&(_, c)| c == '@') {
        Some((i, _)) => &name[..i],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(line: &str) -> String {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        server_name(&words)
    }

    #[test]
    fn a_server_is_named_by_its_first_word_past_launchers_and_options() {
        let cases = [
            (
                "npx -y @modelcontextprotocol/server-filesystem /tmp",
                "server-filesystem",
            ),
            ("npx -y @playwright/mcp@latest", "mcp"),
            ("uvx mcp-server-time --local-timezone X", "mcp-server-time"),
            ("pipx run mcp-server-fetch", "mcp-server-fetch"),
            ("uv run server.py", "server.py"),
            ("python3 -m mcp_server_git", "mcp_server_git"),
            ("/usr/bin/node /srv/weather/index.js", "index.js"),
            ("docker run -i --rm -e TOKEN=x mcp/github", "github"),
            ("/opt/bin/my-server --port 3", "my-server"),
            ("./target/debug/fixture_upstream", "fixture_upstream"),
            ("npx -y", "npx"),
            ("", ""),
        ];
        for (line, expected) in cases {
            assert_eq!(name(line), expected, "{line}");
        }
    }
}
