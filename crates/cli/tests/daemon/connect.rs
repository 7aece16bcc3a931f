//! `tidings connect` / `disconnect` / `clients` on temporary homes with existing configs:
//! other servers and comments kept byte for byte, a backup made, a malformed file refused
//! and left untouched, and the check run through the real `tidings-mcp` against a demo
//! daemon, with its failures (no daemon, a shim that cannot run) reported; the same for
//! Gemini CLI (JSON with comments), Goose (YAML), Windsurf and LM Studio (its home pointer
//! followed), with `clients` and `doctor` reading their entries back.

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
    let socket_arg = daemon.socket.to_str().unwrap();
    assert!(
        stdout.contains(&format!(
            "claude mcp add --scope user tidings -- {shim_arg} --socket {socket_arg}"
        )),
        "{stdout}"
    );

    // The demo's socket is not the default, and a TIDINGS_SOCKET set for this command is
    // gone when the host starts: the entry names the socket.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["tidings"],
        json!({"command": shim_arg, "args": ["--socket", socket_arg]})
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

/// Codex starts its servers with a short list of variables: the entry `connect` writes must
/// reach the daemon without `TIDINGS_SOCKET` or `XDG_RUNTIME_DIR`, and the check runs the
/// shim in that same environment, so it cannot say "Connected" for an entry Codex cannot use.
#[test]
fn the_codex_check_runs_in_codexs_environment() {
    let daemon = Daemon::start();
    let home = home_with(&[]);
    let shim = shim_bin();
    let out = tidings(
        home.path(),
        &daemon.socket,
        &["connect", "codex", "--shim", shim.to_str().unwrap()],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stdout).contains("Connected ✓"), "{out:?}");
    let file = home.path().join(".codex/config.toml");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains(&format!(
            "args = [\"--socket\", {:?}]",
            daemon.socket.to_str().unwrap()
        )),
        "{written}"
    );

    // The same entry without its socket: the shim under Codex's environment looks elsewhere,
    // and `doctor`'s per-host check (the same check) says so, however the caller's
    // environment would have found the daemon.
    let bare = format!(
        "[mcp_servers.tidings]\ncommand = {:?}\nargs = []\n",
        shim.to_str().unwrap()
    );
    std::fs::write(&file, bare).unwrap();
    let out = tidings(
        home.path(),
        &daemon.socket,
        &[
            "connect",
            "codex",
            "--shim",
            shim.to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert!(
        text(&out.stdout).contains("+ args = [\"--socket\""),
        "connect would name the socket again: {out:?}"
    );
    let out = tidings(home.path(), &daemon.socket, &["doctor"]);
    let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        report.contains("Tidings is not running") && report.contains("--socket PATH"),
        "{report}"
    );
}

const GEMINI: &str = "// Gemini CLI settings\n{\n  \"ui\": {\"theme\": \"GitHub\"}, /* mine */\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\", \"args\": []}\n  }\n}\n";
const GOOSE: &str = "# Goose, configured by hand\nGOOSE_PROVIDER: anthropic   # the provider\nextensions:\n  # built in\n  developer:\n    enabled: true\n    type: builtin\n    name: developer\n    timeout: 300\n  github:\n    args:\n    - -y\n    - '@modelcontextprotocol/server-github'\n    cmd: npx   # from npm\n    enabled: false\n    envs: {}\n    type: stdio\n# the end\nGOOSE_MODE: smart_approve\n";
const WINDSURF: &str =
    "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh\", \"args\": [\"mcp\"]}\n  }\n}\n";
const LM_STUDIO: &str = "{\n  \"mcpServers\": {}\n}\n";

/// A home holding a config for each of the four hosts added last, LM Studio's in a home
/// folder its pointer file names (as the app writes it when the home was moved).
fn home_for_the_newer_hosts() -> tempfile::TempDir {
    let home = home_with(&[
        (".gemini/settings.json", GEMINI),
        (".config/goose/config.yaml", GOOSE),
        (".codeium/windsurf/mcp_config.json", WINDSURF),
        ("LM Studio Home/mcp.json", LM_STUDIO),
        (".lmstudio/settings.json", "{}"),
    ]);
    let pointer = home.path().join("LM Studio Home");
    std::fs::write(
        home.path().join(".lmstudio-home-pointer"),
        pointer.to_str().unwrap(),
    )
    .unwrap();
    home
}

/// Checks `file` after `tidings connect client`: every comment of `original` kept, and the
/// entry starting `shim` with `--socket socket` (the test daemon's is not the default, so it
/// lands in the args, as for every host).
fn assert_entry_written(client: &str, file: &Path, original: &str, shim: &str, socket: &str) {
    let written = std::fs::read_to_string(file).unwrap();
    for line in original
        .lines()
        .filter(|l| l.contains("//") || l.contains("/*") || l.contains('#'))
    {
        assert!(written.contains(line), "{client} lost {line:?}:\n{written}");
    }
    if client == "goose" {
        assert!(written.contains(&format!("    cmd: {shim}\n")), "{written}");
        assert!(written.contains("    type: stdio\n"), "{written}");
        assert!(written.contains(socket), "{written}");
        assert!(written.starts_with(&GOOSE[..GOOSE.find("# the end").unwrap()]));
    } else {
        // Gemini's file keeps its comments; strip them for serde_json.
        let json = if client == "gemini" {
            written
                .split_once('\n')
                .unwrap()
                .1
                .replace("/* mine */", "")
        } else {
            written.clone()
        };
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value["mcpServers"]["tidings"],
            json!({"command": shim, "args": ["--socket", socket]}),
            "{client}"
        );
    }
}

