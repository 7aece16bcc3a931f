//! A host CLI set up and run: its temporary home and working dir, what it needs there before
//! `tidings connect` adds Tidings' entry, its own command for one prompt, and a run driven to
//! its end with the test's mail written once the model has asked for the wait.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::model_api::ModelApi;
use super::{HOST_RUN, PROMPT, SENDER, clis};
use crate::common::{Daemon, Writer, shim_bin, tidings_bin};

#[derive(Clone, Copy, Debug)]
pub(super) enum Host {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Host {
    /// The name `tidings connect` takes.
    fn connect_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }

    /// The `clientInfo.name` the host announces, which picks its `tidings_wait` ceiling
    /// (`events/pull/hosts.rs`).
    pub(super) fn client_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex-mcp-client",
            Host::Gemini => "gemini-cli-mcp-client",
        }
    }

    /// The model turns the script plays with this host. Claude Code defers MCP tools: its
    /// model sees only their names until its tool search loads them.
    pub(super) fn script(self) -> &'static [&'static str] {
        match self {
            Host::ClaudeCode => &["search", "check", "wait", "final"],
            Host::Codex | Host::Gemini => &["check", "wait", "final"],
        }
    }

    /// What the host needs in its home before `connect` adds Tidings' entry: Codex's model
    /// provider (the scripted API); Gemini CLI's sign-in kind and the working dir trusted
    /// (headless, it refuses to run in a folder it does not trust); Claude Code takes all it
    /// needs from the environment.
    pub(super) fn prepare(self, place: &Place, api: &ModelApi) {
        let write = |path: &str, text: &str| {
            let path = place.home.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        match self {
            Host::ClaudeCode => {}
            Host::Codex => write(
                ".codex/config.toml",
                &format!(
                    "# The scripted model API of the real-host tests; `tidings connect` adds its \
                     entry below.\n\
                     model = \"scripted\"\n\
                     model_provider = \"scripted\"\n\
                     # Run MCP tools without asking: nobody is there to answer.\n\
                     approval_policy = \"never\"\n\
                     sandbox_mode = \"read-only\"\n\n\
                     [model_providers.scripted]\n\
                     name = \"scripted model API\"\n\
                     base_url = \"http://127.0.0.1:{}/v1\"\n\
                     wire_api = \"responses\"\n",
                    api.port
                ),
            ),
            Host::Gemini => {
                // The key from GEMINI_API_KEY, the API at GOOGLE_GEMINI_BASE_URL; nothing sent
                // to Google (usage statistics, update checks).
                let settings = json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                    "privacy": {"usageStatisticsEnabled": false},
                });
                write(".gemini/settings.json", &format!("{settings:#}\n"));
                // What `/permissions trust` writes for the working dir.
                let trusted = json!({place.work.to_str().unwrap(): "TRUST_FOLDER"});
                write(".gemini/trustedFolders.json", &format!("{trusted:#}\n"));
            }
        }
    }

    /// The host's own command for one prompt, in `place`, with only the environment it needs
    /// (no `TIDINGS_SOCKET`, no API key of the developer's).
    pub(super) fn command(self, place: &Place, api: &ModelApi) -> Command {
        let (home, work, tmp) = (&place.home, &place.work, &place.tmp);
        let bin = clis().join("node_modules/.bin");
        let mut c = Command::new(bin.join(match self {
            Host::ClaudeCode => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }));
        c.env_clear()
            .env("HOME", home)
            // Codex's launcher and Gemini CLI are node scripts.
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // What the hosts keep in the temp dir goes with the test's.
            .env("TMPDIR", tmp)
            .current_dir(work)
            .stdin(Stdio::null())
            // A group of its own, so a run that overstays is killed with its children.
            .process_group(0);
        match self {
            Host::ClaudeCode => {
                // `-p` runs one prompt and exits. The tools are allowed by name: Claude Code
                // refuses --dangerously-skip-permissions as root, and CI runs as root.
                c.args(["-p", PROMPT, "--allowedTools"])
                    .arg("mcp__tidings__tidings_check,mcp__tidings__tidings_wait")
                    .env(
                        "ANTHROPIC_BASE_URL",
                        format!("http://127.0.0.1:{}", api.port),
                    )
                    .env("ANTHROPIC_API_KEY", "scripted")
                    // No telemetry, error reports, update checks or release notes.
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1");
            }
            Host::Codex => {
                c.args(["exec", "--skip-git-repo-check", "--color", "never", PROMPT]);
            }
            Host::Gemini => {
                // A model named, so no routing request asks the API to pick one. YOLO runs the
                // tools without asking, as Codex's approval_policy = "never" does.
                c.args(["-m", "scripted", "-p", PROMPT, "--approval-mode", "yolo"])
                    .env(
                        "GOOGLE_GEMINI_BASE_URL",
                        format!("http://127.0.0.1:{}", api.port),
                    )
                    .env("GEMINI_API_KEY", "scripted");
            }
        }
        c
    }
}

