//! Tidings never gets in the owner's way: Mail and Messages can always write their own stores
//! within their busy timeout while Tidings reads, and a store wiped in place is reported, not
//! read from a stale index (issue 8.3).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::*;
use rusqlite::Connection;
use tidings_core::{Cursor, Engine, EventType, StoreError};
use tidings_fixtures::{MailProfile, MessagesProfile, NewMessage};

/// The owner's busy timeout: how long Messages may wait on a lock before it fails a write.
const OWNER_BUSY: Duration = Duration::from_secs(1);

fn owner(db: &Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    conn.busy_timeout(OWNER_BUSY).unwrap();
    conn
}

/// Truncate the db and its `-wal` to 0 bytes, keeping their inodes. The `-wal` may be gone:
/// the last connection to close checkpoints and deletes it, and whether Tidings' reader held
/// one open at that moment is a race.
fn wipe_in_place(db: &Path) {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::OpenOptions::new()
        .write(true)
        .open(db)
        .unwrap()
        .set_len(0)
        .unwrap();
    match std::fs::OpenOptions::new().write(true).open(&wal) {
        Ok(file) => file.set_len(0).unwrap(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("cannot open the -wal: {e}"),
    }
}

fn from_start(engine: &Engine) -> Cursor {
    let s = engine.stamp(EventType::MessagesReceived).unwrap();
    Cursor {
        identity: s.identity,
        rowid: 0,
    }
}

#[test]
fn a_store_wiped_in_place_is_reported_and_its_owner_can_write_it_again() {
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let conn = v.messages.connection();
    let (h, chat): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT min(ROWID) FROM handle), (SELECT min(ROWID) FROM chat)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // A row in the -wal, read once, so Tidings holds a warm connection on a live WAL index.
    v.messages
        .append(&NewMessage::new(h, chat, "in the wal", None))
        .unwrap();
    let sub = everything(EventType::MessagesReceived);
    let start = from_start(&w.engine);
    assert!(!w.engine.next(&sub, start, 10).unwrap().events.is_empty());
    drop(v);

    wipe_in_place(&w.home.chat_db());
    // What the hub does on the file event: the wipe is reported, and nothing stale is read.
    let err = w.engine.stamp(EventType::MessagesReceived).unwrap_err();
    assert!(matches!(err, StoreError::Empty { .. }), "{err:?}");
    assert_eq!(err.reason(), "store_empty");
    assert!(w.engine.next(&sub, start, 10).is_err());

    // Messages writes its file again, within its busy timeout.
    let o = owner(&w.home.chat_db());
    o.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE message (guid TEXT); \
         INSERT INTO message VALUES ('x');",
    )
    .expect("the owner writes its wiped store");
    assert!(w.engine.stamp(EventType::MessagesReceived).is_err());
    o.execute("INSERT INTO message VALUES ('y')", []).unwrap();
}

#[test]
fn the_owner_always_writes_within_its_busy_timeout_while_tidings_reads() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    drop(v);
    let db = w.home.chat_db();
    let World { dir, home, engine } = w;
    let engine = Arc::new(engine);
    let stop = Arc::new(AtomicBool::new(false));
    // Tidings, as busy as it can be: a stamp and a scan from the start, over and over.
    let reader = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            let sub = everything(EventType::MessagesReceived);
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(s) = engine.stamp(EventType::MessagesReceived) {
                    let c = Cursor {
                        identity: s.identity,
                        rowid: 0,
                    };
                    let _ = engine.next(&sub, c, 50);
                }
                reads += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
            reads
        })
    };
    let o = owner(&db);
    o.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    let write = |o: &Connection, i: i64| {
        o.execute(
            "INSERT INTO message (guid, handle_id, date, is_from_me) VALUES (?1, 1, 0, 0)",
            [format!("owner-{i}")],
        )
        .unwrap_or_else(|e| panic!("write {i} failed while Tidings read: {e}"));
    };
    for i in 0..100 {
        write(&o, i);
        if i % 25 == 24 {
            // A checkpoint that waits for readers must get past Tidings too.
            let busy: i64 = o
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
                .unwrap();
            assert_eq!(busy, 0, "a TRUNCATE checkpoint was blocked by a reader");
        }
    }
    // Wiped in place under a running Tidings, then written again by its owner.
    drop(o);
    wipe_in_place(&db);
    let o = owner(&db);
    o.execute_batch(
        "PRAGMA journal_mode=WAL; \
         CREATE TABLE message (guid TEXT, handle_id INTEGER, date INTEGER, is_from_me INTEGER);",
    )
    .expect("the owner recreates its wiped store");
    for i in 100..200 {
        write(&o, i);
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    drop((dir, home));
}
