//! The running parts of demo mode: the simulator thread and the three conformance controls
//! ([`DemoControl`]), each acting on the real files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tidings_core::EventType;
use tidings_fixtures::{MacHome, MailFixture, MessagesFixture, Simulator};

use super::VARIETY_SEED;
use super::lever::{ControlError, DemoControl, Lever, SettingsEditor};

/// How long `yield_error` keeps a store away: long enough for a watcher to notice, short
/// enough that a conformance run waiting for recovery does not time out.
const AWAY_FOR: Duration = Duration::from_millis(1500);

/// How long `terminate` leaves a type off before turning it back on, so later scenarios of a
/// conformance run find it again.
const OFF_FOR: Duration = Duration::from_secs(1);

/// What the controls and the simulator share. The simulator sits behind a mutex because a
/// rebuild must replace its writers (they would go on writing to the old, unlinked file).
#[derive(Debug)]
pub(super) struct DemoStores {
    home: MacHome,
    simulator: Mutex<Option<Simulator>>,
    seed: u64,
    /// Per type: a store is renamed away by `yield_error`.
    away: [AtomicBool; EventType::COUNT],
    /// Per type: the type is turned off by `terminate`.
    off: [AtomicBool; EventType::COUNT],
}

impl DemoStores {
    pub(super) fn new(home: MacHome, simulator: Option<Simulator>, seed: u64) -> DemoStores {
        DemoStores {
            home,
            simulator: Mutex::new(simulator),
            seed,
            away: [AtomicBool::new(false), AtomicBool::new(false)],
            off: [AtomicBool::new(false), AtomicBool::new(false)],
        }
    }

    fn db_path(&self, ty: EventType) -> PathBuf {
        match ty {
            EventType::MailReceived => self.home.envelope_index(),
            EventType::MessagesReceived => self.home.chat_db(),
        }
    }

    fn lock_simulator(&self) -> MutexGuard<'_, Option<Simulator>> {
        // A panic inside a step must not disable the controls for the rest of the demo.
        crate::sync::lock(&self.simulator)
    }

    fn rebuild_error(&self, ty: EventType, source: tidings_fixtures::Error) -> ControlError {
        ControlError::Rebuild {
            lever: Lever::YieldGap,
            ty,
            home: self.home.root.clone(),
            source,
        }
    }

    /// Renames the db file away, waits [`AWAY_FOR`] and renames it back: the reader sees a
    /// store error, then the very same file (same inode, same ROWIDs), so no gap. A rename
    /// rather than a chmod, since tests and CI run as root, which chmod does not stop.
    /// Returns once the file is away; the simulator is paused until it is back.
    fn make_unreadable(self: &Arc<Self>, ty: EventType) -> Result<(), ControlError> {
        let busy = ControlError::Busy {
            lever: Lever::YieldError,
            ty,
            wait: AWAY_FOR,
        };
        let flag = &self.away[ty.index()];
        if flag.swap(true, Ordering::SeqCst) {
            return Err(busy);
        }
        let (tx, rx) = mpsc::channel();
        let this = Arc::clone(self);
        std::thread::spawn(move || {
            let db = this.db_path(ty);
            let mut away = db.clone().into_os_string();
            away.push(".demo-away");
            let away = PathBuf::from(away);
            // Hold the simulator so it does not write into a moved file meanwhile.
            let _paused = this.lock_simulator();
            let moved = std::fs::rename(&db, &away).map_err(|source| ControlError::Move {
                lever: Lever::YieldError,
                ty,
                path: db.clone(),
                source,
            });
            let ok = moved.is_ok();
            let _ = tx.send(moved);
            if ok {
                std::thread::sleep(AWAY_FOR);
                if let Err(error) = std::fs::rename(&away, &db) {
                    tracing::error!(from = %away.display(), to = %db.display(), %error, "could not move the store back");
                }
            }
            this.away[ty.index()].store(false, Ordering::SeqCst);
        });
        // The thread always sends before it clears the flag; no answer means it died, and the
        // flag stays set, so the lever reads as busy.
        rx.recv().unwrap_or(Err(busy))
    }

    /// Rebuilds the store file as Mail does (new inode, new ROWIDs): a gap for every cursor.
    fn rebuild(&self, ty: EventType) -> Result<(), ControlError> {
        let mut simulator = self.lock_simulator();
        let was_running = simulator.take().is_some();
        let rebuilt = match ty {
            EventType::MailReceived => MailFixture::open(&self.home)
                .and_then(|mail| mail.rebuild(&self.home))
                .map(drop),
            EventType::MessagesReceived => MessagesFixture::open(&self.home)
                .and_then(|messages| messages.rebuild(&self.home))
                .map(drop),
        };
        if was_running {
            // New writers on the new files, whether or not the rebuild worked.
            *simulator = Some(
                Simulator::new(&self.home, self.seed.wrapping_add(1))
                    .map_err(|source| self.rebuild_error(ty, source))?,
            );
        }
        rebuilt.map_err(|source| self.rebuild_error(ty, source))
    }

    /// Turns the type off through `settings` (the daemon saves and applies it at once, ending
    /// streams with `terminated`) and back on after [`OFF_FOR`], in a thread. A user edit
    /// made in that second can be overwritten by the re-enable; acceptable in a demo.
    fn turn_off_briefly(
        self: &Arc<Self>,
        ty: EventType,
        settings: Arc<dyn SettingsEditor>,
    ) -> Result<(), ControlError> {
        let flag = &self.off[ty.index()];
        if flag.swap(true, Ordering::SeqCst) {
            return Err(ControlError::Busy {
                lever: Lever::Terminate,
                ty,
                wait: OFF_FOR,
            });
        }
        if let Err(error) = set_enabled(settings.as_ref(), ty, false) {
            flag.store(false, Ordering::SeqCst);
            return Err(error);
        }
        let this = Arc::clone(self);
        std::thread::spawn(move || {
            std::thread::sleep(OFF_FOR);
            if let Err(error) = set_enabled(settings.as_ref(), ty, true) {
                tracing::error!(%error, "could not turn {ty} back on");
            }
            this.off[ty.index()].store(false, Ordering::SeqCst);
        });
        Ok(())
    }

    fn step(&self) {
        let mut simulator = self.lock_simulator();
        if let Some(sim) = simulator.as_mut() {
            match sim.step() {
                // Row ids only: even fake senders stay out of the logs, by habit.
                Ok(step) => tracing::debug!(
                    mail_rowid = step.mail_rowid,
                    message_rowid = step.message_rowid,
                    "simulator: new mail and message"
                ),
                Err(error) => tracing::warn!(%error, "simulator step failed"),
            }
        }
    }
}

