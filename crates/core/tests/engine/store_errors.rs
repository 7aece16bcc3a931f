//! Each way a store can fail is its own typed error with a clear message, and the engine
//! recovers when the store comes back.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::time::Duration;

use crate::common::*;
use rusqlite::Connection;
use tidings_core::{EventType, Limits, StoreError};
use tidings_fixtures::{MacHome, MailProfile, MessagesProfile};

fn stamp_err(home: &MacHome, ty: EventType) -> StoreError {
    let engine = engine_for(
        home,
        Limits {
            busy_timeout: Duration::from_millis(20),
            ..limits()
        },
    );
    engine.stamp(ty).expect_err("the store should fail")
}

#[test]
fn a_missing_store_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let err = stamp_err(&home, EventType::MailReceived);
    assert!(matches!(err, StoreError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("Envelope Index"), "{err}");
    assert!(matches!(
        stamp_err(&home, EventType::MessagesReceived),
        StoreError::Missing { .. }
    ));
}

#[test]
fn a_vanished_store_is_missing_and_recovers_when_it_returns() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let path = w.home.chat_db();
    let stamp = w.engine.stamp(EventType::MessagesReceived).unwrap();
    let aside = path.with_extension("aside");
    std::fs::rename(&path, &aside).unwrap();
    assert!(matches!(
        w.engine.stamp(EventType::MessagesReceived),
        Err(StoreError::Missing { .. })
    ));
    std::fs::rename(&aside, &path).unwrap();
    assert_eq!(
        w.engine
            .stamp(EventType::MessagesReceived)
            .unwrap()
            .identity,
        stamp.identity
    );
}

#[test]
fn a_corrupt_store_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    std::fs::create_dir_all(home.messages_dir()).unwrap();
    std::fs::write(home.chat_db(), vec![0x5a; 8192]).unwrap();
    let err = stamp_err(&home, EventType::MessagesReceived);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
}

#[test]
fn a_database_without_the_tables_is_an_unsupported_schema() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    std::fs::create_dir_all(home.mail_data_dir()).unwrap();
    Connection::open(home.envelope_index())
        .unwrap()
        .execute_batch("CREATE TABLE t(x);")
        .unwrap();
    let err = stamp_err(&home, EventType::MailReceived);
    assert!(matches!(err, StoreError::Schema { .. }), "{err:?}");
    assert!(err.to_string().contains("messages"), "{err}");
}

#[test]
fn a_store_locked_by_its_owner_is_locked() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    drop(v);
    // The owner takes an exclusive lock and keeps it: in WAL mode that shuts readers out.
    let owner = Connection::open(w.home.chat_db()).unwrap();
    owner.execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE message SET is_read = 1 WHERE ROWID = 1;").unwrap();
    let err = stamp_err(&w.home, EventType::MessagesReceived);
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    assert!(err.to_string().contains("locked"), "{err}");
    owner.execute_batch("COMMIT").unwrap();
}

/// Runs in a child process under another uid (see below): the store is unreadable to it.
#[test]
fn permission_denied_child() {
    let Ok(home) = std::env::var("TIDINGS_TEST_DENIED_HOME") else {
        return;
    };
    let err = stamp_err(&MacHome::new(home), EventType::MessagesReceived);
    assert!(
        matches!(err, StoreError::PermissionDenied { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("Full Disk Access"), "{err}");
}

#[test]
fn an_unreadable_store_is_permission_denied() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    drop(v);
    let db = w.home.chat_db();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o000)).unwrap();
    if tidings_platform_uid() != 0 {
        let err = stamp_err(&w.home, EventType::MessagesReceived);
        assert!(
            matches!(err, StoreError::PermissionDenied { .. }),
            "{err:?}"
        );
        return;
    }
    // Root reads anything, so ask a process of another uid to try, as macOS's TCC would refuse
    // Tidings without Full Disk Access. Every directory on the way must be traversable.
    let mut p = db.parent();
    while let Some(dir) = p {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o711)).unwrap();
        p = dir.parent();
        if dir == w.dir.path() {
            break;
        }
    }
    let exe = std::env::current_exe().unwrap();
    let out = match std::process::Command::new(&exe)
        .args([
            "--exact",
            "store_errors::permission_denied_child",
            "--nocapture",
        ])
        .env("TIDINGS_TEST_DENIED_HOME", &w.home.root)
        .uid(65534)
        .gid(65534)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run the test binary as uid 65534 ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran the check:\n{stdout}"
    );
}

fn tidings_platform_uid() -> u32 {
    // Tests may not use unsafe code; the owner of a file we just created is our uid.
    use std::os::unix::fs::MetadataExt;
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid()
}

#[test]
fn another_os_failure_is_an_io_error_not_a_disguised_sqlite_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    // `Library/Messages` is a file, so looking up `Library/Messages/chat.db` fails with
    // ENOTDIR: neither missing nor refused.
    std::fs::create_dir_all(dir.path().join("Library")).unwrap();
    std::fs::write(dir.path().join("Library/Messages"), b"not a directory").unwrap();
    let err = stamp_err(&home, EventType::MessagesReceived);
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(err.reason(), "store_error");
    assert!(err.to_string().contains("chat.db"), "{err}");
    assert!(!err.public_message().contains(dir.path().to_str().unwrap()));
}

#[test]
fn a_wal_that_cannot_be_looked_at_is_an_io_error_naming_the_wal() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    w.engine.stamp(EventType::MessagesReceived).unwrap();
    // A `-wal` that is a symlink to itself: the OS refuses to look at it (ELOOP), which is
    // neither "no -wal" nor a SQLite failure.
    let wal = w.home.chat_db().with_file_name("chat.db-wal");
    let _ = std::fs::remove_file(&wal);
    std::os::unix::fs::symlink(&wal, &wal).unwrap();
    let err = w.engine.stamp(EventType::MessagesReceived).unwrap_err();
    let StoreError::Io { path, source, .. } = &err else {
        panic!("expected Io, got {err:?}")
    };
    assert_eq!(path, &wal, "{err}");
    assert!(source.raw_os_error().is_some(), "{source:?}");
    assert_eq!(err.reason(), "store_error");
    std::fs::remove_file(&wal).unwrap();
    w.engine.stamp(EventType::MessagesReceived).unwrap();
}
