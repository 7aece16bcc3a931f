//! Subscriptions over time: a restart loses and repeats nothing, the user taking a
//! destination off the list ends its subscriptions with a signed `terminated`, and a stuck
//! receiver holds back only its own subscription.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::receiver::{Receiver, Reply, SECRET_A, Seen, accepting, echoing};
use super::{Agent, daemon_allowing, settings};
use crate::common::{Daemon, Writer};

#[test]
fn a_restart_delivers_what_was_written_while_down_once() {
    let receiver = Receiver::plain(accepting());
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let mut daemon = Daemon::builder()
        .tmp(Arc::clone(&tmp))
        .settings(&settings(&[receiver.origin()]))
        .start();
    let writer = Writer::new(daemon.home());
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);
    let mut written: Vec<String> = (0..2).map(|_| writer.mail("alice@example.com")).collect();
    receiver.wait_event(written.last().unwrap());
    drop(agent);

    let status = daemon.terminate();
    assert!(status.success(), "{status}; stderr:\n{}", daemon.stderr());
    written.extend((0..3).map(|_| writer.mail("carol@example.net")));

    let daemon = Daemon::builder().tmp(Arc::clone(&tmp)).start();
    receiver.wait_event(written.last().unwrap());
    // One more written live: deliveries are in order, so a repeat of any earlier event
    // would have come before it.
    let sentinel = writer.mail("dave@example.org");
    receiver.wait_event(&sentinel);
    written.push(sentinel);
    let ids: Vec<String> = receiver.event_ids();
    assert_eq!(
        ids, written,
        "every event once, in order, across the restart"
    );
    let challenges = receiver
        .requests()
        .iter()
        .filter(|s| s.control() == Some("verification"))
        .count();
    assert_eq!(challenges, 1, "the verified endpoint is remembered");
    drop(daemon);
}

#[test]
fn taking_the_destination_off_the_list_terminates_its_subscriptions() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    let id = agent.subscribed(&receiver.url(), SECRET_A)["id"]
        .as_str()
        .unwrap()
        .to_owned();

    daemon.write_settings(&settings(&[]));
    let terminated = receiver.wait_control("terminated");
    terminated.verify(SECRET_A);
    assert_eq!(terminated.header("x-mcp-subscription-id"), id);
    assert!(
        terminated
            .header("webhook-id")
            .starts_with("msg_terminated_")
    );
    let error = &terminated.json["error"];
    assert_eq!(error["code"], -32024, "{error}");
    assert_eq!(error["data"]["reason"], "destination_removed", "{error}");
    agent.wait_webhooks("the subscription gone", |w| {
        w["subscriptions"] == serde_json::json!([])
    });
    assert!(
        !std::fs::read_to_string(daemon.dir.join("webhooks.json"))
            .unwrap()
            .contains(&id),
        "deleted from the file too"
    );
}

#[test]
fn a_stuck_receiver_holds_back_neither_another_subscription_nor_a_stream() {
    // Answers the challenge, then never answers a delivery.
    let stuck = Receiver::plain(echoing(|_| Reply::Hang));
    let healthy = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[stuck.origin(), healthy.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&stuck.url(), SECRET_A);
    agent.subscribed(&healthy.url(), SECRET_A);
    let mut listener = Agent::connect(&daemon);
    let stream = listener.stream();

    let writer = Writer::new(daemon.home());
    let first = writer.mail("alice@example.com");
    // The stuck receiver holds its POST open.
    stuck.wait_event(&first);
    healthy.wait_event(&first);
    listener.wait_stream_event(stream, &first);
    let second = writer.mail("bob@example.org");
    healthy.wait_event(&second);
    listener.wait_stream_event(stream, &second);
    let stuck_ids: BTreeSet<String> = stuck
        .events()
        .iter()
        .filter_map(Seen::event_id)
        .map(str::to_owned)
        .collect();
    assert!(
        !stuck_ids.contains(&second),
        "the stuck subscription is still on its first event"
    );
}

#[test]
fn one_key_subscribed_twice_at_once_is_one_subscription() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let url = receiver.url();
    // Two connections of one program (one principal), racing with the same key.
    let ids: Vec<String> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (daemon, url) = (&daemon, url.clone());
                scope.spawn(move || {
                    let mut agent = Agent::connect(daemon);
                    agent.subscribed(&url, SECRET_A)["id"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(ids[0], ids[1], "the same key is the same subscription");
    let mut agent = Agent::connect(&daemon);
    let state = agent.webhooks();
    assert_eq!(
        state["subscriptions"].as_array().unwrap().len(),
        1,
        "{state}"
    );

    // One subscription, one delivery task: each mail arrives once.
    let writer = Writer::new(daemon.home());
    let first = writer.mail("alice@example.com");
    let sentinel = writer.mail("alice@example.com");
    receiver.wait_event(&sentinel);
    let posts = receiver
        .events()
        .iter()
        .filter(|s| s.event_id() == Some(first.as_str()))
        .count();
    assert_eq!(posts, 1, "posted once: {:?}", receiver.events().len());
}

#[test]
fn denying_the_agent_terminates_its_subscriptions() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);
    let state = agent.webhooks();
    let id = state["subscriptions"][0]["agent"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = agent.call("tidings/status", serde_json::json!({}));
    let identity = status["result"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} listed: {status}"))["identity"]
        .as_str()
        .unwrap()
        .to_owned();

    // The user denies this program in the file, as `tidings agents deny` writes it.
    let denied = settings(&[receiver.origin()]).replace(
        "[agents]\nnew = \"allow\"\n",
        &format!(
            "[agents]\nnew = \"allow\"\n\n[agents.known.{id}]\nidentity = \"{identity}\"\n\
             access = \"deny\"\n"
        ),
    );
    daemon.write_settings(&denied);
    let terminated = receiver.wait_control("terminated");
    terminated.verify(SECRET_A);
    let error = &terminated.json["error"];
    assert_eq!(error["code"], -32024, "{error}");
    assert_eq!(error["data"]["reason"], "agent_denied", "{error}");
    assert_eq!(error["data"]["agent"], id.as_str(), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains(&format!("tidings agents allow {id}")),
        "names the fix: {error}"
    );
}
