//! A store wiped in place under a live stream (db and `-wal` truncated to 0, same inode): the
//! stream gets an error frame saying so, the owner writes its file again, and the stream goes
//! on delivering (issue 8.3).

use crate::common::{Daemon, Writer, is_event, is_note};
use serde_json::json;
use tidings_fixtures::{MacHome, MessagesFixture, MessagesProfile};

#[test]
fn a_store_wiped_in_place_sends_an_error_frame_and_recovers_when_rewritten() {
    let daemon = Daemon::start();
    let home = daemon.home();
    let writer = Writer::new(home.clone());
    let mut client = daemon.client();
    let id = json!(1);
    client.request(
        1,
        "events/stream",
        json!({"name": "messages.received", "arguments": {}}),
    );
    client.wait_for("active", 0, |f| {
        is_note(f, "notifications/events/active", &id)
    });
    let before = writer.message("+12025550142");
    client.wait_for("an event before the wipe", 0, |f| is_event(f, &id, &before));

    let mark = client.mark();
    let db = home.chat_db();
    let inode =
        |p: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let ino = inode(&db);
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    // The -wal may be gone already (the last read-write connection to close deletes it).
    for p in [db.as_os_str().to_owned(), wal] {
        match std::fs::OpenOptions::new().write(true).open(&p) {
            Ok(f) => f.set_len(0).unwrap(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && p != db.as_os_str() => {}
            Err(e) => panic!("cannot open {}: {e}", std::path::Path::new(&p).display()),
        }
    }
    let error = client.wait_for("an error frame for the wiped store", mark, |f| {
        is_note(f, "notifications/events/error", &id)
    });
    assert_eq!(
        error["params"]["error"]["data"]["reason"], "store_empty",
        "{error}"
    );

    // Messages writes its store again, in place (the same inode).
    let other = tempfile::tempdir().unwrap();
    let other_home = MacHome::new(other.path());
    let mut fresh = MessagesFixture::create(&other_home, MessagesProfile::Tahoe).unwrap();
    fresh.checkpoint().unwrap();
    drop(fresh);
    std::fs::write(&db, std::fs::read(other_home.chat_db()).unwrap()).unwrap();
    assert_eq!(inode(&db), ino, "rewritten in place");
    // Its ROWIDs start again below the stream's cursor: a gap, before anything new is written
    // (so the gap cannot swallow the message below).
    let gap = client.wait_for("active with truncated: true", mark, |f| {
        is_note(f, "notifications/events/active", &id) && f["params"]["truncated"] == true
    });
    assert!(gap["params"]["cursor"].is_string(), "{gap}");
    let after = writer.message("+12025550142");
    client.wait_for("an event after the rewrite", mark, |f| {
        is_event(f, &id, &after)
    });
}
