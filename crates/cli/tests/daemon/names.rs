//! Names from Contacts through the real daemon and shim, on the demo's Contacts store: the
//! sender's card name on every path (stream, poll, the pull tools, the channel, a hook digest)
//! only while `contact_names` is on, and gone once it is turned off; junk and blocked chats
//! never reach the pull tools, the channel or a digest; and with names off, no card, group or
//! recent sender in any answer of any method the daemon serves.

use std::process::Command;
use std::time::Instant;

use crate::common::{Client, Daemon, WAIT, Writer, is_event, is_note, shim_bin, tidings_bin};
use serde_json::{Value, json};
use tidings_fixtures::{ChatFilter, MessagesFixture, NewChat, NewMessage, Service};

/// Ana Ruiz's number, as chat.db keeps it (her card writes it `(202) 555-0101`).
const ANA: &str = "+12025550101";
/// A number on no card, inside the demo allowlist's range.
const STRANGER: &str = "+12025550199";
/// Every name in the demo's Contacts: cards (a company among them) and the group.
const CARD_NAMES: &[&str] = &[
    "Ana Ruiz",
    "Alice Park",
    "Bob Stone",
    "Carol Jones",
    "Example Networks",
    "Family",
];

/// A message from Ana in a chat Messages hides (`filter`); returns its guid.
fn hidden_message(daemon: &Daemon, filter: ChatFilter, guid: &str) -> String {
    let mut db = MessagesFixture::open(&daemon.home()).unwrap();
    let handle = db.add_handle(ANA, Service::IMessage).unwrap();
    let chat = db
        .add_chat(&NewChat {
            identifier: String::new(),
            display_name: None,
            group: true,
            service: Service::IMessage,
            participants: vec![handle],
        })
        .unwrap();
    db.set_chat_filter(chat, filter).unwrap();
    let date = tidings_fixtures::apple_ns_from_unix(tidings_fixtures::dates::now_unix());
    let mut m = NewMessage::new(handle, chat, "hidden", Some(date));
    m.guid = Some(guid.to_owned());
    db.append(&m).unwrap();
    guid.to_owned()
}

/// The channel shim for Messages from Ana and the stranger, initialized as Claude Code does.
fn channel(daemon: &Daemon) -> Client {
    let mut cmd = Command::new(shim_bin());
    cmd.arg("--channel")
        .arg("--socket")
        .arg(&daemon.socket)
        .args([
            "--type",
            "messages.received",
            "--from",
            &format!("{ANA},{STRANGER}"),
        ])
        .env("TIDINGS_CONFIG_DIR", &daemon.dir);
    let mut c = Client::spawn(&mut cmd);
    let mark = c.mark();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.90"}}}),
    );
    c.wait_for("initialize", mark, |f| f["id"] == 1);
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c
}

fn channel_note(c: &mut Client, guid: &str) -> Value {
    c.wait_for(&format!("the channel note for {guid}"), 0, |f| {
        f["method"] == "notifications/claude/channel" && f["params"]["meta"]["event_id"] == guid
    })["params"]
        .clone()
}

