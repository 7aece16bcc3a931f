//! The file watcher: one `notify` watcher per store directory, turning events on a store's
//! names into kicks.

use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tidings_core::EventType;
use tokio::sync::watch;

use super::Hub;
use super::schedule::{IDLE_SPACING, Kick};
use crate::sync::lock;

/// A directory's watcher and the (device, inode) of the directory it was installed on, so a
/// replaced directory is noticed and watched again.
pub(super) type DirWatch = (RecommendedWatcher, Option<(u64, u64)>);

/// A count of subscriptions and its condition variable: the watcher threads' idle pause waits
/// on it, so a stream that subscribes during a pause is not kept waiting for it.
#[derive(Default)]
pub(super) struct Subscriptions {
    count: Mutex<u64>,
    signal: Condvar,
}

impl Subscriptions {
    pub(super) fn bump(&self) {
        *lock(&self.count) += 1;
        self.signal.notify_all();
    }

    fn current(&self) -> u64 {
        *lock(&self.count)
    }

    /// Block the calling (watcher) thread for `pause`, or until a subscription after `seen`
    /// (a [`current`](Subscriptions::current) count) comes.
    fn pause(&self, seen: u64, pause: Duration) {
        let count = lock(&self.count);
        let _ = self
            .signal
            .wait_timeout_while(count, pause, |now| *now == seen);
    }
}

impl Hub {
    /// Watch the store's directory if it is not watched yet, or if it was replaced. A missing
    /// directory is left to the next tick.
    pub(super) fn ensure_watch(&self, ty: EventType) {
        let Some(dir) = self.store(ty).path.parent().map(Path::to_owned) else {
            return;
        };
        let identity = dir_identity(&dir);
        let mut watchers = lock(&self.inner.watchers);
        if let Some((_, watched)) = watchers.get(&dir)
            && *watched == identity
            && identity.is_some()
        {
            return;
        }
        watchers.remove(&dir);
        if identity.is_none() {
            return;
        }
        let targets: Vec<Target> = self
            .inner
            .stores
            .iter()
            .filter(|s| s.path.parent() == Some(dir.as_path()))
            .filter_map(|s| {
                Some(Target {
                    names: store_names(&s.path)?,
                    kick: s.kick.clone(),
                    wake: s.wake.clone(),
                })
            })
            .collect();
        let subscriptions = self.inner.subscriptions.clone();
        let handler = move |res: notify::Result<notify::Event>| {
            let Ok(event) = res else { return };
            // Read before the receiver counts: a stream subscribing after them ends the pause.
            let seen = subscriptions.current();
            let mut kicked = false;
            for path in &event.paths {
                let Some(name) = path.file_name() else {
                    continue;
                };
                for target in &targets {
                    if target.names.iter().any(|n| n == name) {
                        target.kick.file_event();
                        kicked = true;
                    }
                }
            }
            // Nobody waits on these stores: hold this (the watcher's own) thread for the idle
            // spacing, so the events of a burst queue up in the kernel, where identical ones
            // merge, and are read in one wake-up, instead of waking a thread per write. The
            // hub checks an idle store no more often anyway (`IDLE_SPACING`).
            if kicked && targets.iter().all(|t| t.wake.receiver_count() == 0) {
                subscriptions.pause(seen, IDLE_SPACING);
            }
        };
        let watcher = notify::recommended_watcher(handler).and_then(|mut w| {
            w.watch(&dir, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        match watcher {
            Ok(w) => {
                tracing::debug!(dir = %dir.display(), "watching store directory");
                watchers.insert(dir, (w, identity));
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch store directory; relying on the safety tick");
            }
        }
    }
}

/// What a directory's watcher callback knows of one store in the directory.
struct Target {
    /// The db, `-wal` and `-shm` names.
    names: Vec<OsString>,
    kick: Arc<Kick>,
    /// Whether a stream waits on the store (its receiver count).
    wake: Arc<watch::Sender<u64>>,
}

/// The names whose events matter for the store at `db`: the db, its `-wal` and its `-shm`.
pub(super) fn store_names(db: &Path) -> Option<Vec<OsString>> {
    let name = db.file_name()?;
    Some(
        ["", "-wal", "-shm"]
            .into_iter()
            .map(|suffix| {
                let mut n = name.to_owned();
                n.push(suffix);
                n
            })
            .collect(),
    )
}

fn dir_identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino()))
}
