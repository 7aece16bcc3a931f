//! Watches `settings.toml` (through its directory, as editors and our own atomic save replace
//! the file) and applies each complete, good edit live; a malformed edit is logged once,
//! without its contents, and the last good settings stay in force.
//!
//! The rules (docs/decisions/settings.md, "Reading a live edit"):
//! - only events that can change the content start a read (not our own open or close-read,
//!   which inotify reports, so reacting to them would make every read start the next);
//! - the file is read until two reads [`QUIET`] apart agree, and nothing happens when the
//!   bytes are the ones last seen;
//! - every change applies only when the file is still unchanged after a hold: a file cut off
//!   mid-write can narrow what agents see (a `[messages]` header without its `enabled = true`
//!   turns the type off and ends its streams; a shorter `backfill_days` drops rows for good),
//!   so nothing applies before [`HOLD`]; and it can widen it (`[mail]` and `enabled = true`
//!   written, the `allow` line not yet), so a change that widens what agents see, compared
//!   with the settings in force ([`Settings::widens`]), waits [`WIDENING_HOLD`]. [`judge`]
//!   decides, from explicit instants; the reader only reads and sleeps;
//! - a slow [`SAFETY`] re-read covers events the OS coalesced or lost.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher};
use tidings_core::Settings;
use tidings_core::settings::SettingsError;
use tokio::sync::Notify;

use super::{Daemon, DaemonError};

/// A fixed window (never restarted) that gathers an editor's burst of events into one read.
const SETTLE: Duration = Duration::from_millis(50);

/// Two reads this far apart must agree before the file counts as written.
const QUIET: Duration = Duration::from_millis(100);

/// How long an edit that widens nothing agents see must stay unchanged before it applies.
/// Settings are edited by people; a second costs nothing. (The menu's own changes go through
/// `update_settings` and apply at once.)
const HOLD: Duration = Duration::from_secs(1);

/// How long an edit that widens what agents see must stay unchanged before it applies: a
/// writer that stalls halfway for longer than [`HOLD`] (a sync tool, a script writing line
/// by line) must not open a type or an allowlist on its first half. Long against any pause
/// inside one save, short for a person who just turned something on by hand.
const WIDENING_HOLD: Duration = Duration::from_secs(5);

/// The slow safety re-read, like the hub's tick.
const SAFETY: Duration = Duration::from_secs(30);

/// The bound on one read (a file on a hung network volume must not wedge the watcher).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads before giving up on a file that never stops changing (until the next event).
const MAX_UNSTABLE_READS: usize = 50;

/// What the watcher did, for the tests that count reloads and warnings (test builds only).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Counts {
    /// Passes run (woken by a content event or the safety tick).
    pub(crate) passes: std::sync::atomic::AtomicUsize,
    /// Distinct contents judged.
    pub(crate) reads: std::sync::atomic::AtomicUsize,
    /// Edits refused as malformed.
    pub(crate) rejected: std::sync::atomic::AtomicUsize,
}

/// What one read of the file found; equal snapshots mean nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Snapshot {
    /// No file: the defaults.
    Missing,
    /// The file's bytes.
    Bytes(Vec<u8>),
    /// It could not be read (a FIFO, too large, no permission, timed out): the summary.
    Unreadable(String),
}

impl Snapshot {
    /// Read the file as at start-up: the snapshot and the settings it holds.
    pub(super) fn load(path: &Path) -> Result<(Snapshot, Settings), SettingsError> {
        match Settings::read(path)? {
            Some(bytes) => {
                let settings = Settings::parse_bytes(&bytes, path)?;
                Ok((Snapshot::Bytes(bytes), settings))
            }
            None => Ok((Snapshot::Missing, Settings::default())),
        }
    }
}

