//! The settings file as the watcher reads it: one reload per edit, one warning per bad file,
//! no partial write applied, no FIFO wedging it.

use std::io::Write as _;
use std::time::Duration;

use super::support::{Harness, both_on};

/// Long enough for the old watcher to have re-read the file a dozen times (it looped every
/// 50 ms); this only bounds how long we look for repeats, nothing is timed.
const QUIET_LOOK: Duration = Duration::from_millis(1500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_file_is_warned_about_once() {
    let h = Harness::new(both_on).await;
    std::fs::write(&h.settings_path, "[mail]\nenabled = maybe\n").unwrap();
    h.until_daemon("the bad edit to be read", |d| {
        d.watch_counts()
            .rejected
            .load(std::sync::atomic::Ordering::Acquire)
            >= 1
    })
    .await;
    tokio::time::sleep(QUIET_LOOK).await;
    assert_eq!(
        h.daemon
            .watch_counts()
            .rejected
            .load(std::sync::atomic::Ordering::Acquire),
        1,
        "one bad file, one warning"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_file_shows_in_status_until_fixed() {
    let h = Harness::new(both_on).await;
    assert_eq!(h.daemon.state().settings.describe(), "ok");
    std::fs::write(
        &h.settings_path,
        "[mail]\nenabled = true\n\nallow = [\"ana@example.com\", \"everyone\"]\n",
    )
    .unwrap();
    h.until("the rejection to show", |s| s.settings.describe() != "ok")
        .await;
    assert_eq!(
        h.daemon.state().settings.describe(),
        "settings.toml line 4: `…` is not an address, a phone number, a domain or a prefix \
         ending in `*`; using the last good settings",
        "the line and the reason, and no value from the file"
    );
    std::fs::write(&h.settings_path, "[mail]\nenabled = maybe\n").unwrap();
    h.until("the second rejection", |s| {
        s.settings.describe().contains("line 2")
    })
    .await;
    assert_eq!(
        h.daemon.state().settings.describe(),
        "settings.toml line 2: string values must be quoted, expected literal string; \
         using the last good settings"
    );
    let mut good = h.daemon.settings();
    good.messages.enabled = false;
    crate::settings_file::save(&good, &h.settings_path).unwrap();
    h.until("the fix to clear it", |s| s.settings.describe() == "ok")
        .await;
    assert!(!h.daemon.settings().messages.enabled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_edit_is_one_reload() {
    let h = Harness::new(both_on).await;
    // As an editor saves: truncate and write in place.
    std::fs::write(&h.settings_path, "[mail]\nenabled = true\n[messages]\n").unwrap();
    h.until_daemon("the edit to apply", |d| !d.settings().messages.enabled)
        .await;
    tokio::time::sleep(QUIET_LOOK).await;
    let counts = h.daemon.watch_counts();
    let (passes, reads) = (
        counts.passes.load(std::sync::atomic::Ordering::Acquire),
        counts.reads.load(std::sync::atomic::Ordering::Acquire),
    );
    assert_eq!(reads, 1, "one edit, one reload");
    // The write's events may straddle the settle window; our own reads never wake it.
    assert!(passes <= 2, "{passes} passes for one edit");
}

/// Every settings value the daemon applies, in order.
fn record(h: &Harness) -> std::sync::Arc<std::sync::Mutex<Vec<tidings_core::Settings>>> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut rx = h.daemon.settings_receiver();
    let log = seen.clone();
    tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            let s = (**rx.borrow_and_update()).clone();
            log.lock().unwrap().push(s);
        }
    });
    seen
}

/// Long enough for the watcher to see each step as a stable file; shorter than its hold.
const STEP: Duration = Duration::from_millis(250);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncate_then_write_never_applies_the_partial_file() {
    let h = Harness::new(|s| {
        both_on(s);
        super::support::allow(s, "example.com");
    })
    .await;
    let applied = record(&h);
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            serde_json::json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    let mut file = std::fs::File::create(&h.settings_path).unwrap(); // truncates
    tokio::time::sleep(STEP).await;
    // Half written: mail on with its allowlist not yet there (wider), messages gone.
    file.write_all(b"[mail]\nenabled = true\n").unwrap();
    tokio::time::sleep(STEP).await;
    file.write_all(b"allow = [\"example.com\"]\n\n[messages]\nenabled = false\n")
        .unwrap();
    drop(file);
    h.until_daemon("the complete edit to apply", |d| {
        !d.settings().messages.enabled
    })
    .await;
    // The recorder runs on its own task: wait until it has logged the complete edit too (any
    // partial one would have been logged before it).
    let logged = applied.clone();
    h.until_daemon("the recorder to log the complete edit", move |_| {
        logged.lock().unwrap().iter().any(|s| !s.messages.enabled)
    })
    .await;
    let applied = applied.lock().unwrap().clone();
    assert_eq!(
        applied.len(),
        1,
        "only the complete file applies: {applied:?}"
    );
    assert!(applied[0].mail.enabled);
    assert_eq!(applied[0].mail.allow.len(), 1);
    // The mail stream was never ended by the empty moment.
    c.note_of(id, "notifications/events/heartbeat").await;
    assert!(
        c.buffered_for(id)
            .iter()
            .all(|n| n["method"] != "notifications/events/terminated")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_moment_changes_nothing_but_a_file_left_empty_applies() {
    let h = Harness::new(both_on).await;
    let applied = record(&h);
    let before = std::fs::read(&h.settings_path).unwrap();
    std::fs::write(&h.settings_path, "").unwrap();
    tokio::time::sleep(STEP).await;
    std::fs::write(&h.settings_path, &before).unwrap();
    tokio::time::sleep(QUIET_LOOK).await;
    assert!(
        applied.lock().unwrap().is_empty(),
        "the empty moment applied"
    );
    // Emptied on purpose and left so: everything off, after the hold.
    std::fs::write(&h.settings_path, "").unwrap();
    h.until_daemon("the empty file to apply", |d| !d.settings().mail.enabled)
        .await;
    assert_eq!(h.daemon.settings(), tidings_core::Settings::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_refused_and_does_not_wedge_later_reloads() {
    let h = Harness::new(both_on).await;
    std::fs::remove_file(&h.settings_path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&h.settings_path)
        .status()
        .unwrap();
    assert!(made.success());
    h.until("the FIFO to be refused", |s| {
        s.settings.describe().contains("FIFO")
    })
    .await;
    assert_eq!(
        h.daemon.state().settings.describe(),
        "settings.toml is a FIFO, not a regular file; using the last good settings"
    );
    assert!(h.daemon.settings().mail.enabled);
    std::fs::remove_file(&h.settings_path).unwrap();
    std::fs::write(&h.settings_path, "[mail]\nenabled = true\n[messages]\n").unwrap();
    h.until_daemon("the next edit to apply", |d| !d.settings().messages.enabled)
        .await;
    assert_eq!(h.daemon.state().settings.describe(), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_written_file_that_narrows_is_not_applied_either() {
    let h = Harness::new(both_on).await;
    let applied = record(&h);
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            serde_json::json!({"name": "messages.received", "arguments": {"from": ["+12025550101"]}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    let complete = std::fs::read_to_string(&h.settings_path).unwrap();
    let cut = complete.find("[messages]").expect("a messages section") + "[messages]\n".len();
    // Cut off after the header: `enabled` is missing, which reads as "messages off". It
    // parses, narrows, and sits there long enough for two reads to agree.
    let mut file = std::fs::File::create(&h.settings_path).unwrap();
    file.write_all(&complete.as_bytes()[..cut]).unwrap();
    tokio::time::sleep(STEP * 3).await;
    file.write_all(&complete.as_bytes()[cut..]).unwrap();
    drop(file);
    tokio::time::sleep(QUIET_LOOK).await;
    assert!(
        applied.lock().unwrap().is_empty(),
        "the half-written file applied"
    );
    c.note_of(id, "notifications/events/heartbeat").await;
    assert!(
        c.buffered_for(id)
            .iter()
            .all(|n| n["method"] != "notifications/events/terminated"),
        "the stream was ended by a partial write"
    );
}
