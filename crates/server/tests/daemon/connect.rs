//! `tidings connect` / `disconnect` / `clients` on temporary homes with existing configs:
//! other servers and comments kept byte for byte, a backup made, a malformed file refused
//! and left untouched, and the check run through the real `tidings-mcp` against a demo
//! daemon, with its failures (no daemon, a shim that cannot run) reported.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::common::{CONFIG, Daemon, is_response, shim_bin, tidings_bin};

/// A temporary home with `files` (path under home, contents) in it.
fn home_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = home.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    home
}

/// `tidings ARGS` with `HOME` set to `home` and the socket to `socket`.
fn tidings(home: &Path, socket: &Path, args: &[&str]) -> Output {
    Command::new(tidings_bin())
        .args(args)
        .env("HOME", home)
        .env("TIDINGS_SOCKET", socket)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// The backups `connect` left beside `file`.
fn backups(file: &Path) -> Vec<PathBuf> {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut found: Vec<PathBuf> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{name}.tidings-backup-"))
        })
        .collect();
    found.sort();
    found
}

const CLAUDE_JSON: &str = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh\",  \"args\": [\"mcp\", \"serve\"]}\n  },\n  \"projects\": {\"/src/app\": {\"allowedTools\": []}}\n}\n";

#[test]
fn connect_keeps_the_rest_backs_up_and_checks_through_the_shim() {
    let daemon = Daemon::start();
    let home = home_with(&[(".claude.json", CLAUDE_JSON)]);
    let file = home.path().join(".claude.json");
    let shim = shim_bin();
    let shim_arg = shim.to_str().unwrap();

    let dry = tidings(
        home.path(),
        &daemon.socket,
        &["connect", "claude-code", "--shim", shim_arg, "--dry-run"],
    );
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        text(&dry.stdout).contains("+     \"tidings\": {"),
        "{}",
        text(&dry.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        CLAUDE_JSON,
        "--dry-run wrote"
    );
    assert!(backups(&file).is_empty());

    let out = tidings(
        home.path(),
        &daemon.socket,
        &["connect", "claude-code", "--shim", shim_arg],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("Connected ✓ (tools: tidings_check, tidings_wait)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "claude mcp add --scope user tidings -- {shim_arg}"
        )),
        "{stdout}"
    );

    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["tidings"],
        json!({"command": shim_arg, "args": []})
    );
    assert_eq!(written["numStartups"], 7);
    let saved = backups(&file);
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read_to_string(&saved[0]).unwrap(), CLAUDE_JSON);
    assert!(
        stdout.contains(&saved[0].file_name().unwrap().to_string_lossy().into_owned()),
        "the backup is named: {stdout}"
    );

    // The channel: the same entry with --channel, checked for the channel capability.
    let out = tidings(
        home.path(),
        &daemon.socket,
        &[
            "connect",
            "claude-code",
            "--mode",
            "channel",
            "--shim",
            shim_arg,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out.stdout).contains("Connected ✓ (channel, tools:"),
        "{out:?}"
    );

    // Disconnect removes Tidings' entry and nothing else: the original bytes come back.
    let out = tidings(home.path(), &daemon.socket, &["disconnect", "claude-code"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CLAUDE_JSON);
    assert_eq!(backups(&file).len(), 3, "each write backs up first");
}