/// `tidings check --consumer hook` (text): the digest.
fn digest(daemon: &Daemon) -> String {
    let out = Command::new(tidings_bin())
        .args(["check", "--consumer", "hook", "--socket"])
        .arg(&daemon.socket)
        .env("TIDINGS_DATA_DIR", daemon.tmp.path().join("data"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every open path to Messages from Ana and the stranger, each started from now.
struct Paths {
    stream: Client,
    stream_id: Value,
    poller: Client,
    poll_cursor: String,
    tools: Client,
    channel: Client,
}

fn args() -> Value {
    json!({"from": [ANA, STRANGER]})
}

impl Paths {
    fn open(daemon: &Daemon) -> Paths {
        let mut stream = daemon.client();
        let stream_id = json!("names");
        let mark = stream.mark();
        stream.request(
            stream_id.clone(),
            "events/stream",
            json!({"name": "messages.received", "arguments": args()}),
        );
        stream.wait_for("active", mark, |f| {
            is_note(f, "notifications/events/active", &stream_id)
        });
        let mut poller = daemon.client();
        let first = poller.result(
            1,
            "events/poll",
            json!({"name": "messages.received", "arguments": args()}),
        );
        let poll_cursor = first["cursor"].as_str().unwrap().to_owned();
        let mut tools = daemon.client();
        tools.result(
            1,
            "tools/call",
            json!({"name": "tidings_check", "arguments": {"events": ["messages.received"]}}),
        );
        let channel = channel(daemon);
        assert_eq!(digest(daemon), "", "the first digest records now");
        Paths {
            stream,
            stream_id,
            poller,
            poll_cursor,
            tools,
            channel,
        }
    }

    /// What each path delivered once `wanted` (event ids, in store order) arrived, checking
    /// that none of the `hidden` rows written among them shows on any path.
    fn deliver(&mut self, daemon: &Daemon, wanted: &[String], hidden: &[String]) -> Delivered {
        let last = wanted.last().unwrap();
        let id = self.stream_id.clone();
        self.stream
            .wait_for("the last event on the stream", 0, |f| {
                is_event(f, &id, last)
            });
        let stream: Vec<Value> = self
            .stream
            .frames
            .iter()
            .filter(|f| is_note(f, "notifications/events/event", &id))
            .map(|f| f["params"].clone())
            .collect();
        let polled = self.poller.result(
            2,
            "events/poll",
            json!({"name": "messages.received", "arguments": args(), "cursor": self.poll_cursor}),
        );
        polled["cursor"]
            .as_str()
            .unwrap()
            .clone_into(&mut self.poll_cursor);
        let tool = self.tools.result(
            2,
            "tools/call",
            json!({"name": "tidings_check", "arguments": {"events": ["messages.received"]}}),
        );
        let notes: Vec<Value> = wanted
            .iter()
            .map(|g| channel_note(&mut self.channel, g))
            .collect();
        let delivered = Delivered {
            stream,
            polled: polled["events"].as_array().unwrap().clone(),
            tool,
            channel: notes,
            digest: digest(daemon),
        };
        for h in hidden {
            let all = format!(
                "{:?} {:?} {} {:?}",
                delivered.stream, delivered.polled, delivered.tool, self.channel.frames
            );
            assert!(!all.contains(h.as_str()), "{h} was delivered: {all}");
            assert!(
                !delivered.digest.contains(h.as_str()),
                "{}",
                delivered.digest
            );
        }
        delivered
    }
}

struct Delivered {
    stream: Vec<Value>,
    polled: Vec<Value>,
    tool: Value,
    channel: Vec<Value>,
    digest: String,
}

fn contact_by_id(events: &[Value], id_key: &str, id: &str) -> Option<String> {
    let e = events
        .iter()
        .find(|e| e[id_key] == id)
        .unwrap_or_else(|| panic!("{id} not in {events:?}"));
    e["data"]["from"]
        .get("contact")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[test]
fn names_ride_every_path_only_while_the_switch_is_on_and_hidden_chats_never_do() {
    // The demo: Contacts with Ana's card, `contact_names = true` for both types.
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let mut paths = Paths::open(&daemon);

    let named = writer.message(ANA);
    let junk = hidden_message(
        &daemon,
        ChatFilter {
            is_filtered: 2,
            blackholed: false,
        },
        "JUNK-FROM-ANA",
    );
    let blocked = hidden_message(
        &daemon,
        ChatFilter {
            is_filtered: 0,
            blackholed: true,
        },
        "BLOCKED-FROM-ANA",
    );
    let unnamed = writer.message(STRANGER);
    let got = paths.deliver(&daemon, &[named.clone(), unnamed.clone()], &[junk, blocked]);
    let ana = Some("Ana Ruiz".to_owned());
    assert_eq!(contact_by_id(&got.stream, "eventId", &named), ana);
    assert_eq!(contact_by_id(&got.stream, "eventId", &unnamed), None);
    assert_eq!(contact_by_id(&got.polled, "eventId", &named), ana);
    assert_eq!(contact_by_id(&got.polled, "eventId", &unnamed), None);
    let tool_events = got.tool["structuredContent"]["events"].as_array().unwrap();
    assert_eq!(contact_by_id(tool_events, "event_id", &named), ana);
    assert_eq!(contact_by_id(tool_events, "event_id", &unnamed), None);
    let tool_text = got.tool["content"][0]["text"].as_str().unwrap();
    assert!(
        tool_text.contains("from \"Ana Ruiz (+1 202-555-0101)\" via \"iMessage\""),
        "{tool_text}"
    );
    assert!(tool_text.contains("from \"+12025550199\""), "{tool_text}");
    assert_eq!(
        got.channel[0]["content"],
        "New message from Ana Ruiz ‹+12025550101› (iMessage)"
    );
    assert_eq!(got.channel[0]["meta"]["contact"], "Ana Ruiz");
    assert_eq!(
        got.channel[1]["content"],
        "New message from +12025550199 (iMessage)"
    );
    assert!(
        got.digest
            .contains("from \"Ana Ruiz (+1 202-555-0101)\" via \"iMessage\""),
        "{}",
        got.digest
    );

    // Names off: the daemon applies it, and no path names anyone any more.
    let settings = std::fs::read_to_string(daemon.settings_path()).unwrap();
    let off = settings.replace("contact_names = true", "contact_names = false");
    assert_ne!(off, settings, "the demo settings changed shape");
    let applied = |d: &Daemon| d.stderr().matches("settings applied").count();
    let before = applied(&daemon);
    daemon.write_settings(&off);
    let deadline = Instant::now() + WAIT;
    while applied(&daemon) == before {
        assert!(Instant::now() < deadline, "settings never applied");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let again = writer.message(ANA);
    let got = paths.deliver(&daemon, std::slice::from_ref(&again), &[]);
    assert_eq!(contact_by_id(&got.stream, "eventId", &again), None);
    assert_eq!(contact_by_id(&got.polled, "eventId", &again), None);
    let tool_events = got.tool["structuredContent"]["events"].as_array().unwrap();
    assert_eq!(contact_by_id(tool_events, "event_id", &again), None);
    assert_eq!(
        got.channel[0]["content"],
        "New message from +12025550101 (iMessage)"
    );
    for text in [got.tool.to_string(), got.digest, got.channel[0].to_string()] {
        assert!(!text.contains("Ana Ruiz"), "{text}");
    }
}

/// Settings with a Contacts store present but names off and no person or group entries: what
/// an agent could learn of the user's Contacts through the daemon is then nothing at all.
const NAMES_OFF: &str = r#"
[mail]
enabled = true
allow = ["example.com", "example.org", "example.net", "+120255501*"]

[messages]
enabled = true
allow = ["example.com", "example.org", "example.net", "+120255501*"]
"#;

fn assert_no_names(what: &str, answer: &Value) {
    let text = answer.to_string();
    for name in CARD_NAMES {
        assert!(!text.contains(name), "{what} names {name}: {text}");
    }
}

/// Calls with fresh ids, each answer checked for names.
struct Asker {
    id: u64,
}

impl Asker {
    fn call(&mut self, c: &mut Client, method: &str, params: Value) -> Value {
        self.id += 1;
        let answer = c.call(self.id, method, params);
        assert_no_names(method, &answer);
        answer
    }
}

/// Every tool, last: the demo's levers rebuild a store and turn a type off for a moment.
fn call_every_tool(asker: &mut Asker, c: &mut Client, tool_names: &[String]) {
    for tool in tool_names {
        let arguments = match tool.as_str() {
            "tidings_check" => json!({}),
            "tidings_wait" => json!({"timeout_s": 1}),
            _ => json!({"name": "messages.received"}),
        };
        asker.call(
            c,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
    }
}

#[test]
fn with_names_off_no_method_reaches_a_contact_or_a_recent_sender() {
    let daemon = Daemon::builder().settings(NAMES_OFF).start();
    let writer = Writer::new(daemon.home());
    let mut c = daemon.client();
    let mut asker = Asker { id: 0 };
    let mut call = |c: &mut Client, method: &str, params: Value| asker.call(c, method, params);
    call(&mut c, "server/discover", json!({}));
    call(&mut c, "events/list", json!({}));
    call(&mut c, "tidings/status", json!({}));
    for method in [
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "completion/complete",
        "ping",
    ] {
        call(&mut c, method, json!({"uri": "tidings://contacts"}));
    }
    // Streams and polls of both types, from now and from a cursor, with rows from card
    // holders (Ana's number, Alice's and the company's addresses) written between.
    let mut cursors = Vec::new();
    for ty in ["mail.received", "messages.received"] {
        let args = if ty == "mail.received" {
            json!({"domains": ["example.com", "example.net"]})
        } else {
            json!({"from": [ANA]})
        };
        let first = call(
            &mut c,
            "events/poll",
            json!({"name": ty, "arguments": args}),
        );
        cursors.push((ty, args, first["result"]["cursor"].clone()));
    }
    let tools = call(&mut c, "tools/list", json!({}));
    let tool_names: Vec<String> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tool_names.contains(&"tidings_wait".to_owned()), "{tools}");
    call(
        &mut c,
        "tools/call",
        json!({"name": "tidings_check", "arguments": {}}),
    );
    let stream_id = json!("s");
    let mark = c.mark();
    c.request(
        stream_id.clone(),
        "events/stream",
        json!({"name": "messages.received", "arguments": {"from": [ANA]}}),
    );
    c.wait_for("active", mark, |f| {
        is_note(f, "notifications/events/active", &stream_id)
    });
    let rows = [
        writer.message(ANA),
        writer.mail("alice@example.com"),
        writer.mail("dave@example.net"),
    ];
    c.wait_for("the stream's event", mark, |f| {
        is_event(f, &stream_id, &rows[0])
    });
    for (ty, args, cursor) in cursors {
        let polled = call(
            &mut c,
            "events/poll",
            json!({"name": ty, "arguments": args, "cursor": cursor}),
        );
        assert!(
            !polled["result"]["events"].as_array().unwrap().is_empty(),
            "{ty}: the rows were read: {polled}"
        );
    }
    let checked = call(
        &mut c,
        "tools/call",
        json!({"name": "tidings_check", "arguments": {}}),
    );
    assert!(
        checked.to_string().contains(&rows[0]),
        "the pull tool read the rows: {checked}"
    );
    // The hook digest, the same tools' text.
    let first = digest(&daemon);
    writer.message(ANA);
    let second = digest(&daemon);
    assert!(second.contains(ANA), "{first}\n{second}");
    assert_no_names("the digest", &Value::String(second));
    call_every_tool(&mut asker, &mut c, &tool_names);
    c.cancel(stream_id);
    for (i, frame) in c.frames.iter().enumerate() {
        assert_no_names(&format!("frame {i}"), frame);
    }
}
