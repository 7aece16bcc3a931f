//! Two host programs, each its own grant on every path (stream, poll, the pull tool, the
//! channel); a client announcing another host's name still gets its own program's grant; a
//! grant widened by hand in settings.toml reaches a running stream, and a malformed edit keeps
//! the last good grants.

use serde_json::{Value, json};

use super::{
    Host, agent_by_id, deny_new, grant, introduce, named_grant, open_stream, streamed, two_hosts,
    wait_grant, wait_status,
};
use crate::common::{Client, Daemon, Writer, is_event, tidings_bin};

/// Polls `event_type` from a bootstrap until `last` comes; every event id returned, in order.
fn poll_until(client: &mut Client, event_type: &str, cursor: &str, last: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + crate::common::WAIT;
    let mut cursor = cursor.to_owned();
    let mut got = Vec::new();
    for id in 100.. {
        let result = client.result(
            id,
            "events/poll",
            json!({"name": event_type, "arguments": {}, "cursor": cursor}),
        );
        got.extend(
            result["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["eventId"].as_str().unwrap().to_owned()),
        );
        result["cursor"].as_str().unwrap().clone_into(&mut cursor);
        if got.iter().any(|e| e == last) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never polled {last}: {got:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    got
}

/// A bootstrap poll of `event_type`: its cursor, or the error it was refused with.
fn bootstrap(client: &mut Client, id: u64, event_type: &str) -> Result<String, Value> {
    let answer = client.call(
        id,
        "events/poll",
        json!({"name": event_type, "arguments": {}, "cursor": null}),
    );
    match answer.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(answer["result"]["cursor"].as_str().unwrap().to_owned()),
    }
}

/// `tidings_check` from the connection's cursor until `last` comes; every event id returned.
fn check_until(client: &mut Client, last: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + crate::common::WAIT;
    let mut got = Vec::new();
    for id in 200.. {
        let result = client.result(
            id,
            "tools/call",
            json!({"name": "tidings_check", "arguments": {}}),
        );
        assert_eq!(result["isError"], false, "{result}");
        got.extend(
            result["structuredContent"]["events"]
                .as_array()
                .unwrap_or_else(|| panic!("no events in {result}"))
                .iter()
                .map(|e| e["event_id"].as_str().unwrap().to_owned()),
        );
        if got.iter().any(|e| e == last) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never checked {last}: {got:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    got
}

/// The channel's notes until the one for `last`; every event id noted, as the store has it.
fn channel_until(client: &mut Client, last: &str) -> Vec<String> {
    let meta = |id: &str| id.replace('<', "‹").replace('>', "›");
    let want = meta(last);
    client.wait_for(&format!("the channel note for {last}"), 0, |f| {
        f["method"] == "notifications/claude/channel" && f["params"]["meta"]["event_id"] == *want
    });
    client
        .frames
        .iter()
        .filter(|f| f["method"] == "notifications/claude/channel")
        .map(|f| {
            f["params"]["meta"]["event_id"]
                .as_str()
                .unwrap()
                .replace('‹', "<")
                .replace('›', ">")
        })
        .collect()
}

/// Waits for event `last` on stream `id`; every event the stream delivered.
fn stream_until(client: &mut Client, id: u64, last: &str) -> Vec<String> {
    let sub = json!(id);
    client.wait_for(&format!("{last} on stream {id}"), 0, |f| {
        is_event(f, &sub, last)
    });
    streamed(client, id)
}

/// Each host's four clients: a push stream, a poll, the pull tool, the channel.
struct Paths {
    stream: Client,
    poll: Client,
    poll_cursor: String,
    tool: Client,
    channel: Client,
}

/// Opens `host`'s four paths for `granted` (the one type it may receive), checking the other
/// type is refused on the stream and the poll.
fn open_paths(daemon: &Daemon, host: &Host, mut stream: Client, granted: &str) -> Paths {
    let other = if granted == "mail.received" {
        "messages.received"
    } else {
        "mail.received"
    };
    open_stream(&mut stream, "tidings-tests", 2, granted)
        .unwrap_or_else(|e| panic!("{} refused {granted}: {e}", host.file()));
    let refused = open_stream(&mut stream, "tidings-tests", 3, other);
    assert!(refused.is_err(), "{} may stream {other}", host.file());

    let mut poll = host.shim(daemon, &[]);
    let poll_cursor = bootstrap(&mut poll, 1, granted)
        .unwrap_or_else(|e| panic!("{} may not poll {granted}: {e}", host.file()));
    assert!(
        bootstrap(&mut poll, 2, other).is_err(),
        "{} may poll {other}",
        host.file()
    );

    let mut tool = host.shim(daemon, &[]);
    let first = check_until_empty(&mut tool);
    assert_eq!(first, Vec::<String>::new(), "a first check starts from now");

    let channel = host.channel(
        daemon,
        &[
            "--domains",
            "example.com,example.org",
            "--from",
            "+12025550111,+12025550112",
        ],
    );
    Paths {
        stream,
        poll,
        poll_cursor,
        tool,
        channel,
    }
}

/// The first `tidings_check` of a connection (it starts from now).
fn check_until_empty(client: &mut Client) -> Vec<String> {
    let result = client.result(
        1,
        "tools/call",
        json!({"name": "tidings_check", "arguments": {}}),
    );
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events in {result}"))
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_owned())
        .collect()
}

/// Each path of `paths` delivers exactly `want`, ending with its last.
fn assert_each_path(who: &str, paths: &mut Paths, event_type: &str, want: &[String]) {
    let last = want.last().unwrap();
    let stream = stream_until(&mut paths.stream, 2, last);
    assert_eq!(stream, want, "{who}'s stream");
    let cursor = paths.poll_cursor.clone();
    let poll = poll_until(&mut paths.poll, event_type, &cursor, last);
    assert_eq!(poll, want, "{who}'s poll");
    let tool = check_until(&mut paths.tool, last);
    assert_eq!(tool, want, "{who}'s tidings_check");
    let channel = channel_until(&mut paths.channel, last);
    assert_eq!(channel, want, "{who}'s channel");
}

#[test]
fn agents_two_parent_programs_each_get_only_their_grant() {
    let (tmp, a, b) = two_hosts();
    let daemon = Daemon::builder().tmp(tmp).settings(&deny_new("")).start();
    // Under `new = "deny"` neither may receive yet; the daemon learns who they are.
    let mut a_stream = a.shim(&daemon, &[]);
    let mut b_stream = b.shim(&daemon, &[]);
    let (a_id, a_key) = introduce(&daemon, &a, &mut a_stream, "tidings-tests");
    let (b_id, b_key) = introduce(&daemon, &b, &mut b_stream, "tidings-tests");
    assert_ne!(a_id, b_id, "two programs, two agents");
    let refused = open_stream(&mut a_stream, "tidings-tests", 1, "mail.received").unwrap_err();
    super::assert_forbidden(&refused, "agent_not_allowed", &a_id);

    daemon.write_settings(&deny_new(&format!(
        "{}{}",
        grant(&a_id, &a_key, "allow", "[\"example.com\"]", "false"),
        grant(&b_id, &b_key, "allow", "false", "true"),
    )));
    wait_grant(&daemon, &a_id, "allowed", Some(1));
    wait_grant(&daemon, &b_id, "allowed", None);

    let mut a_paths = open_paths(&daemon, &a, a_stream, "mail.received");
    let mut b_paths = open_paths(&daemon, &b, b_stream, "messages.received");

    let writer = Writer::new(daemon.home());
    // On the allowlist, outside A's grant: reaches no one.
    let org = writer.mail("ann@example.org");
    let com1 = writer.mail("ana@example.com");
    let msg1 = writer.message("+12025550111");
    let com2 = writer.mail("ana@example.com");
    let msg2 = writer.message("+12025550112");

    assert_each_path("A", &mut a_paths, "mail.received", &[com1, com2]);
    assert_each_path("B", &mut b_paths, "messages.received", &[msg1, msg2]);
    for paths in [&a_paths, &b_paths] {
        for client in [&paths.stream, &paths.poll, &paths.tool, &paths.channel] {
            let all: String = client.frames.iter().map(Value::to_string).collect();
            assert!(
                !all.contains(&org),
                "the mail outside A's grant was delivered"
            );
        }
    }
    // The status counts what each was given, and says which agent each client is.
    let state = super::status(&daemon);
    for client in state["clients"].as_array().unwrap() {
        let agent = client["agent"].as_str().unwrap();
        assert!(
            agent == a_id
                || agent == b_id
                || !client["subscriptions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s["delivered"].as_u64() > Some(0)),
            "a client of another agent got events: {client:#}"
        );
    }
}

#[test]
fn agents_a_client_announcing_another_hosts_name_gets_its_own_grant() {
    let (tmp, a, b) = two_hosts();
    let daemon = Daemon::builder().tmp(tmp).settings(&deny_new("")).start();
    let mut a_client = a.shim(&daemon, &[]);
    let mut b_client = b.shim(&daemon, &[]);
    let (a_id, a_key) = introduce(&daemon, &a, &mut a_client, "codex");
    let (b_id, b_key) = introduce(&daemon, &b, &mut b_client, "claude-code");
    // A's grant is even named after the host B pretends to be.
    daemon.write_settings(&deny_new(&format!(
        "{}{}",
        named_grant(&a_id, "claude-code", &a_key, "allow", "true", "false"),
        grant(&b_id, &b_key, "allow", "false", "true"),
    )));
    wait_grant(&daemon, &a_id, "allowed", None);
    wait_grant(&daemon, &b_id, "allowed", None);

    assert!(
        open_stream(&mut b_client, "claude-code", 1, "mail.received").is_err(),
        "B, announcing claude-code, got A's mail"
    );
    open_stream(&mut b_client, "claude-code", 2, "messages.received").unwrap();
    open_stream(&mut a_client, "codex", 1, "mail.received").unwrap();
    assert!(open_stream(&mut a_client, "codex", 2, "messages.received").is_err());
    let writer = Writer::new(daemon.home());
    let mail = writer.mail("ana@example.com");
    let message = writer.message("+12025550111");
    assert_eq!(
        stream_until(&mut b_client, 2, &message),
        std::slice::from_ref(&message)
    );
    assert_eq!(
        stream_until(&mut a_client, 1, &mail),
        std::slice::from_ref(&mail)
    );
    let b_frames: String = b_client.frames.iter().map(Value::to_string).collect();
    assert!(!b_frames.contains(&mail), "B got A's mail");

    // The announced names are shown beside the programs, never in place of them.
    let state = wait_status(&daemon, "listed the announced names", |s| {
        agent_by_id(s, &b_id).is_some_and(|b| b["announced"].to_string().contains("claude-code"))
    });
    let b_state = agent_by_id(&state, &b_id).unwrap();
    assert_eq!(b_state["name"], "python3 host_b.py", "{b_state:#}");
    assert_eq!(b_state["identity"], b_key.as_str(), "{b_state:#}");
    assert_eq!(b_state["announced"], json!(["claude-code"]), "{b_state:#}");
    let a_state = agent_by_id(&state, &a_id).unwrap();
    assert_eq!(a_state["announced"], json!(["codex"]), "{a_state:#}");
    assert_eq!(a_state["identity"], a_key.as_str(), "{a_state:#}");
    let claude = state["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "claude-code")
        .unwrap_or_else(|| panic!("no claude-code client: {state:#}"));
    assert_eq!(claude["agent"], b_id.as_str(), "{claude:#}");
}

#[test]
fn agents_a_grant_edited_in_the_file_applies_live() {
    let (tmp, a, _) = two_hosts();
    let daemon = Daemon::builder().tmp(tmp).settings(&deny_new("")).start();
    let mut client = a.shim(&daemon, &[]);
    let (id, key) = introduce(&daemon, &a, &mut client, "tidings-tests");
    daemon.write_settings(&deny_new(&grant(
        &id,
        &key,
        "allow",
        "[\"example.com\"]",
        "false",
    )));
    wait_grant(&daemon, &id, "allowed", Some(1));
    open_stream(&mut client, "tidings-tests", 1, "mail.received").unwrap();

    let writer = Writer::new(daemon.home());
    let org1 = writer.mail("ann@example.org");
    let com1 = writer.mail("ana@example.com");
    assert_eq!(
        stream_until(&mut client, 1, &com1),
        std::slice::from_ref(&com1),
        "not {org1}"
    );

    // Widened by hand: applied after the file has been still for the hold.
    let widened = deny_new(&grant(
        &id,
        &key,
        "allow",
        "[\"example.com\", \"example.org\"]",
        "false",
    ));
    daemon.write_settings(&widened);
    wait_grant(&daemon, &id, "allowed", Some(2));
    let org2 = writer.mail("ann@example.org");
    assert_eq!(
        stream_until(&mut client, 1, &org2),
        [com1.clone(), org2.clone()]
    );

    // A malformed `[agents]`: refused, the last good grants stay, and the status says where.
    let broken = widened.replace("access = \"allow\"", "access = \"sometimes\"");
    assert_ne!(broken, widened);
    let line = broken
        .lines()
        .position(|l| l.contains("sometimes"))
        .unwrap()
        + 1;
    daemon.write_settings(&broken);
    let state = wait_status(&daemon, "refused the malformed settings", |s| {
        s["settings"]["state"] == "rejected"
    });
    assert_eq!(state["settings"]["line"], line, "{:#}", state["settings"]);
    let out = std::process::Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("line {line}")) && text.contains("using the last good settings"),
        "{text}"
    );
    let org3 = writer.mail("ann@example.org");
    assert_eq!(
        stream_until(&mut client, 1, &org3),
        [com1, org2, org3],
        "the last good grant is not in force"
    );
}
