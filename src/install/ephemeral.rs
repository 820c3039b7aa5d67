//! Where `install` is run from, and the command it writes: pure (paths and the version in, the
//! command out).
//!
//! `npx -y mcp-errnorm`, `uvx mcp-errnorm` and `pipx run mcp-errnorm` run a binary unpacked in a
//! cache that they may clean or replace at any time (`npm cache clean`, `uv cache prune`, a new
//! version). A client config pointing at that path would break silently later, so `install`
//! run from such a cache writes the runner itself, pinned to this version, instead:
//! `npx -y mcp-errnorm@<version> --`, `uvx mcp-errnorm@<version> --`,
//! `pipx run --spec mcp-errnorm==<version> mcp-errnorm --`.

/// A package runner that keeps its packages in a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Npx,
    Uvx,
    Pipx,
}

impl Runner {
    /// The command that runs this `version` of mcp-errnorm through the runner: the program
    /// and its arguments, to which the proxy's options and `--` are added.
    pub fn command(self, version: &str) -> (String, Vec<String>) {
        let name = "mcp-errnorm";
        match self {
            Runner::Npx => ("npx".into(), vec!["-y".into(), format!("{name}@{version}")]),
            Runner::Uvx => ("uvx".into(), vec![format!("{name}@{version}")]),
            Runner::Pipx => (
                "pipx".into(),
                vec![
                    "run".into(),
                    "--spec".into(),
                    format!("{name}=={version}"),
                    name.into(),
                ],
            ),
        }
    }
}

/// The runner whose cache holds the binary at `path` (as run, or resolved: pass both), if any.
///
/// - npx: `.../_npx/<hash>/node_modules/...` (`~/.npm/_npx`), or a Windows-style `npm-cache`;
/// - uv (`uvx`): a `uv` folder with `archive-v*`, `environments-v*` or `builds-v*` in it
///   (`~/.cache/uv/archive-v0/<hash>/bin`, whatever `UV_CACHE_DIR` says), or `.cache/uv`;
/// - pipx (`pipx run`): `pipx/.cache/<hash>` (`~/.local/share/pipx/.cache`) or `.cache/pipx`.
///
/// A binary installed for good (`npm install -g`, `uv tool install`, `pipx install`,
/// `cargo install`, an archive) is none of these: its path is written as it is.
pub fn runner_of(paths: &[&str]) -> Option<Runner> {
    paths.iter().find_map(|p| classify(p))
}

/// What `install` writes in front of `--`: the binary's path as run (`as_run`) when it is
/// installed for good; from a package runner's cache (told by `as_run` or the resolved path),
/// the runner with the arguments that fetch this `version` again, and the runner.
pub fn launch_command(
    as_run: &str,
    resolved: Option<&str>,
    version: &str,
) -> (String, Vec<String>, Option<Runner>) {
    let paths: Vec<&str> = std::iter::once(as_run).chain(resolved).collect();
    match runner_of(&paths) {
        Some(runner) => {
            let (program, launcher) = runner.command(version);
            (program, launcher, Some(runner))
        }
        None => (as_run.to_owned(), Vec::new(), None),
    }
}

