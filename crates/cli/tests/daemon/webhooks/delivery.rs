//! What a subscription delivers: the challenge, then each new mail as a signed POST (plain
//! and over TLS), in store order; a failing receiver retried with fresh signatures; 410 and
//! 413 given up on; a rotated secret signing beside the new one.

use std::os::unix::fs::PermissionsExt;

use super::receiver::{Receiver, Reply, SECRET_A, SECRET_B, Seen, accepting, echoing};
use super::{Agent, daemon_allowing, rowid, settings};
use crate::common::{Daemon, Writer};

/// The checks every event delivery passes: POST to the URL's path, JSON, the three
/// `webhook-*` headers signed under `secret`, and the subscription's id.
fn assert_signed_delivery(seen: &Seen, secret: &str, subscription: &str) {
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/hook");
    assert_eq!(seen.header("content-type"), "application/json");
    assert!(!seen.header("webhook-id").is_empty());
    seen.header("webhook-timestamp")
        .parse::<i64>()
        .unwrap_or_else(|e| panic!("webhook-timestamp is not unix seconds: {e}"));
    assert_eq!(seen.header("x-mcp-subscription-id"), subscription);
    seen.verify(secret);
}

#[test]
fn a_new_mail_is_posted_signed_after_the_challenge_as_poll_gives_it() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);

    let result = agent.subscribed(&receiver.url(), SECRET_A);
    let id = result["id"].as_str().unwrap().to_owned();
    assert!(
        id.starts_with("sub_") && id.len() == 20,
        "id is sub_ and 16 hex: {result}"
    );
    assert_eq!(result["deliveryStatus"]["active"], true, "{result}");
    assert!(result["cursor"].is_string(), "{result}");
    // The challenge came first, signed like any delivery.
    let first = &receiver.requests()[0];
    assert_eq!(first.control(), Some("verification"), "{:?}", first.json);
    assert_signed_delivery(first, SECRET_A, &id);
    assert!(first.header("webhook-id").starts_with("msg_verification_"));

    let mail = Writer::new(daemon.home()).mail("alice@example.com");
    let seen = receiver.wait_event(&mail);
    assert_signed_delivery(&seen, SECRET_A, &id);
    assert_eq!(seen.json["name"], "mail.received", "{}", seen.json);
    // The body is the EventOccurrence exactly as a poll from the subscribe's cursor gives it.
    let polled = agent.poll(result["cursor"].as_str().unwrap());
    assert_eq!(polled["events"][0], seen.json);

    // Saved for restarts, private to the user.
    let saved = daemon.dir.join("webhooks.json");
    let mode = std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "webhooks.json holds secrets");
    // Nothing the daemon logged (at debug) names the secret or the callback's path.
    let logged = daemon.stderr();
    assert!(!logged.is_empty(), "the daemon logs at debug here");
    let key = SECRET_A.trim_start_matches("whsec_");
    assert!(
        !logged.contains(key) && !logged.contains("whsec_"),
        "{logged}"
    );
}

#[test]
fn https_to_localhost_is_verified_with_the_roots_ssl_cert_file_names() {
    let tmp = tempfile::tempdir().unwrap();
    let ca = tmp.path().join("receiver-ca.pem");
    let receiver = Receiver::tls(accepting(), &ca);
    let daemon = Daemon::builder()
        .settings(&settings(&[receiver.origin()]))
        .env("SSL_CERT_FILE", &ca)
        .start();
    let mut agent = Agent::connect(&daemon);

    let result = agent.subscribed(&receiver.url(), SECRET_A);
    let mail = Writer::new(daemon.home()).mail("alice@example.com");
    let seen = receiver.wait_event(&mail);
    assert_signed_delivery(&seen, SECRET_A, result["id"].as_str().unwrap());
    assert_eq!(
        seen.header("host"),
        format!("localhost:{}", receiver.addr.port()),
        "the name the user allowed, not the address connected to"
    );
}

#[test]
fn events_arrive_one_at_a_time_in_store_order() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);

    let writer = Writer::new(daemon.home());
    let written: Vec<String> = (0..6).map(|_| writer.mail("bob@example.org")).collect();
    let last = written.last().unwrap().clone();
    receiver.wait_event(&last);
    let events = receiver.events();
    let ids: Vec<&str> = events.iter().filter_map(Seen::event_id).collect();
    assert_eq!(ids, written, "each once, in the order written");
    let rows: Vec<u64> = events
        .iter()
        .map(|s| rowid(s.json["cursor"].as_str().unwrap()))
        .collect();
    assert!(
        rows.windows(2).all(|w| w[0] < w[1]),
        "cursors increase: {rows:?}"
    );
}