#[test]
fn gemini_goose_windsurf_and_lm_studio_connect_check_and_disconnect_cleanly() {
    let daemon = Daemon::start();
    let home = home_for_the_newer_hosts();
    let shim = shim_bin();
    let shim_arg = shim.to_str().unwrap();
    let socket = daemon.socket.to_str().unwrap();
    let cases = [
        ("gemini", ".gemini/settings.json", GEMINI),
        ("goose", ".config/goose/config.yaml", GOOSE),
        ("windsurf", ".codeium/windsurf/mcp_config.json", WINDSURF),
        ("lm-studio", "LM Studio Home/mcp.json", LM_STUDIO),
    ];
    for (client, path, original) in cases {
        let out = tidings(
            home.path(),
            &daemon.socket,
            &["connect", client, "--shim", shim_arg],
        );
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{client}: {out:?}");
        assert!(
            stdout.contains("Connected ✓ (tools: tidings_check, tidings_wait)"),
            "{client}: {stdout}"
        );
        assert_eq!(
            stdout.contains("only in folders it trusts"),
            client == "gemini",
            "{client}: {stdout}"
        );
        let file = home.path().join(path);
        assert_entry_written(client, &file, original, shim_arg, socket);
        assert_eq!(backups(&file).len(), 1, "{client}");
    }

    // The listing reads all four back, Goose's `cmd` included.
    let out = tidings(home.path(), &daemon.socket, &["clients", "--json"]);
    let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (client, path, _) in cases {
        let row = listing["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == client)
            .unwrap_or_else(|| panic!("{client} not listed: {listing}"));
        assert_eq!(row["configured"], "tools", "{row}");
        assert_eq!(row["command"], shim_arg, "{row}");
        assert_eq!(
            row["path"],
            home.path().join(path).to_str().unwrap(),
            "{row}"
        );
    }

    // Doctor checks each configured host the way it would start it.
    let out = Command::new(tidings_bin())
        .args(["doctor", "--demo-dir"])
        .arg(&daemon.dir)
        .env("HOME", home.path())
        .env_remove("TIDINGS_SOCKET")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let report = text(&out.stdout);
    for client in ["gemini", "goose", "windsurf", "lm-studio"] {
        let line = report
            .lines()
            .find(|l| l.contains(&format!("client {client} ")))
            .unwrap_or_else(|| panic!("no check for {client}:\n{report}"));
        assert!(line.starts_with("[ok]"), "{line}\n{report}");
    }

    // Disconnect takes out Tidings' entry and nothing else.
    for (client, path, original) in cases {
        let out = tidings(home.path(), &daemon.socket, &["disconnect", client]);
        assert!(out.status.success(), "{client}: {out:?}");
        let after = std::fs::read_to_string(home.path().join(path)).unwrap();
        assert_eq!(after, original, "{client}");
    }
}

#[test]
fn malformed_yaml_and_a_trailing_comma_for_gemini_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let bad_yaml = "extensions:\n  developer:\n    enabled: true\n   type: builtin\n";
    let trailing = "{\n  \"mcpServers\": {},\n}\n";
    let home = home_with(&[
        (".config/goose/config.yaml", bad_yaml),
        (".gemini/settings.json", trailing),
    ]);
    let shim = shim_bin();
    for (client, path, bad, says) in [
        (
            "goose",
            ".config/goose/config.yaml",
            bad_yaml,
            "config.yaml is not valid YAML (line 4, column 4",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            trailing,
            "settings.json is not valid JSON (line 2, column 19",
        ),
    ] {
        let out = tidings(
            home.path(),
            &dir.path().join("none.sock"),
            &["connect", client, "--shim", shim.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(CONFIG), "{client}: {out:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(says), "{client}: {stderr}");
        assert!(stderr.contains("left untouched"), "{stderr}");
        let file = home.path().join(path);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
        assert!(backups(&file).is_empty());
    }

    // An alias inside `extensions` is valid YAML we do not edit: refused, with where.
    let aliased = "defaults: &d {enabled: true}\nextensions:\n  developer: *d\n";
    std::fs::write(home.path().join(".config/goose/config.yaml"), aliased).unwrap();
    let out = tidings(
        home.path(),
        &dir.path().join("none.sock"),
        &["connect", "goose", "--shim", shim.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("uses a YAML alias inside `extensions` (line 3, column 14)"),
        "{stderr}"
    );
    assert!(stderr.contains("--print-config --client goose"), "{stderr}");
}