#[test]
fn jsonc_comments_and_toml_comments_are_kept() {
    let daemon = Daemon::start();
    let zed = "// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n  \"context_servers\": {\n    /* keep me */\n    \"other\": {\"command\": \"x\", \"args\": []},\n  },\n}\n";
    let vscode = "{\n  // my servers\n  \"servers\": {},\n  \"inputs\": [],\n}\n";
    let codex = "# my codex\nmodel = \"o3\"  # fast\n\n[mcp_servers.github]\ncommand = \"gh\"\nargs = [\"mcp\"]\n";
    let home = home_with(&[
        (".config/zed/settings.json", zed),
        (".config/Code/User/mcp.json", vscode),
        (".codex/config.toml", codex),
    ]);
    let shim = shim_bin();
    for (client, path, original, mode) in [
        ("zed", ".config/zed/settings.json", zed, "tools"),
        ("vscode", ".config/Code/User/mcp.json", vscode, "events"),
        ("codex", ".codex/config.toml", codex, "tools"),
    ] {
        let out = tidings(
            home.path(),
            &daemon.socket,
            &[
                "connect",
                client,
                "--mode",
                mode,
                "--shim",
                shim.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{client}: {out:?}");
        assert!(
            text(&out.stdout).contains("Connected ✓"),
            "{client}: {out:?}"
        );
        let file = home.path().join(path);
        let written = std::fs::read_to_string(&file).unwrap();
        for line in original
            .lines()
            .filter(|l| l.contains("//") || l.contains("/*") || l.contains('#'))
        {
            assert!(written.contains(line), "{client} lost {line:?}:\n{written}");
        }
        assert!(written.contains(shim.to_str().unwrap()), "{written}");
        let out = tidings(home.path(), &daemon.socket, &["disconnect", client]);
        assert!(out.status.success(), "{client}: {out:?}");
        let after = std::fs::read_to_string(&file).unwrap();
        // toml_edit leaves the blank line it put before the new table.
        assert_eq!(after.trim_end(), original.trim_end(), "{client}");
    }
}

#[test]
fn a_malformed_file_is_refused_and_left_untouched() {
    let socket = tempfile::tempdir().unwrap();
    let bad = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n";
    let home = home_with(&[
        (".cursor/mcp.json", bad),
        (".codex/config.toml", "model = \n"),
    ]);
    let shim = shim_bin();
    let out = tidings(
        home.path(),
        &socket.path().join("none.sock"),
        &["connect", "cursor", "--shim", shim.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(".cursor/mcp.json is not valid JSON (line 4, column 3"),
        "{stderr}"
    );
    assert!(stderr.contains("left untouched"), "{stderr}");
    let file = home.path().join(".cursor/mcp.json");
    assert_eq!(std::fs::read(&file).unwrap(), bad.as_bytes());
    assert!(backups(&file).is_empty());

    let out = tidings(
        home.path(),
        &socket.path().join("none.sock"),
        &["disconnect", "codex"],
    );
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    assert!(
        text(&out.stderr).contains("config.toml is not valid TOML (line 1"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap(),
        "model = \n"
    );
}

#[test]
fn the_check_reports_no_daemon_and_a_shim_that_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(&[]);
    let shim = shim_bin();
    let out = tidings(
        home.path(),
        &dir.path().join("none.sock"),
        &["connect", "cursor", "--shim", shim.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = text(&out.stderr);
    // The entry is written; the check names the exit status and the shim's own words.
    assert!(
        stderr.contains("the entry was written, but the check failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("exited with status 69 before answering initialize"),
        "{stderr}"
    );
    assert!(
        stderr.contains("none.sock"),
        "the shim's stderr is quoted: {stderr}"
    );
    assert!(home.path().join(".cursor/mcp.json").is_file());

    // A file that is not a program: the spawn error, naming the path.
    let not_a_program = dir.path().join("tidings-mcp");
    std::fs::write(&not_a_program, "not a program").unwrap();
    let out = tidings(
        home.path(),
        &dir.path().join("none.sock"),
        &["connect", "zed", "--shim", not_a_program.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot start {}", not_a_program.display())),
        "{stderr}"
    );
}

#[test]
fn clients_lists_configured_and_connected_now() {
    let daemon = Daemon::start();
    let home = home_with(&[(".claude.json", CLAUDE_JSON)]);
    let shim = shim_bin();
    let out = tidings(
        home.path(),
        &daemon.socket,
        &[
            "connect",
            "claude-code",
            "--no-check",
            "--shim",
            shim.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");

    // A connection that announces itself as Claude Code.
    let mut c = daemon.client();
    let mark = c.mark();
    c.send(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1"}}}),
    );
    c.wait_for("initialize", mark, |f| is_response(f, &json!("init")));

    let out = tidings(home.path(), &daemon.socket, &["clients"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("claude-code     configured (events + tools), connected now (1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cursor          not configured, not connected now"),
        "{stdout}"
    );

    let out = tidings(
        home.path(),
        &daemon.socket,
        &[
            "connect",
            "--list",
            "--socket",
            daemon.socket.to_str().unwrap(),
        ],
    );
    assert_eq!(text(&out.stdout), stdout, "--list is the same listing");

    let dir = tempfile::tempdir().unwrap();
    let out = tidings(home.path(), &dir.path().join("none.sock"), &["clients"]);
    assert!(text(&out.stdout).contains("no daemon answered"), "{out:?}");
}
