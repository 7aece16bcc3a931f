//! `tidings-mcp --channel` against a demo daemon, as Claude Code drives it: discover refused,
//! the 2025-11-25 initialize with the channel capability, one `notifications/claude/channel`
//! per allowed event and none for others, identifier meta keys with string values, a preset
//! from settings.toml, a refused channel, and a daemon restart with nothing lost or repeated;
//! `notifications/tools/list_changed` when a type is turned on or off (before and after a
//! restart); and the app's status listing the channel's streams as `channel`.

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use crate::common::{Client, Daemon, WAIT, Writer, shim_bin};
use serde_json::{Value, json};

/// The channel shim on `daemon` with `args` after `--channel`.
fn channel(daemon: &Daemon, args: &[&str]) -> Client {
    let mut cmd = Command::new(shim_bin());
    cmd.arg("--channel")
        .arg("--socket")
        .arg(&daemon.socket)
        .args(args)
        .env("TIDINGS_CONFIG_DIR", &daemon.dir);
    Client::spawn(&mut cmd)
}

/// A host request (no 2026 `_meta`: Claude Code speaks 2025-11-25), and its response.
fn host_call(client: &mut Client, id: u64, method: &str, params: &Value) -> Value {
    let mark = client.mark();
    client.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    client.wait_for(&format!("the answer to {method}"), mark, |f| {
        f["id"] == id && f.get("method").is_none()
    })
}