/// Install the watcher and spawn the reload task; the task ends at shutdown. `seen` is what
/// the daemon loaded at start.
pub(super) fn start(
    daemon: &Daemon,
    seen: Snapshot,
) -> Result<notify::RecommendedWatcher, DaemonError> {
    let path = daemon.settings_path().to_owned();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => Path::new(".").to_owned(),
    };
    let watch_error = |message: String| DaemonError::SettingsWatch {
        path: dir.clone(),
        message,
    };
    // The directory must exist to be watched; `update_settings` would create it anyway.
    std::fs::create_dir_all(&dir).map_err(|e| watch_error(e.to_string()))?;
    let kick = Arc::new(Notify::new());
    let dirty = Arc::new(AtomicBool::new(false));
    let name = path.file_name().map(std::borrow::ToOwned::to_owned);
    let handler = {
        let (kick, dirty) = (kick.clone(), dirty.clone());
        move |res: notify::Result<notify::Event>| {
            let Ok(event) = res else { return };
            if can_change_content(event.kind)
                && event
                    .paths
                    .iter()
                    .any(|p| p.file_name().is_some() && p.file_name() == name.as_deref())
            {
                dirty.store(true, Ordering::Release);
                kick.notify_one();
            }
        }
    };
    let mut watcher =
        notify::recommended_watcher(handler).map_err(|e| watch_error(e.to_string()))?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| watch_error(e.to_string()))?;
    let mut reader = Reader {
        daemon: daemon.clone(),
        path,
        seen,
    };
    tokio::spawn(async move {
        let shutdown = reader.daemon.shutdown_token().clone();
        let mut safety = tokio::time::interval(SAFETY);
        safety.tick().await;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = kick.notified() => tokio::time::sleep(SETTLE).await,
                _ = safety.tick() => dirty.store(true, Ordering::Release),
            }
            // A permit stored while the last pass ran finds nothing new to do.
            if dirty.swap(false, Ordering::AcqRel) {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = reader.pass(&dirty) => {}
                }
            }
        }
    });
    Ok(watcher)
}

/// Whether an event can mean new content. inotify also reports opens and read-only closes,
/// including our own reads; `FSEvents` coalesces, so anything unclassified counts.
fn can_change_content(kind: EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Create(_)
        | EventKind::Modify(_)
        | EventKind::Remove(_)
        | EventKind::Any
        | EventKind::Other => true,
    }
}

/// The reload task's state.
struct Reader {
    daemon: Daemon,
    path: PathBuf,
    /// The last snapshot judged (applied, refused, or found unchanged).
    seen: Snapshot,
}

impl Reader {
    /// One reload: read until stable, then judge what changed, holding a good edit until
    /// [`judge`] lets it apply. A change seen while holding an edit marks `dirty`, so the
    /// next pass judges the newer content.
    async fn pass(&mut self, dirty: &AtomicBool) {
        #[cfg(test)]
        self.daemon
            .watch_counts()
            .passes
            .fetch_add(1, Ordering::AcqRel);
        let Some(snapshot) = self.read_stable().await else {
            return;
        };
        let since = Instant::now();
        #[cfg(test)]
        if snapshot != self.seen {
            self.daemon
                .watch_counts()
                .reads
                .fetch_add(1, Ordering::AcqRel);
        }
        loop {
            let applied = self.daemon.settings();
            let verdict = judge(
                &self.path,
                &snapshot,
                &self.seen,
                &applied,
                since,
                Instant::now(),
            );
            match verdict {
                Verdict::Unchanged => return,
                Verdict::Reject { line, summary } => {
                    self.seen = snapshot;
                    self.reject(line, summary);
                    return;
                }
                Verdict::Apply(next) => {
                    self.seen = snapshot;
                    self.daemon.apply_settings_from_file(*next);
                    return;
                }
                // Maybe a write in progress: it must still be there, unchanged, then.
                Verdict::HoldUntil(at) => {
                    tokio::time::sleep_until(at.into()).await;
                    if self.read().await != snapshot {
                        dirty.store(true, Ordering::Release);
                        return;
                    }
                }
            }
        }
    }

    /// A bad file: shown in `State` (`tidings status`), logged once (only where it is: the
    /// parser's message may quote an address).
    fn reject(&self, line: Option<usize>, summary: String) {
        tracing::warn!(
            settings = %self.path.display(),
            line = line.unwrap_or(0),
            "settings file is invalid; keeping the last good settings"
        );
        #[cfg(test)]
        self.daemon
            .watch_counts()
            .rejected
            .fetch_add(1, Ordering::AcqRel);
        self.daemon.note_rejected_edit(line, summary);
    }

