//! The clients' tests: the activity log, filter counts, revoke, and polls' subscriptions.

use serde_json::json;

use super::*;
use crate::state::Mode;

fn delivery(n: u64) -> Delivery {
    Delivery {
        at_ms: n,
        event_type: "mail.received".into(),
        client_id: 1,
        client_name: None,
        sender: format!("s{n}@example.com"),
    }
}

#[test]
fn the_activity_log_keeps_the_last_deliveries_and_clears() {
    let log = Activity::default();
    let mut changes = log.subscribe();
    for n in 0..(ACTIVITY_LEN as u64 + 5) {
        log.push_quietly(delivery(n));
    }
    let kept = log.snapshot();
    assert_eq!(kept.len(), ACTIVITY_LEN);
    assert_eq!(kept[0].at_ms, 5, "the oldest went first");
    assert!(!changes.has_changed().unwrap(), "told only when bumped");
    log.bump();
    assert!(changes.has_changed().unwrap());
    changes.borrow_and_update();
    log.clear();
    assert!(log.snapshot().is_empty());
    assert!(changes.has_changed().unwrap(), "a clear is a change");
}

#[test]
fn filters_are_counts_and_senders_come_from_the_envelope() {
    let args = json!({"from": ["a@x.com", "b@y.com"], "account": "Work", "chats": null});
    let summary = filter_summary(args.as_object().unwrap());
    assert_eq!(summary, [("account".into(), 1), ("from".into(), 2)].into());
    assert_eq!(
        sender_of(&json!({"from": {"address": "ana@example.com", "name": "Ana"}})),
        "ana@example.com"
    );
    assert_eq!(
        sender_of(&json!({"from": {"handle": "+12025550101", "service": "SMS"}})),
        "+12025550101"
    );
}

#[test]
fn a_revoked_principal_takes_no_stream_and_leaves_the_registry_on_drop() {
    let board = Arc::new(Board::default());
    let clients = Clients::new(ServerLimits::default(), board);
    let conn = ConnectionState::socket(
        &clients,
        &CancellationToken::new(),
        Some(7),
        crate::agents::Agent::new(tidings_platform::identity::AgentIdentity::unidentified()),
    );
    let id = clients.snapshot()[0].id;
    assert!(clients.revoke(id));
    assert!(conn.revoked.is_cancelled());
    let refused = conn.acquire(&RequestId::Number(1)).err();
    assert_eq!(refused, Some(Refusal::Revoked(Revocation::ByUser)));
    assert!(clients.snapshot()[0].revoked);
    drop(conn);
    assert!(clients.snapshot().is_empty());
    assert!(!clients.revoke(id), "gone");
}

#[test]
fn polls_with_ever_new_filters_stay_one_subscription_per_type_and_mode() {
    let board = Arc::new(Board::default());
    let clients = Clients::new(ServerLimits::default(), board);
    let conn = ConnectionState::socket(
        &clients,
        &CancellationToken::new(),
        Some(7),
        crate::agents::Agent::new(tidings_platform::identity::AgentIdentity::unidentified()),
    );
    for n in 1..=300 {
        let from: Vec<String> = (0..n).map(|i| format!("s{i}@x.com")).collect();
        let filter = filter_summary(json!({ "from": from }).as_object().unwrap());
        conn.polled("mail.received", filter, Mode::Poll, &["a@x.com".to_owned()]);
    }
    conn.polled("mail.received", BTreeMap::new(), Mode::Tools, &[]);
    let subs = &clients.snapshot()[0].subscriptions;
    assert_eq!(subs.len(), 2, "{subs:?}");
    let poll = subs.iter().find(|s| s.mode == Mode::Poll).unwrap();
    assert_eq!(poll.delivered, 300);
    assert_eq!(
        poll.filter.get("from"),
        Some(&300),
        "the latest call's filter"
    );
}
