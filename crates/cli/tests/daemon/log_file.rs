//! The daemon's log file: `tidings serve` writes one in `TIDINGS_LOG_DIR`, at info at most
//! even when it logs debug on stderr, and after a delivery of fixture mail and messages it
//! holds none of their subjects, addresses or handles.

use std::sync::Arc;

use serde_json::json;

use crate::common::{Daemon, Raw, Writer};

#[test]
fn the_log_file_has_no_subject_address_or_handle() {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let logs = tmp.path().join("logs");
    let mut daemon = Daemon::builder().tmp(tmp.clone()).start();
    let mut client = Raw::connect(&daemon.socket, "log-test");
    client.stream(1, "mail.received", json!({"domains": ["example.com"]}));
    let writer = Writer::new(daemon.home());
    let event_id = writer.mail("alice.private@example.com");
    client.wait_for("the event", |f| {
        f["method"] == "notifications/events/event" && f["params"]["eventId"] == event_id.as_str()
    });
    drop(client);
    daemon.terminate();

    let mut log = String::new();
    for entry in std::fs::read_dir(&logs).expect("the log directory was made") {
        log.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(
        log.contains("daemon started"),
        "info lines are kept:\n{log}"
    );
    assert!(!log.contains("DEBUG"), "debug lines stay on stderr:\n{log}");
    assert!(
        daemon.stderr().contains("DEBUG"),
        "stderr does log at debug (the test is not vacuous)"
    );
    assert!(!log.contains("alice.private"), "{log}");
    for value in super::doctor::personal_strings(&daemon.dir) {
        assert!(
            !log.contains(value.as_str()),
            "{value:?} in the log:\n{log}"
        );
    }
}