    /// Read until two reads [`QUIET`] apart agree; `None` when the file never settles.
    async fn read_stable(&self) -> Option<Snapshot> {
        let mut last = self.read().await;
        for _ in 0..MAX_UNSTABLE_READS {
            tokio::time::sleep(QUIET).await;
            let now = self.read().await;
            if now == last {
                return Some(now);
            }
            last = now;
        }
        tracing::warn!(
            settings = %self.path.display(),
            "settings file keeps changing; reading it again on the next change"
        );
        None
    }

    /// One bounded read on a blocking thread.
    async fn read(&self) -> Snapshot {
        let path = self.path.clone();
        let read = tokio::task::spawn_blocking(move || Settings::read(&path));
        match tokio::time::timeout(READ_TIMEOUT, read).await {
            Ok(Ok(Ok(Some(bytes)))) => Snapshot::Bytes(bytes),
            Ok(Ok(Ok(None))) => Snapshot::Missing,
            Ok(Ok(Err(e))) => Snapshot::Unreadable(e.summary()),
            Ok(Err(e)) => Snapshot::Unreadable(format!("settings read failed: {e}")),
            Err(_) => Snapshot::Unreadable(format!(
                "{} could not be read within {} s",
                self.path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                READ_TIMEOUT.as_secs()
            )),
        }
    }
}

/// What to do with a stable read of the file.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The bytes last judged: nothing to do.
    Unchanged,
    /// Malformed or unreadable: refused, the last good settings stay (the line, and a summary
    /// that quotes no value from the file).
    Reject {
        line: Option<usize>,
        summary: String,
    },
    /// Good, and unchanged for long enough: apply it.
    Apply(Box<Settings>),
    /// Good, but not yet unchanged for long enough: read again at this instant, and judge it
    /// again if it is still the same.
    HoldUntil(Instant),
}