/// A temporary home, working dir, log dir and temp dir for one host, under this run's target
/// dir.
pub(super) struct Place {
    _dir: TempDir,
    pub(super) home: PathBuf,
    work: PathBuf,
    pub(super) logs: PathBuf,
    tmp: PathBuf,
}

impl Place {
    pub(super) fn new() -> Place {
        let dir = tempfile::Builder::new()
            .prefix("real-hosts-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let [home, work, logs, tmp] = ["home", "work", "logs", "tmp"].map(|d| dir.path().join(d));
        for d in [&home, &work, &logs, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        Place {
            _dir: dir,
            home,
            work,
            logs,
            tmp,
        }
    }
}

/// `tidings connect HOST --socket S` in `home`, with no `TIDINGS_SOCKET`: the entry names the
/// socket because it is not where the host's `tidings-mcp` would look.
pub(super) fn connect(host: Host, home: &Path, socket: &Path) {
    let out = Command::new(tidings_bin())
        .args(["connect", host.connect_name(), "--socket"])
        .arg(socket)
        .arg("--shim")
        .arg(shim_bin())
        .env("HOME", home)
        .env_remove("TIDINGS_SOCKET")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "tidings connect {host:?}:\n{text}");
}

/// What a host run left: its exit, its output, and what the daemon said of it meanwhile.
pub(super) struct Run {
    pub(super) status: ExitStatus,
    pub(super) output: String,
    /// `tidings status --json` taken when the model asked for the wait (the check done).
    pub(super) state_at_wait: Option<Value>,
    /// The subject of the mail written then.
    pub(super) subject: Option<String>,
}

/// Kills the host's process group if the run ends early (a failed assert, a timeout).
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .status();
            let _ = self.0.wait();
        }
    }
}

/// Runs `command` to its end (at most [`HOST_RUN`]), writing a mail from [`SENDER`] with a
/// subject of its own as soon as the model API has answered with the wait: the check's
/// result is in, so the wait returns this mail whenever it starts.
pub(super) fn drive(mut command: Command, daemon: &Daemon, api: &ModelApi, logs: &Path) -> Run {
    let out_path = logs.join("host.out");
    let err_path = logs.join("host.err");
    let child = command
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("spawn the host");
    let mut group = Group(child);
    let output = || {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            std::fs::read_to_string(&err_path).unwrap_or_default()
        )
    };
    let deadline = Instant::now() + HOST_RUN;
    let mut state_at_wait = None;
    let mut subject = None;
    let status = loop {
        match api.served.recv_timeout(Duration::from_millis(100)) {
            Ok(line) if line.ends_with(" wait") && subject.is_none() => {
                state_at_wait = Some(status_json(daemon));
                let s = format!(
                    "Invoice 4471 for the real_hosts test ({})",
                    std::process::id()
                );
                Writer::new(daemon.home()).mail_titled(SENDER, &s);
                subject = Some(s);
            }
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => panic!("the model API exited"),
        }
        if let Some(status) = group.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the host ran past {HOST_RUN:?}; {}",
            output()
        );
    };
    Run {
        status,
        output: output(),
        state_at_wait,
        subject,
    }
}

/// `tidings status --json` on the daemon.
fn status_json(daemon: &Daemon) -> Value {
    let out = Command::new(tidings_bin())
        .args(["status", "--json", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(out.status.success(), "tidings status: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}
