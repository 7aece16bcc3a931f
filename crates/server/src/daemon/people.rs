//! Contacts kept warm: read at start, read again when a Contacts file changes, and carried by
//! the settings in force so that person and group entries match who they name now.
//!
//! The stores are checked by their files' sizes and times once a [`CONTACTS_CHECK`]; a change
//! is read whole on a blocking thread (numbers the last read saw are not parsed again; see
//! docs/benchmarks.md, "Contacts") and, when what it holds differs, published like a settings edit: every
//! stream rebuilds its subscription, so a number added to an allowed card is allowed from the
//! next commit on and a member removed from an allowed group no longer is.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tidings_core::contacts::{self, Contacts, ContactsPaths, PhoneCache, Region};
use tidings_core::settings::ContactsInForce;

use super::Daemon;
use crate::sync::lock;

/// How often the Contacts files are looked at: a few `stat`s, so cheap; a second is how long
/// an edit in Contacts may take to reach a running stream.
pub(crate) const CONTACTS_CHECK: Duration = Duration::from_secs(1);

/// Where Contacts are read from, and in which region their national numbers are read.
#[derive(Clone, Debug)]
pub struct ContactsSource {
    /// The `AddressBook` directory.
    pub paths: ContactsPaths,
    /// The user's region.
    pub region: Region,
    /// The numbers the last read turned into E.164, so a reload reads only new ones.
    cache: Arc<Mutex<PhoneCache>>,
}

impl ContactsSource {
    /// The stores under `home`, read in `region`.
    pub fn for_home(home: &std::path::Path, region: Region) -> ContactsSource {
        ContactsSource {
            paths: ContactsPaths::for_home(home),
            region,
            cache: Arc::default(),
        }
    }

    /// The demo's stores, read in [`DEMO_REGION`](crate::demo::DEMO_REGION).
    pub fn for_demo(home: &crate::demo::DemoHome) -> ContactsSource {
        let region = Region::parse(crate::demo::DEMO_REGION).expect("the demo's region is one");
        ContactsSource::for_home(home.root(), region)
    }

    /// The user's stores under `home`, read in the Mac's region (`AppleLocale`; the locale
    /// variables on Linux). With no region set, numbers are read as in the United States,
    /// and the log says so: a national number needs some region, and a Mac always has one.
    pub fn for_user(home: &std::path::Path) -> ContactsSource {
        use tidings_platform::locale::{self, LocaleSource};
        let region = locale::current(home, LocaleSource::CURRENT)
            .and_then(|l| Region::from_locale(&l))
            .unwrap_or_else(|| {
                tracing::info!(
                    "no region in the locale; national numbers on cards are read as US numbers"
                );
                Region::parse("US").expect("US is a region")
            });
        ContactsSource::for_home(home, region)
    }

    /// Read every store now.
    pub fn load(&self) -> Contacts {
        contacts::load_cached(&self.paths, &self.region, &mut lock(&self.cache))
    }

    /// What the files look like now: each store and its `-wal`, with size and modified time.
    /// A store added (a new account) or removed changes it too.
    fn stamp(&self) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
        let mut stamp = Vec::new();
        for store in self.paths.stores() {
            let mut wal = store.clone().into_os_string();
            wal.push("-wal");
            for path in [store, PathBuf::from(wal)] {
                let meta = std::fs::metadata(&path).ok();
                let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
                let modified = meta.and_then(|m| m.modified().ok());
                stamp.push((path, size, modified));
            }
        }
        stamp
    }
}

impl Daemon {
    /// The Contacts as last read.
    pub fn contacts(&self) -> Arc<Contacts> {
        lock(&self.inner.contacts).clone()
    }

    /// The settings as configured (whatever a pause hides) with the Contacts as last read:
    /// what each person and group entry stands for now.
    pub fn settings_with_contacts(&self) -> tidings_core::Settings {
        tidings_core::Settings {
            contacts: ContactsInForce(Some(self.contacts())),
            ..(*self.configured()).clone()
        }
    }

    /// Read the Contacts stores again now; when what they hold changed, publish it (streams
    /// rebuild their subscriptions). Blocking: call off the runtime's worker threads.
    pub fn reload_contacts(&self) -> bool {
        let next = self.inner.contacts_source.load();
        let _guard = lock(&self.inner.settings_lock);
        if next.fingerprint() == lock(&self.inner.contacts).fingerprint() {
            return false;
        }
        if let Some(problem) = next.problems().first() {
            // The file and the kind only: never a name or a number.
            tracing::warn!(path = %problem.path.display(), kind = problem.kind.name(), "a Contacts store cannot be read; person and group entries it holds match nobody");
        }
        let (people, groups) = (next.people().len(), next.groups().len());
        *lock(&self.inner.contacts) = Arc::new(next);
        self.publish_locked();
        // After the publish: whoever reads this line finds the new Contacts in force.
        tracing::info!(people, groups, "contacts read");
        true
    }
}

/// The first read, before the daemon serves anything.
pub(super) fn initial(source: &ContactsSource) -> Arc<Contacts> {
    Arc::new(source.load())
}

/// Look at the Contacts files once a [`CONTACTS_CHECK`] and read them again when they change,
/// until shutdown.
pub(super) fn spawn_watch(daemon: &Daemon) {
    let daemon = daemon.clone();
    let shutdown = daemon.inner.shutdown.clone();
    daemon.inner.runtime.clone().spawn(async move {
        let source = daemon.inner.contacts_source.clone();
        let mut seen = {
            let source = source.clone();
            tokio::task::spawn_blocking(move || source.stamp())
                .await
                .unwrap_or_default()
        };
        let mut tick = tokio::time::interval(CONTACTS_CHECK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let (source, daemon, before) = (source.clone(), daemon.clone(), seen.clone());
            let changed = tokio::task::spawn_blocking(move || {
                let now = source.stamp();
                (now != before).then(|| {
                    daemon.reload_contacts();
                    now
                })
            })
            .await;
            if let Ok(Some(now)) = changed {
                seen = now;
            }
        }
    });
}