/// The watcher's decision on `snapshot` of the file at `path`, read stable at `since` and
/// unchanged until `now`, with `seen` the content last judged and `applied` the settings in
/// force from the file.
/// A good edit applies once it has been unchanged for [`WIDENING_HOLD`] if it widens what
/// agents see, for [`HOLD`] otherwise.
fn judge(
    path: &Path,
    snapshot: &Snapshot,
    seen: &Snapshot,
    applied: &Settings,
    since: Instant,
    now: Instant,
) -> Verdict {
    if snapshot == seen {
        return Verdict::Unchanged;
    }
    let next = match snapshot {
        Snapshot::Missing => Settings::default(),
        Snapshot::Bytes(b) => match Settings::parse_bytes(b, path) {
            Ok(next) => next,
            Err(e) => {
                return Verdict::Reject {
                    line: e.line(),
                    summary: e.summary(),
                };
            }
        },
        Snapshot::Unreadable(summary) => {
            return Verdict::Reject {
                line: None,
                summary: summary.clone(),
            };
        }
    };
    let hold = if next.widens(applied) {
        WIDENING_HOLD
    } else {
        HOLD
    };
    if now.saturating_duration_since(since) >= hold {
        Verdict::Apply(Box::new(next))
    } else {
        Verdict::HoldUntil(since + hold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = "settings.toml";

    /// Mail on for the allowlist only.
    const ALLOWLISTED: &str = "[mail]\nenabled = true\nallow = [\"example.com\"]\n";

    fn bytes(text: &str) -> Snapshot {
        Snapshot::Bytes(text.as_bytes().to_vec())
    }

    fn settings(text: &str) -> Settings {
        Settings::parse(text, Path::new(PATH)).unwrap()
    }

    /// What the reader does with `snapshot`, read stable at `since`, while the file stays so
    /// until `until`: sleep to each instant `judge` names and judge again, until it applies
    /// (the instant it did) or the file changes under it (`None`).
    fn run(
        snapshot: &Snapshot,
        seen: &Snapshot,
        applied: &Settings,
        since: Instant,
        until: Instant,
    ) -> Option<(Instant, Settings)> {
        let mut now = since;
        loop {
            match judge(Path::new(PATH), snapshot, seen, applied, since, now) {
                Verdict::Apply(next) => return Some((now, *next)),
                Verdict::HoldUntil(at) if at >= until => return None,
                Verdict::HoldUntil(at) => now = at,
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_writer_stalled_halfway_never_applies_its_wider_half() {
        // The writer truncates the file, writes `[mail]` and `enabled = true`, stalls for
        // 1.3 s, and only then writes the `allow` line. Its first half parses, and with no
        // allowlist the mail stream of a client that named a stranger would get the
        // stranger's mail.
        let t0 = Instant::now();
        let stall = Duration::from_millis(1300);
        let seen = bytes(ALLOWLISTED);
        let applied = settings(ALLOWLISTED);
        let half = bytes("[mail]\nenabled = true\n");
        assert_eq!(
            run(&half, &seen, &applied, t0, t0 + stall),
            None,
            "the half-written file applied"
        );
        // The whole file, as it was, then changes nothing.
        assert_eq!(
            judge(
                Path::new(PATH),
                &seen,
                &seen,
                &applied,
                t0 + stall,
                t0 + stall
            ),
            Verdict::Unchanged
        );
    }

    #[test]
    fn a_narrowing_edit_applies_after_the_hold_and_a_widening_one_after_the_longer_hold() {
        let t0 = Instant::now();
        let forever = t0 + Duration::from_secs(3600);
        let seen = bytes(ALLOWLISTED);
        let applied = settings(ALLOWLISTED);
        // Narrower: mail off. Unchanged for HOLD, it applies, not before.
        let off = bytes("[mail]\nenabled = false\nallow = [\"example.com\"]\n");
        let (at, next) = run(&off, &seen, &applied, t0, forever).unwrap();
        assert_eq!(at, t0 + HOLD);
        assert!(!next.mail.enabled);
        assert_eq!(
            judge(Path::new(PATH), &off, &seen, &applied, t0, t0 + HOLD / 2),
            Verdict::HoldUntil(t0 + HOLD)
        );
        // An empty file (defaults: everything off) narrows too.
        let (at, next) = run(&Snapshot::Missing, &seen, &applied, t0, forever).unwrap();
        assert_eq!((at, next), (t0 + HOLD, Settings::default()));
        // Wider: a second sender. It applies once unchanged for WIDENING_HOLD, not before.
        let wider = bytes("[mail]\nenabled = true\nallow = [\"example.com\", \"example.org\"]\n");
        let (at, next) = run(&wider, &seen, &applied, t0, forever).unwrap();
        assert_eq!(at, t0 + WIDENING_HOLD);
        assert_eq!(next.mail.allow.len(), 2);
        assert!(WIDENING_HOLD >= 5 * HOLD, "clearly longer");
        // Judged against the settings in force: from mail off, turning it on widens.
        let (at, _) = run(&seen, &off, &settings("[mail]\n"), t0, forever).unwrap();
        assert_eq!(at, t0 + WIDENING_HOLD);
    }

    #[test]
    fn a_bad_or_unreadable_file_is_refused_at_once() {
        let t0 = Instant::now();
        let seen = bytes(ALLOWLISTED);
        let applied = settings(ALLOWLISTED);
        let bad = bytes("[mail]\nenabled = maybe\n");
        let Verdict::Reject { line, summary } =
            judge(Path::new(PATH), &bad, &seen, &applied, t0, t0)
        else {
            panic!("not refused")
        };
        assert_eq!(line, Some(2));
        assert!(summary.starts_with("settings.toml line 2:"), "{summary}");
        let fifo = Snapshot::Unreadable("settings.toml is a FIFO".into());
        assert_eq!(
            judge(Path::new(PATH), &fifo, &seen, &applied, t0, t0),
            Verdict::Reject {
                line: None,
                summary: "settings.toml is a FIFO".into()
            }
        );
    }
}