fn set_enabled(
    settings: &dyn SettingsEditor,
    ty: EventType,
    enabled: bool,
) -> Result<(), ControlError> {
    settings
        .edit(&mut |s| s.for_type_mut(ty).enabled = enabled)
        .map_err(|source| ControlError::Settings {
            lever: Lever::Terminate,
            ty,
            source,
        })
}

/// The [`DemoControl`] the daemon calls: a handle on the shared demo state (the controls
/// that act later, in a thread, need the `Arc`).
#[derive(Debug)]
pub(super) struct DemoControls(pub(super) Arc<DemoStores>);

impl DemoControl for DemoControls {
    fn yield_error(&self, ty: EventType) -> Result<(), ControlError> {
        self.0.make_unreadable(ty)
    }

    fn yield_gap(&self, ty: EventType) -> Result<(), ControlError> {
        self.0.rebuild(ty)
    }

    fn terminate(
        &self,
        ty: EventType,
        settings: Arc<dyn SettingsEditor>,
    ) -> Result<(), ControlError> {
        self.0.turn_off_briefly(ty, settings)
    }
}

/// A seed that differs between runs, so a restarted simulator does not repeat Message-IDs.
pub(super) fn time_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(VARIETY_SEED, |d| {
            // A seed: the low 64 bits of the clock are what we want.
            #[allow(clippy::cast_possible_truncation)]
            let seed = d.as_nanos() as u64;
            seed
        })
}

/// The simulator's thread: one step every `every`, stopped through a channel.
#[derive(Debug)]
pub(super) struct SimulatorThread {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

impl SimulatorThread {
    pub(super) fn spawn(stores: Arc<DemoStores>, every: Duration) -> SimulatorThread {
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            // A message or a dropped sender both mean stop.
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                stores.step();
            }
        });
        SimulatorThread { stop, handle }
    }

    pub(super) fn stop(self) {
        let _ = self.stop.send(());
        if self.handle.join().is_err() {
            tracing::warn!("the simulator thread panicked");
        }
    }
}