#[test]
fn a_failing_receiver_gets_the_same_id_with_fresh_signatures_until_it_takes_it() {
    // Two 500s, then 200.
    let receiver = Receiver::plain(echoing(|seen| {
        if seen.attempt < 2 {
            Reply::Status(500, b"{\"oops\": true}".to_vec())
        } else {
            Reply::Status(200, Vec::new())
        }
    }));
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    let id = agent.subscribed(&receiver.url(), SECRET_A)["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let mail = Writer::new(daemon.home()).mail("alice@example.com");
    // While it fails, the status says why, by category only.
    let state = agent.wait_webhooks("lastError http_5xx", |w| {
        w["subscriptions"][0]["lastError"] == "http_5xx"
    });
    assert!(
        !state.to_string().contains("oops"),
        "the receiver's body is never shown: {state}"
    );
    let seen = receiver.wait_until("a third attempt", |seen| {
        seen.iter()
            .any(|s| s.event_id() == Some(mail.as_str()) && s.attempt == 2)
    });
    let attempts: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.event_id() == Some(mail.as_str()))
        .collect();
    assert_eq!(attempts.len(), 3);
    for attempt in &attempts {
        assert_signed_delivery(attempt, SECRET_A, &id);
        assert_eq!(
            attempt.header("webhook-id"),
            attempts[0].header("webhook-id")
        );
        assert_eq!(attempt.body, attempts[0].body, "the same bytes each time");
    }
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        assert_ne!(
            attempts[a].header("webhook-timestamp"),
            attempts[b].header("webhook-timestamp")
        );
        assert_ne!(
            attempts[a].header("webhook-signature"),
            attempts[b].header("webhook-signature")
        );
    }
    let state = agent.wait_webhooks("the error cleared", |w| {
        w["subscriptions"][0]["lastError"].is_null()
    });
    assert_eq!(state["subscriptions"][0]["active"], true, "{state}");
}

#[test]
fn retry_after_on_a_503_is_honoured_before_the_next_attempt() {
    // Longer than the first backoff (1 s and up to a fifth more), well under the cap.
    const RETRY_AFTER: u64 = 6;
    let receiver = Receiver::plain(echoing(|seen| {
        if seen.attempt == 0 {
            Reply::RetryAfter(503, RETRY_AFTER)
        } else {
            Reply::Status(200, Vec::new())
        }
    }));
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);

    let mail = Writer::new(daemon.home()).mail("alice@example.com");
    let seen = receiver.wait_until("a second attempt", |seen| {
        seen.iter()
            .any(|s| s.event_id() == Some(mail.as_str()) && s.attempt == 1)
    });
    let stamps: Vec<i64> = seen
        .iter()
        .filter(|s| s.event_id() == Some(mail.as_str()))
        .map(|s| s.header("webhook-timestamp").parse().unwrap())
        .collect();
    // Whole seconds on both sides: a wait of RETRY_AFTER seconds moves the stamp by at
    // least RETRY_AFTER - 1 (a lower bound the receiver's clock cannot break).
    let waited = stamps[1] - stamps[0];
    assert!(
        waited >= i64::try_from(RETRY_AFTER).unwrap() - 1,
        "the retry came {waited} s after a 503 asking for {RETRY_AFTER} s"
    );
}

#[test]
fn gone_and_too_large_give_up_on_that_event_only() {
    let receiver = Receiver::plain(echoing(|seen| {
        match seen.json["data"]["from"]["address"].as_str() {
            Some("gone@example.com") => Reply::Status(410, Vec::new()),
            Some("big@example.com") => Reply::Status(413, Vec::new()),
            _ => Reply::Status(204, Vec::new()),
        }
    }));
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);

    let writer = Writer::new(daemon.home());
    let gone = writer.mail("gone@example.com");
    let big = writer.mail("big@example.com");
    let fine = writer.mail("fine@example.com");
    // In order: once the third is in, a retry of either before it would have come first.
    receiver.wait_event(&fine);
    let events = receiver.events();
    assert_eq!(
        events[0].json["data"]["from"]["address"], "gone@example.com",
        "the receiver tells the events apart by sender"
    );
    let ids: Vec<&str> = events.iter().filter_map(Seen::event_id).collect();
    assert_eq!(
        ids,
        [gone.as_str(), big.as_str(), fine.as_str()],
        "one POST each, none retried: {:?}",
        events.iter().map(|s| &s.json).collect::<Vec<_>>()
    );
    let state = agent.webhooks();
    assert_eq!(
        state["subscriptions"][0]["active"], true,
        "the subscription stays: {state}"
    );
}

#[test]
fn a_new_secret_signs_beside_the_old_one_after_a_refresh() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    let writer = Writer::new(daemon.home());
    let first = agent.subscribed(&receiver.url(), SECRET_A);

    let before = writer.mail("alice@example.com");
    let seen = receiver.wait_event(&before);
    seen.verify(SECRET_A);
    assert!(!seen.verifies(SECRET_B));
    assert_eq!(seen.header("webhook-signature").split(' ').count(), 1);

    let again = agent.subscribed(&receiver.url(), SECRET_B);
    assert_eq!(
        again["id"], first["id"],
        "the same key is the same subscription"
    );
    let after = writer.mail("alice@example.com");
    let seen = receiver.wait_event(&after);
    let signatures: Vec<&str> = seen.header("webhook-signature").split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(signatures.iter().all(|s| s.starts_with("v1,")));
    // Each one alone: the new secret's first, then the old one's.
    for (signature, secret) in signatures.iter().zip([SECRET_B, SECRET_A]) {
        let mut alone = seen.clone();
        alone
            .headers
            .insert("webhook-signature", signature.parse().unwrap());
        alone.verify(secret);
    }
    // The refresh kept the cursor: nothing delivered twice.
    let ids: Vec<String> = receiver.event_ids();
    assert_eq!(ids, [before, after]);
}
