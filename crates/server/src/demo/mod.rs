//! Demo mode: a fake Mac home built from the fixtures, demo settings, the simulator thread,
//! and the three conformance controls ([`DemoControl`]) acting on the real files. `control`
//! runs them; `lever` is what the daemon sees of them (the trait and [`ControlError`]).
//!
//! Layout of a demo directory `<dir>` (the directory *is* the fake home):
//!
//! ```text
//! <dir>/Library/Mail/V10/MailData/Envelope Index   (+ -wal, -shm, AccountsMap.plist)
//! <dir>/Library/Messages/chat.db                   (+ -wal, -shm)
//! <dir>/settings.toml                              both types on, the demo allowlist
//! <dir>/tidings.sock                               unless --socket / TIDINGS_SOCKET
//! ```
//!
//! A directory that already holds both stores is reused as it is, settings included, so a
//! restarted demo daemon serves the same files and old cursors still resume. Only a missing
//! store makes us seed both afresh with [`tidings_fixtures::seed_variety`].

mod control;
mod lever;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tidings_core::{Settings, StorePaths};
use tidings_fixtures::{MacHome, MailProfile, MessagesProfile, Simulator};
use tidings_platform::paths::{
    MAX_SOCKET_PATH_BYTES, SOCKET_FILE_NAME, current_uid, ensure_private_dir,
};

pub use lever::{ControlError, DemoControl, Lever, SettingsEditor};

use control::{DemoControls, DemoStores, SimulatorThread, time_seed};

/// How often the simulator steps unless `--simulate` says otherwise.
pub const DEFAULT_SIMULATE_EVERY: Duration = Duration::from_secs(2);

/// The region the demo's Contacts are read in: the simulator's phone numbers are American,
/// and the cards write them nationally.
pub const DEMO_REGION: &str = "US";

/// Seed of the starting variety: fixed, so every fresh demo starts from the same stores.
const VARIETY_SEED: u64 = 42;

/// The demo settings: both types on, allowlisted to the reserved example domains (with their
/// subdomains) and the reserved phone range +1 202 555 0100 to 0199, no update check.
/// Checked by a unit test.
pub const DEMO_SETTINGS: &str = r#"# Tidings demo settings. Edit and save: the running daemon applies a change within a
# second, or after five when it widens what agents see (docs/security.md).
# Only senders on an allowlist can ever reach a client; the demo allows the reserved
# example domains (and their subdomains) and the reserved phone range +1 202 555 0100-0199.

# The demo's Contacts (under Library/Application Support/AddressBook) hold a group, Family,
# allowed below, and cards whose names events carry (contact_names).

[mail]
enabled = true
allow = ["example.com", "example.org", "example.net", "+120255501*", "group: Family [5D1E0A11-0000-4000-8000-00000000FA11:ABGroup]"]
contact_names = true

[messages]
enabled = true
allow = ["example.com", "example.org", "example.net", "+120255501*", "group: Family [5D1E0A11-0000-4000-8000-00000000FA11:ABGroup]"]
contact_names = true

# Every program on this machine may connect without being asked, so the demo works as it
# is; a real install asks you about each new program (new = "ask"). `tidings agents` lists
# them.
[agents]
new = "allow"

# The demo never calls out: no daily check for a newer version.
[updates]
check = false
"#;

/// Why demo mode could not start. Messages name the path. (A lever that cannot act says so
/// with a [`ControlError`].)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// The demo directory could not be created or resolved.
    #[error("demo directory {}: {source}", .path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// Building, opening or changing a fixture store failed.
    #[error("demo stores under {}: {source}", .path.display())]
    Stores {
        /// The fake home.
        path: PathBuf,
        /// What the fixtures said.
        #[source]
        source: tidings_fixtures::Error,
    },
    /// Reading or writing the demo settings failed.
    #[error(transparent)]
    Settings(#[from] tidings_core::settings::SettingsError),
}

/// The demo directory: given with `--data-dir`, or a temporary one removed on drop.
#[derive(Debug)]
pub struct DemoHome {
    root: PathBuf,
    // Dropped last (see `Demo`): removing the temp dir under a running simulator would fail.
    _temp: Option<tempfile::TempDir>,
}

/// Whether [`DemoHome::lay_out`] found stores to reuse or seeded new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Both stores were there and are served as they are.
    Reused,
    /// The variety was written afresh.
    Seeded,
}

