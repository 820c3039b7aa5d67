//! Hot reload of the config and rule files in use. They are polled rather than watched through
//! inotify: editors save by writing a new file and renaming it over the old one, which a watch
//! on the old file never sees. A valid change is swapped in for the next failure; an invalid one
//! is logged with `file:line:col` and the previous table stays. SIGHUP reloads too.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use tokio::signal::unix::{signal, SignalKind};

use crate::config::{Flags, Settings};
use crate::diagnostic::Diagnostics;
use crate::rewrite::Rewriter;

/// How often the files are looked at: a change applies within this (well under a second).
const POLL: Duration = Duration::from_millis(250);
/// A changed file is read only once it has stayed the same this long: an editor that
/// truncates and then writes must not be caught halfway.
const SETTLE: Duration = Duration::from_millis(100);

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
            Ok(settings) => {
                files = settings.files.clone();
                seen = fingerprint(&files);
                shared.store(Arc::new(settings.rewriter()));
                crate::config::release_load_memory();
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
                files = crate::config::files_named(&flags, &files);
                seen = fingerprint(&files);
            }
        }
    }
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