fn classify(path: &str) -> Option<Runner> {
    let path = path.replace('\\', "/");
    let parts: Vec<&str> = path.split('/').collect();
    let has = |s: &str| path.contains(s);
    let after = |dir: &str, prefixes: &[&str]| {
        parts.iter().enumerate().any(|(i, p)| {
            *p == dir
                && parts[i + 1..]
                    .iter()
                    .any(|q| prefixes.iter().any(|pre| q.starts_with(pre)))
        })
    };
    if has("/_npx/") || parts.contains(&"npm-cache") {
        Some(Runner::Npx)
    } else if has("/.cache/uv/") || after("uv", &["archive-v", "environments-v", "builds-v"]) {
        Some(Runner::Uvx)
    } else if has("/pipx/.cache/") || has("/.cache/pipx/") {
        Some(Runner::Pipx)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npx_caches() {
        for p in [
            "/home/me/.npm/_npx/3f2a9c1e/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm",
            "/Users/me/.npm/_npx/3f2a9c1e/node_modules/@mcp-errnorm/darwin-arm64/bin/mcp-errnorm",
            "C:\\Users\\me\\AppData\\Local\\npm-cache\\_npx\\3f2a\\node_modules\\x\\mcp-errnorm.exe",
            "/tmp/npm-cache/_npx/ab/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm",
        ] {
            assert_eq!(runner_of(&[p]), Some(Runner::Npx), "{p}");
        }
    }

    #[test]
    fn uv_caches() {
        for p in [
            "/home/me/.cache/uv/archive-v0/Xy12/bin/mcp-errnorm",
            "/Users/me/.cache/uv/environments-v2/mcp-errnorm-6b1f/bin/mcp-errnorm",
            "/tmp/ci/uv/archive-v0/Xy12/bin/mcp-errnorm",
            "/var/cache/uv/builds-v0/.tmpAb/bin/mcp-errnorm",
        ] {
            assert_eq!(runner_of(&[p]), Some(Runner::Uvx), "{p}");
        }
    }

    #[test]
    fn pipx_caches() {
        for p in [
            "/home/me/.local/share/pipx/.cache/0d3c9e/bin/mcp-errnorm",
            "/Users/me/Library/Application Support/pipx/.cache/0d3c9e/bin/mcp-errnorm",
            "/home/me/.cache/pipx/0d3c9e/bin/mcp-errnorm",
        ] {
            assert_eq!(runner_of(&[p]), Some(Runner::Pipx), "{p}");
        }
    }

    #[test]
    fn installed_for_good_is_no_cache() {
        for p in [
            "/home/me/.cargo/bin/mcp-errnorm",
            "/opt/homebrew/bin/mcp-errnorm",
            "/usr/local/lib/node_modules/mcp-errnorm/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm",
            "/home/me/project/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm",
            "/home/me/.local/bin/mcp-errnorm",
            "/home/me/.local/share/uv/tools/mcp-errnorm/bin/mcp-errnorm",
            "/home/me/.local/share/pipx/venvs/mcp-errnorm/bin/mcp-errnorm",
            "/home/me/src/uv/target/release/mcp-errnorm",
            "/home/me/_npx-notes/mcp-errnorm",
        ] {
            assert_eq!(runner_of(&[p]), None, "{p}");
        }
    }

    #[test]
    fn either_path_tells() {
        // Run through a stable link whose target lies in a cache: the resolved path tells.
        let as_run = "/home/me/bin/mcp-errnorm";
        let resolved = "/home/me/.npm/_npx/ab/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm";
        assert_eq!(runner_of(&[as_run, resolved]), Some(Runner::Npx));
        assert_eq!(runner_of(&[as_run]), None);
    }

    #[test]
    fn launch_command_keeps_a_stable_path() {
        let p = "/home/me/.cargo/bin/mcp-errnorm";
        assert_eq!(
            launch_command(p, Some(p), "0.1.0"),
            (p.to_owned(), vec![], None)
        );
        let cached = "/root/.npm/_npx/1a/node_modules/@mcp-errnorm/linux-x64/bin/mcp-errnorm";
        assert_eq!(
            launch_command(cached, None, "0.1.0"),
            (
                "npx".to_owned(),
                vec!["-y".to_owned(), "mcp-errnorm@0.1.0".to_owned()],
                Some(Runner::Npx)
            )
        );
    }

    #[test]
    fn commands_pin_the_version() {
        let cmd = |r: Runner| {
            let (program, args) = r.command("1.2.3");
            format!("{program} {}", args.join(" "))
        };
        assert_eq!(cmd(Runner::Npx), "npx -y mcp-errnorm@1.2.3");
        assert_eq!(cmd(Runner::Uvx), "uvx mcp-errnorm@1.2.3");
        assert_eq!(
            cmd(Runner::Pipx),
            "pipx run --spec mcp-errnorm==1.2.3 mcp-errnorm"
        );
    }
}