impl DemoHome {
    /// Uses `dir` (created 0700 if missing; made absolute, since it ends up in client
    /// configs) or, with `None`, a new temporary directory.
    pub fn create(dir: Option<&Path>) -> Result<DemoHome, DemoError> {
        if let Some(dir) = dir {
            let root = std::path::absolute(dir).map_err(|source| DemoError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
            if !root.exists() {
                // 0700 from the start: the default socket lives here.
                ensure_private_dir(&root).map_err(|e| DemoError::Dir {
                    path: root.clone(),
                    source: std::io::Error::other(e),
                })?;
            }
            Ok(DemoHome { root, _temp: None })
        } else {
            // 0700 explicitly: tempfile leaves the mode to the umask, and the default
            // socket goes in here.
            let temp = tempfile::Builder::new()
                .prefix("tidings-demo-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir()
                .map_err(|source| DemoError::Dir {
                    path: std::env::temp_dir(),
                    source,
                })?;
            Ok(DemoHome {
                root: temp.path().to_path_buf(),
                _temp: Some(temp),
            })
        }
    }

    /// The demo directory, which is also the fake home.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The fake home in the fixtures' terms.
    pub fn mac_home(&self) -> MacHome {
        MacHome::new(&self.root)
    }

    /// Where the stores are, as the daemon looks them up for a real home.
    pub fn store_paths(&self) -> StorePaths {
        StorePaths::for_home(&self.root)
    }

    /// `<dir>/settings.toml`.
    pub fn settings_path(&self) -> PathBuf {
        self.root.join("settings.toml")
    }

    /// `<dir>/tidings.sock`, or, when that does not fit in a socket address, a short path in
    /// `/tmp/tidings-<uid>/` named after a hash of `<dir>` (so a restart finds the same one).
    pub fn default_socket_path(&self) -> PathBuf {
        let preferred = self.root.join(SOCKET_FILE_NAME);
        if preferred.as_os_str().len() <= MAX_SOCKET_PATH_BYTES {
            return preferred;
        }
        let hash = self
            .root
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
        PathBuf::from(format!(
            "/tmp/tidings-{}/demo-{hash:016x}.sock",
            current_uid()
        ))
    }

    /// Reuses both stores if present, else seeds the variety; writes the demo settings if
    /// there are none (an edited settings file survives a restart).
    pub fn lay_out(&self) -> Result<Layout, DemoError> {
        let home = self.mac_home();
        let layout = if home.envelope_index().is_file() && home.chat_db().is_file() {
            Layout::Reused
        } else {
            tidings_fixtures::seed_variety(
                &home,
                MailProfile::V10Macos26,
                MessagesProfile::Tahoe,
                VARIETY_SEED,
            )
            .map_err(|source| self.stores_error(source))?;
            Layout::Seeded
        };
        // Written apart from the mail and messages stores, so a demo directory made before
        // the demo had Contacts gains them.
        if tidings_core::contacts::ContactsPaths::for_home(&self.root)
            .stores()
            .is_empty()
        {
            tidings_fixtures::contacts::demo::write_demo(&home)
                .map_err(|source| self.stores_error(source))?;
        }
        let settings = self.settings_path();
        if !settings.exists() {
            // Validate before writing, so a bad edit to DEMO_SETTINGS fails loudly here.
            Settings::parse(DEMO_SETTINGS, &settings)?;
            crate::settings_file::write(&settings, DEMO_SETTINGS)?;
        }
        Ok(layout)
    }

    fn stores_error(&self, source: tidings_fixtures::Error) -> DemoError {
        DemoError::Stores {
            path: self.root.clone(),
            source,
        }
    }
}

/// A running demo: the controls and, unless `--simulate off`, the simulator thread.
/// Dropping it stops the simulator; drop it before the [`DemoHome`].
#[derive(Debug)]
pub struct Demo {
    simulator: Option<SimulatorThread>,
    stores: Arc<DemoStores>,
}

impl Demo {
    /// Starts the simulator (when `simulate_every` is `Some`) on stores laid out by
    /// [`DemoHome::lay_out`].
    pub fn start(home: &DemoHome, simulate_every: Option<Duration>) -> Result<Demo, DemoError> {
        let seed = time_seed();
        let simulator = match simulate_every {
            Some(_) => Some(
                Simulator::new(&home.mac_home(), seed)
                    .map_err(|source| home.stores_error(source))?,
            ),
            None => None,
        };
        let stores = Arc::new(DemoStores::new(home.mac_home(), simulator, seed));
        let simulator =
            simulate_every.map(|every| SimulatorThread::spawn(Arc::clone(&stores), every));
        Ok(Demo { simulator, stores })
    }

    /// The controls, for `DaemonConfig::demo`.
    pub fn control(&self) -> Arc<dyn DemoControl> {
        Arc::new(DemoControls(Arc::clone(&self.stores)))
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        if let Some(thread) = self.simulator.take() {
            thread.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    /// The file alone, as a lever's settings path: what the daemon's editor does, minus the
    /// applying.
    struct FileEditor(PathBuf);

    impl SettingsEditor for FileEditor {
        fn edit(
            &self,
            change: &mut dyn FnMut(&mut Settings),
        ) -> Result<(), tidings_core::settings::SettingsError> {
            let mut settings = Settings::load(&self.0)?;
            change(&mut settings);
            crate::settings_file::save(&settings, &self.0)
        }
    }

    fn editor(home: &DemoHome) -> Arc<dyn SettingsEditor> {
        Arc::new(FileEditor(home.settings_path()))
    }

    use super::*;
    use tidings_core::EventType;

    #[test]
    fn demo_settings_turn_both_types_on_with_the_allowlist() {
        let s = Settings::parse(DEMO_SETTINGS, Path::new("settings.toml")).unwrap();
        for ty in EventType::ALL {
            assert!(s.for_type(ty).enabled, "{ty}");
            let allow: Vec<String> = s.allowlist(ty).iter().map(ToString::to_string).collect();
            assert_eq!(allow.len(), 5, "{allow:?}");
            assert!(allow.iter().any(|a| a.contains("example.net")), "{allow:?}");
            assert!(allow.iter().any(|a| a.contains("+120255501")), "{allow:?}");
        }
        assert!(!s.updates.check, "the demo never calls out");
    }

    #[test]
    fn a_home_is_seeded_once_and_reused_with_its_settings() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        let home = DemoHome::create(Some(&dir)).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(home.lay_out().unwrap(), Layout::Seeded);
        assert!(home.store_paths().envelope_index.is_file());
        assert!(home.store_paths().chat_db.is_file());
        std::fs::write(home.settings_path(), "[mail]\nenabled = false\n").unwrap();

        let again = DemoHome::create(Some(&dir)).unwrap();
        assert_eq!(again.lay_out().unwrap(), Layout::Reused);
        let kept = std::fs::read_to_string(again.settings_path()).unwrap();
        assert_eq!(kept, "[mail]\nenabled = false\n");
    }

    #[test]
    fn a_temporary_home_is_private_and_holds_the_socket() {
        let home = DemoHome::create(None).unwrap();
        let mode = std::fs::metadata(home.root()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(home.default_socket_path(), home.root().join("tidings.sock"));
        let root = home.root().to_path_buf();
        drop(home);
        assert!(!root.exists());
    }

    #[test]
    fn a_long_home_gets_a_short_stable_socket() {
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(120)));
        let home = DemoHome {
            root: long,
            _temp: None,
        };
        let socket = home.default_socket_path();
        assert!(
            socket.as_os_str().len() <= MAX_SOCKET_PATH_BYTES,
            "{socket:?}"
        );
        assert!(socket.starts_with(format!("/tmp/tidings-{}", current_uid())));
        assert_eq!(socket, home.default_socket_path());
    }

    #[test]
    fn the_controls_act_on_the_files() {
        let home = DemoHome::create(None).unwrap();
        home.lay_out().unwrap();
        let demo = Demo::start(&home, None).unwrap();
        let control = demo.control();
        let db = home.store_paths().envelope_index;

        control.yield_error(EventType::MailReceived).unwrap();
        assert!(!db.exists(), "the store should be away");
        let busy = control.yield_error(EventType::MailReceived);
        assert!(
            matches!(
                busy,
                Err(ControlError::Busy {
                    lever: Lever::YieldError,
                    ty: EventType::MailReceived,
                    ..
                })
            ),
            "no overlap: {busy:?}"
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !db.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(db.exists(), "the store should be back");

        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        let chat = home.store_paths().chat_db;
        let before = inode(&chat);
        control.yield_gap(EventType::MessagesReceived).unwrap();
        assert_ne!(inode(&chat), before, "a rebuild makes a new file");

        control
            .terminate(EventType::MessagesReceived, editor(&home))
            .unwrap();
        let off = Settings::load(&home.settings_path()).unwrap();
        assert!(!off.messages.enabled && off.mail.enabled);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !Settings::load(&home.settings_path())
            .unwrap()
            .messages
            .enabled
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the type should come back on"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_lever_that_cannot_act_says_which_what_and_what_to_do() {
        let home = DemoHome::create(None).unwrap();
        home.lay_out().unwrap();
        let demo = Demo::start(&home, None).unwrap();
        let control = demo.control();
        std::fs::write(home.settings_path(), "[mail\n").unwrap();
        for _ in 0..2 {
            // Twice: a failed lever frees itself, so the second call is not `Busy`.
            let error = control
                .terminate(EventType::MessagesReceived, editor(&home))
                .unwrap_err();
            assert!(
                matches!(
                    error,
                    ControlError::Settings {
                        lever: Lever::Terminate,
                        ty: EventType::MessagesReceived,
                        ..
                    }
                ),
                "{error:?}"
            );
            let text = error.to_string();
            assert!(
                text.starts_with(
                    "events_conformance_terminate for messages.received: settings file"
                ) && text.ends_with(
                    "fix the file, or remove it and restart the demo to get fresh demo settings"
                ),
                "{text}"
            );
        }
    }
}
