//! Hot reload of the config and rule files in use. They are polled rather than watched through
//! inotify: editors save by writing a new file and renaming it over the old one, which a watch
//! on the old file never sees. A valid change is swapped in for the next failure; an invalid one
//! is logged with `file:line:col` and the previous table stays. SIGHUP reloads too.
//!
//! A rule file that had rules and is now blank was most likely caught being saved (truncated,
//! then written): the reload waits for it to settle again, and is refused if it stays blank. A
//! file that holds only a comment empties it on purpose.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use tokio::signal::unix::{signal, SignalKind};

use crate::config::{Flags, Settings};
use crate::diagnostic::Diagnostics;
use crate::rewrite::Rewriter;
use crate::rules::RuleSet;

/// How often the files are looked at: a change applies within this (well under a second).
const POLL: Duration = Duration::from_millis(250);
/// A changed file is read only once it has stayed the same this long: an editor that
/// truncates and then writes must not be caught halfway.
const SETTLE: Duration = Duration::from_millis(100);
/// How long a rule file that lost every rule to a blank text may take to be written again: an
/// editor that pauses between truncating and writing is done well within it.
const BLANK_SETTLE: Duration = Duration::from_secs(1);

/// The rewriter in force, swapped whole on reload; calls in flight keep the one they loaded.
pub type SharedRewriter = Arc<ArcSwap<Rewriter>>;

/// What identifies a file's version: a rename or a write changes at least one of these.
type Fingerprint = Vec<Option<(SystemTime, u64, u64)>>;

fn fingerprint(files: &[PathBuf]) -> Fingerprint {
    use std::os::unix::fs::MetadataExt;
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.modified().ok()?, m.len(), m.ino()))
        })
        .collect()
}

/// Watches `files` until the process ends, reloading into `shared`.
pub async fn watch(flags: Flags, mut files: Vec<PathBuf>, shared: SharedRewriter) {
    let Ok(mut sighup) = signal(SignalKind::hangup()) else {
        tracing::warn!("cannot install a SIGHUP handler; reload on SIGHUP is off");
        return;
    };
    let mut seen = fingerprint(&files);
    let mut tick = tokio::time::interval(POLL);
    loop {
        let reason = tokio::select! {
            _ = tick.tick() => {
                let mut now = fingerprint(&files);
                if now == seen {
                    continue;
                }
                loop {
                    tokio::time::sleep(SETTLE).await;
                    let settled = fingerprint(&files);
                    if settled == now {
                        break;
                    }
                    now = settled;
                }
                "a file changed"
            }
            _ = sighup.recv() => "SIGHUP",
        };
        let Some(loaded) = load_off_thread(&flags).await else {
            tracing::error!("not reloaded ({reason}): cannot start a thread to load the files");
            continue;
        };
        match loaded {
            Ok(settings) if !blank_files(&shared.load().rules, &settings).is_empty() => {
                // Caught mid-save, or truncated: a further write is waited for. If one comes,
                // the next look at the files reloads it (`seen` is still the last good one).
                let at_blank = fingerprint(&files);
                tokio::time::sleep(BLANK_SETTLE).await;
                if fingerprint(&files) != at_blank {
                    continue;
                }
                let blank = blank_files(&shared.load().rules, &settings);
                if blank.is_empty() {
                    // Written meanwhile with the same size and time: read it again next round.
                    seen = Vec::new();
                    continue;
                }
                for (file, had) in blank {
                    tracing::warn!(
                        "not reloaded ({reason}): {file} is empty but had {had} rule(s); the \
                         previous rules stay in force (to remove every rule of a file on \
                         purpose, leave a comment in it)"
                    );
                }
                seen = fingerprint(&files);
            }
            Ok(settings) => {
                files = settings.files.clone();
                seen = fingerprint(&files);
                shared.store(Arc::new(settings.rewriter()));
                crate::sys::release_memory();
                tracing::info!(
                    rules = settings.rules.rules().len(),
                    "reloaded the rules ({reason}); rules, profile, rewrite_rpc_errors, \
                     not_found_is_empty and [redact] apply now, other config keys at the next start"
                );
            }
            Err(problems) => {
                tracing::error!(
                    "not reloaded ({reason}); the previous rules stay in force:\n{problems}"
                );
                // The files the new config names are watched all the same: fixing one of them
                // is what brings the reload.
                files = crate::files::files_named(&flags, &files);
                seen = fingerprint(&files);
            }
        }
    }
}

/// The user rule files that had rules in `before`, have none in `after` and are blank (no
/// rule, no comment, only white space) now, with how many rules each had.
fn blank_files(before: &RuleSet, after: &Settings) -> Vec<(String, usize)> {
    rules_lost(before, &after.rules)
        .into_iter()
        .filter(|(file, _)| after.files.iter().any(|f| f.display().to_string() == *file))
        .filter(|(file, _)| std::fs::read_to_string(file).is_ok_and(|text| text.trim().is_empty()))
        .collect()
}

/// The user rule files that have rules in `before` and none in `after`, with how many they had.
fn rules_lost(before: &RuleSet, after: &RuleSet) -> Vec<(String, usize)> {
    let mut had: Vec<(String, usize)> = Vec::new();
    for rule in before.rules().iter().filter(|r| r.user) {
        match had.iter_mut().find(|(file, _)| *file == rule.file) {
            Some((_, n)) => *n += 1,
            None => had.push((rule.file.clone(), 1)),
        }
    }
    had.retain(|(file, _)| !after.rules().iter().any(|r| r.user && r.file == *file));
    had
}

/// Loads the files on a thread of its own: a slow load (a thousand large regexes take seconds)
/// must not hold up the runtime, which also passes signals on and shuts the proxy down. Not
/// `spawn_blocking`: dropping the runtime at exit would wait for the load to end.
async fn load_off_thread(flags: &Flags) -> Option<Result<Settings, Diagnostics>> {
    let (done, loaded) = tokio::sync::oneshot::channel();
    let flags = flags.clone();
    std::thread::Builder::new()
        .name("mcp-errnorm-reload".into())
        .spawn(move || {
            let _ = done.send(Settings::load(&flags));
        })
        .ok()?;
    loaded.await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::SourceFile;

    fn rules(files: &[(&str, &str)]) -> RuleSet {
        let user: Vec<SourceFile> = files
            .iter()
            .map(|(name, text)| SourceFile::new(name.to_string(), text.to_string()))
            .collect();
        RuleSet::load(&user, &[]).unwrap()
    }

    #[test]
    fn a_file_that_lost_every_rule_is_named_with_how_many_it_had() {
        let rule =
            |id: &str| format!("[[rule]]\nid = \"{id}\"\nmatch = \"x\"\ncategory = \"business\"\n");
        let two = format!("{}{}", rule("a"), rule("b"));
        let before = rules(&[("one.toml", &two), ("other.toml", &rule("c"))]);
        let after = rules(&[("one.toml", ""), ("other.toml", &rule("c"))]);
        assert_eq!(
            rules_lost(&before, &after),
            vec![("one.toml".to_owned(), 2)]
        );
        let fewer = rules(&[("one.toml", &rule("a")), ("other.toml", &rule("c"))]);
        assert!(rules_lost(&before, &fewer).is_empty(), "one rule left");
    }
}