/// Claude Code's handshake: initialize, then `notifications/initialized`.
fn handshake(client: &mut Client) -> Value {
    let answer = host_call(
        client,
        1,
        "initialize",
        &json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "claude-code", "version": "2.1.90"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    answer
}

/// The shim's stderr once its reader thread has seen EOF (the shim has exited): the
/// whole text, ending in a newline.
fn stderr_after_exit(client: &Client) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let stderr = client.stderr();
        if stderr.ends_with('\n') || Instant::now() > deadline {
            return stderr;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn is_channel(frame: &Value) -> bool {
    frame["method"] == "notifications/claude/channel"
}

/// The meta `event_id` an eventId becomes (angle brackets are never passed through).
fn meta_id(event_id: &str) -> String {
    event_id.replace('<', "‹").replace('>', "›")
}

/// Waits for the channel notification of `event_id`.
fn wait_channel(client: &mut Client, event_id: &str) -> Value {
    let want = meta_id(event_id);
    client.wait_for(&format!("the channel note for {event_id}"), 0, |f| {
        is_channel(f) && f["params"]["meta"]["event_id"] == want.as_str()
    })
}

/// Turns `[messages]` off (`on == false`) or back on in the demo settings, and waits for
/// the host to get `notifications/tools/list_changed`, bare: no daemon-side subscription id.
fn toggle_messages_and_see_list_changed(daemon: &Daemon, client: &mut Client, on: bool) {
    let settings = std::fs::read_to_string(daemon.settings_path()).unwrap();
    let (from, to) = if on {
        ("false", "true")
    } else {
        ("true", "false")
    };
    let changed = settings.replacen(
        &format!("[messages]\nenabled = {from}"),
        &format!("[messages]\nenabled = {to}"),
        1,
    );
    assert_ne!(changed, settings, "the demo settings changed shape");
    let mark = client.mark();
    daemon.write_settings(&changed);
    let note = client.wait_for("tools/list_changed", mark, |f| {
        f["method"] == "notifications/tools/list_changed"
    });
    assert!(note.get("id").is_none(), "{note}");
    assert!(
        !note.to_string().contains("subscriptionId"),
        "the daemon's listen id reached the host: {note}"
    );
}

/// Every channel notification so far, as `(event, event_id)`.
fn delivered(client: &Client) -> Vec<(String, String)> {
    client
        .frames
        .iter()
        .filter(|f| is_channel(f))
        .map(|f| {
            let meta = &f["params"]["meta"];
            (
                meta["event"].as_str().unwrap().to_owned(),
                meta["event_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn discover_is_refused_and_initialize_declares_the_channel() {
    let daemon = Daemon::start();
    let mut client = channel(
        &daemon,
        &["--type", "mail.received", "--domains", "example.com"],
    );

    let discover = host_call(&mut client, 7, "server/discover", &json!({}));
    assert_eq!(discover["error"]["code"], -32601, "{discover}");

    let init = handshake(&mut client)["result"].clone();
    assert_eq!(init["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(
        init["capabilities"],
        json!({"experimental": {"claude/channel": {}}, "tools": {"listChanged": true}})
    );
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("untrusted"), "{instructions}");

    assert_eq!(
        host_call(&mut client, 2, "ping", &json!({}))["result"],
        json!({})
    );
    let tools = host_call(&mut client, 3, "tools/list", &json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    // Forwarded to the daemon under its own id, answered under the host's.
    let call = host_call(
        &mut client,
        5,
        "tools/call",
        &json!({"name": "tidings_check", "arguments": {}}),
    );
    assert!(
        call.get("result").is_some() || call.get("error").is_some(),
        "{call}"
    );
    let mark = client.mark();
    client.send_raw("this is not json\n");
    let parse = client.wait_for("the parse error", mark, |f| f["error"]["code"] == -32700);
    assert_eq!(parse["id"], Value::Null);
    let other = host_call(&mut client, 4, "resources/list", &json!({}));
    assert_eq!(other["error"]["code"], -32601, "{other}");
    assert!(client.close().success());
}

#[test]
fn one_note_per_allowed_event_and_none_for_others() {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    // evil.test is asked for but not on the demo allowlist, which applies on top.
    let mut client = channel(
        &daemon,
        &[
            "--type",
            "mail.received",
            "--domains",
            "example.com,evil.test",
        ],
    );
    handshake(&mut client);

    let allowed = writer.mail("ana@example.com");
    let other_domain = writer.mail("bob@example.org");
    let not_allowlisted = writer.mail("eve@evil.test");
    let other_type = writer.message("+12025550111");
    let sub_domain = writer.mail("carol@eu.example.com");
    let note = wait_channel(&mut client, &allowed);
    wait_channel(&mut client, &sub_domain);

    let got: Vec<String> = delivered(&client).into_iter().map(|(_, id)| id).collect();
    assert_eq!(got, [meta_id(&allowed), meta_id(&sub_domain)], "{got:?}");
    for skipped in [other_domain, not_allowlisted, other_type] {
        assert!(!got.contains(&meta_id(&skipped)), "{skipped} was delivered");
    }

    let params = &note["params"];
    assert!(params.to_string().len() <= 2048);
    let content = params["content"].as_str().unwrap();
    assert!(!content.contains('\n'), "{content}");
    assert!(
        content.starts_with("New mail from Test Sender ‹ana@example.com›"),
        "{content}"
    );
    let meta = params["meta"].as_object().unwrap();
    for (key, value) in meta {
        assert!(
            !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "meta key {key:?} is not an identifier"
        );
        assert!(value.is_string(), "meta {key} is not a string: {value}");
    }
    assert_eq!(meta["event"], "mail_received");
    assert_eq!(meta["from"], "ana@example.com");
    assert_eq!(meta["subject"], "Test subject");
    assert_eq!(meta["mailbox"], "INBOX");
    assert!(meta.contains_key("date"));
    assert!(client.close().success());
}

#[test]
fn a_preset_from_settings_chooses_what_is_delivered() {
    let daemon = Daemon::start();
    let settings = std::fs::read_to_string(daemon.settings_path()).unwrap();
    daemon.write_settings(&format!(
        "{settings}\n[channel.presets.work]\ntypes = [\"messages.received\"]\nfrom = [\"+12025550122\"]\n"
    ));
    let writer = Writer::new(daemon.home());
    let mut client = channel(&daemon, &["--preset", "work"]);
    handshake(&mut client);

    let mail = writer.mail("ana@example.com");
    let other = writer.message("+12025550133");
    let wanted = writer.message("+12025550122");
    let note = wait_channel(&mut client, &wanted);
    assert_eq!(note["params"]["meta"]["event"], "messages_received");
    assert_eq!(note["params"]["meta"]["from"], "+12025550122");
    let got: Vec<String> = delivered(&client).into_iter().map(|(_, id)| id).collect();
    assert_eq!(got, [meta_id(&wanted)], "not {mail} nor {other}");

    let mut missing = channel(&daemon, &["--preset", "home"]);
    let status = missing.close();
    let stderr = stderr_after_exit(&missing);
    assert_eq!(status.code(), Some(78), "{stderr}");
    assert!(stderr.contains("known presets: work"), "{stderr}");
}

#[test]
fn a_channel_without_a_sender_bound_is_refused() {
    let daemon = Daemon::start();
    daemon.write_settings("[mail]\nenabled = true\n\n[messages]\nenabled = true\n");
    // Wait until the daemon has dropped the demo allowlist.
    let mut probe = daemon.client();
    let deadline = Instant::now() + WAIT;
    for id in 1.. {
        let answer = probe.call(id, "events/poll", json!({"name": "mail.received"}));
        if answer.get("error").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the allowlist never went away");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    let mut client = channel(&daemon, &["--type", "mail.received"]);
    let status = client.close();
    let stderr = stderr_after_exit(&client);
    assert_eq!(status.code(), Some(65), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("mail.received") && stderr.contains("--from"),
        "{stderr}"
    );
    assert!(client.frames.is_empty(), "{:?}", client.frames);
}

/// Stops the daemon (`kill`: SIGKILL, else SIGTERM, which ends each stream with a final
/// result first), writes while it is down, restarts it on the same data dir, writes again,
/// and checks the channel delivered exactly those mails, in order.
fn restart_mid_session(graceful: bool) {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let mut daemon = Daemon::start_in(Arc::clone(&tmp));
    let writer = Writer::new(daemon.home());
    let mut client = channel(
        &daemon,
        &["--domains", "example.com", "--from", "+12025550111"],
    );
    handshake(&mut client);

    let before = writer.mail("ana@example.com");
    wait_channel(&mut client, &before);

    if graceful {
        assert!(daemon.terminate().success(), "{}", daemon.stderr());
    } else {
        daemon.kill();
    }
    let while_down: Vec<String> = (0..3).map(|_| writer.mail("ana@example.com")).collect();
    let message_down = writer.message("+12025550111");
    // Claude Code pings a server it thinks is alive; the channel keeps answering.
    assert_eq!(
        host_call(&mut client, 2, "ping", &json!({}))["result"],
        json!({})
    );

    let daemon = Daemon::start_in(Arc::clone(&tmp));
    let after = writer.mail("ana@example.com");
    wait_channel(&mut client, &after);
    wait_channel(&mut client, &message_down);
    // A last one after everything: a replay from an old cursor would come before it.
    let last = writer.mail("ana@example.com");
    wait_channel(&mut client, &last);

    let mut mails = vec![before];
    mails.extend(while_down);
    mails.extend([after, last]);
    let got = delivered(&client);
    let got_mail: Vec<String> = got
        .iter()
        .filter(|(event, _)| event == "mail_received")
        .map(|(_, id)| id.clone())
        .collect();
    let want: Vec<String> = mails.iter().map(|id| meta_id(id)).collect();
    assert_eq!(got_mail, want, "every mail once, in order");
    let got_messages: BTreeSet<&String> = got
        .iter()
        .filter(|(event, _)| event == "messages_received")
        .map(|(_, id)| id)
        .collect();
    assert_eq!(got_messages.len(), 1);
    assert!(got_messages.contains(&meta_id(&message_down)));
    // The tool list's listen was reopened on the new connection too. (The channel sends it
    // before the streams, so it is open by the time their events have come through.)
    toggle_messages_and_see_list_changed(&daemon, &mut client, false);
    assert!(client.close().success());
    // Read at EOF only, so after the close.
    let stderr = stderr_after_exit(&client);
    assert!(stderr.contains("reconnected"), "{stderr}");
    drop(daemon);
}

#[test]
fn a_daemon_killed_mid_session_loses_nothing_and_repeats_nothing() {
    restart_mid_session(false);
}

#[test]
fn a_daemon_stopped_mid_session_loses_nothing_and_repeats_nothing() {
    restart_mid_session(true);
}

#[test]
fn a_type_turned_off_or_on_reaches_the_host_as_tools_list_changed() {
    let daemon = Daemon::start();
    let mut client = channel(
        &daemon,
        &["--type", "mail.received", "--domains", "example.com"],
    );
    handshake(&mut client);
    let before = host_call(&mut client, 2, "tools/list", &json!({}));
    assert!(before["result"]["tools"].is_array(), "{before}");

    // The host is answered only once the listen is open, so no change can slip past it.
    toggle_messages_and_see_list_changed(&daemon, &mut client, false);
    toggle_messages_and_see_list_changed(&daemon, &mut client, true);
    // The channel's own stream (mail) is untouched by messages going off and on.
    let writer = Writer::new(daemon.home());
    let mail = writer.mail("ana@example.com");
    wait_channel(&mut client, &mail);
    assert!(client.close().success());
}

#[test]
fn the_apps_status_lists_a_channel_as_a_channel_without_senders() {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let mut client = channel(
        &daemon,
        &["--type", "mail.received", "--domains", "example.com"],
    );
    handshake(&mut client);
    let mail = writer.mail("ana@example.com");
    wait_channel(&mut client, &mail);

    // The count is taken just after the event is written, so it may trail the host by a hair.
    let deadline = Instant::now() + WAIT;
    let (status, sub) = loop {
        let status = daemon
            .socket_call("tidings/status")
            .expect("tidings/status answers");
        let sub = status["result"]["clients"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["subscriptions"].as_array().unwrap())
            .find(|s| s["eventType"] == "mail.received" && s["delivered"] == 1)
            .cloned();
        if let Some(sub) = sub {
            break (status, sub);
        }
        assert!(Instant::now() < deadline, "never delivered 1: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(sub["mode"], "channel", "{status}");
    // Opened before the host was answered, so under the channel's own name.
    let owner = status["result"]["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| !c["subscriptions"].as_array().unwrap().is_empty())
        .unwrap();
    assert_eq!(owner["name"], "tidings-mcp-channel", "{status}");
    assert_eq!(sub["filter"], json!({"domains": 1}), "{status}");
    assert!(
        !status.to_string().contains("\"push\""),
        "a channel stream listed as push: {status}"
    );
    assert!(!status.to_string().contains("ana@example.com"), "{status}");
    assert!(!status.to_string().contains("example.com"), "{status}");
    assert!(client.close().success());
}
