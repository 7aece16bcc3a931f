//! Tests for identity: here the walk over a fake `/proc` laid out in a temporary directory;
//! the interpreter rules and ids ([`rules`]), signing and the macOS parsers with recorded
//! output ([`macos`]), and the walk over the real `/proc` ([`real`]).

mod macos;
#[cfg(target_os = "linux")]
mod real;
mod rules;

use std::path::{Path, PathBuf};

use super::script::{Interpreter, Target};
use super::*;
use crate::command::{CommandOutput, RecordingRunner};

const UID: u32 = 1000;

/// A `/proc`-shaped tree in a temporary directory, plus a directory for scripts.
struct FakeProc {
    root: tempfile::TempDir,
}

impl FakeProc {
    fn new() -> Self {
        FakeProc {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn table(&self) -> ProcFsTable {
        ProcFsTable::at(self.root.path())
    }

    /// Lays out one process: `status`, the `exe` link, `cmdline` and, if given, `cwd`.
    fn process(&self, pid: i32, ppid: i32, uid: u32, exe: &str, args: &[&str]) -> PathBuf {
        let cmdline: Vec<u8> = args
            .iter()
            .flat_map(|a| [a.as_bytes(), b"\0"])
            .flatten()
            .copied()
            .collect();
        self.raw_process(pid, ppid, uid, Some(exe), &cmdline)
    }

    fn raw_process(
        &self,
        pid: i32,
        ppid: i32,
        uid: u32,
        exe: Option<&str>,
        cmdline: &[u8],
    ) -> PathBuf {
        let dir = self.root.path().join(pid.to_string());
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("status"),
            format!("Name:\tx\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
        )
        .unwrap();
        if let Some(exe) = exe {
            std::os::unix::fs::symlink(exe, dir.join("exe")).unwrap();
        }
        std::fs::write(dir.join("cmdline"), cmdline).unwrap();
        dir
    }

    fn identify(&self, pid: i32) -> AgentIdentity {
        identify(pid, UID, &self.table(), &NoCodeSigning)
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

#[test]
fn the_walk_skips_the_shim_and_shells_to_the_program() {
    let procs = FakeProc::new();
    procs.process(100, 90, UID, "/usr/local/bin/tidings-mcp", &["tidings-mcp"]);
    procs.process(90, 80, UID, "/usr/bin/dash", &["sh", "-c", "tidings-mcp"]);
    procs.process(80, 70, UID, "/usr/bin/env", &["env", "FOO=1"]);
    procs.process(70, 1, UID, "/opt/agent/bin/claude", &["claude", "--resume"]);
    let agent = procs.identify(100);
    assert_eq!(agent.key, "exe:/opt/agent/bin/claude");
    assert_eq!(agent.name, "claude");
    assert_eq!(agent.signer, None);
    assert_eq!(
        agent.program.as_deref(),
        Some(Path::new("/opt/agent/bin/claude"))
    );
    assert_eq!(agent.id(), agent_id("claude", "exe:/opt/agent/bin/claude"));
    assert!(agent.id().starts_with("claude-"));
}

#[test]
fn a_program_replaced_while_it_runs_keeps_its_path() {
    let procs = FakeProc::new();
    procs.process(70, 1, UID, "/opt/agent/bin/claude (deleted)", &["claude"]);
    assert_eq!(procs.identify(70).key, "exe:/opt/agent/bin/claude");
}

#[test]
fn an_interpreter_is_known_by_its_script_resolved_against_its_cwd() {
    let procs = FakeProc::new();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("host_a.py"), "").unwrap();
    procs.process(100, 90, UID, "/usr/local/bin/tidings-mcp", &["tidings-mcp"]);
    let dir = procs.process(
        90,
        1,
        UID,
        "/usr/bin/python3.12",
        &["python3", "-u", "host_a.py", "--flag"],
    );
    std::os::unix::fs::symlink(work.path(), dir.join("cwd")).unwrap();
    let agent = procs.identify(100);
    let script = work.path().canonicalize().unwrap().join("host_a.py");
    assert_eq!(
        agent.key,
        format!("exe:/usr/bin/python3.12 script:{}", script.display())
    );
    assert_eq!(agent.name, "python3 host_a.py");
    assert_eq!(agent.program, Some(script));
}

#[test]
fn a_module_or_inline_code_names_the_interpreter() {
    let procs = FakeProc::new();
    procs.process(
        90,
        1,
        UID,
        "/usr/bin/python3.12",
        &["python3", "-m", "http.server"],
    );
    procs.process(
        91,
        1,
        UID,
        "/usr/bin/python3.12",
        &["/usr/bin/python3.12", "-c", "print(1)"],
    );
    let module = procs.identify(90);
    assert_eq!(module.key, "exe:/usr/bin/python3.12 module:http.server");
    assert_eq!(module.name, "python3 -m http.server");
    let inline = procs.identify(91);
    assert_eq!(inline.key, "exe:/usr/bin/python3.12");
    assert_eq!(inline.name, "python3.12");
}

#[test]
fn npx_is_passed_through_and_a_node_package_is_named_by_its_package() {
    let procs = FakeProc::new();
    procs.process(100, 90, UID, "/usr/local/bin/tidings-mcp", &["tidings-mcp"]);
    procs.process(
        90,
        80,
        UID,
        "/usr/bin/node",
        &[
            "node",
            "/usr/lib/node_modules/npm/bin/npx-cli.js",
            "-y",
            "x",
        ],
    );
    let cli = "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js";
    procs.process(80, 1, UID, "/usr/bin/node", &["node", "--no-warnings", cli]);
    let agent = procs.identify(100);
    assert_eq!(agent.key, format!("exe:/usr/bin/node script:{cli}"));
    assert_eq!(agent.name, "claude-code");
}

#[test]
fn another_users_process_stops_the_walk() {
    let procs = FakeProc::new();
    procs.process(100, 90, UID, "/usr/local/bin/tidings-mcp", &["tidings-mcp"]);
    procs.process(90, 1, 0, "/usr/bin/claude", &["claude"]);
    assert!(procs.identify(100).is_unidentified());
    // The peer itself under another user, even a program that would otherwise count.
    assert!(identify(90, UID, &procs.table(), &NoCodeSigning).is_unidentified());
    assert_eq!(
        identify(90, 0, &procs.table(), &NoCodeSigning).key,
        "exe:/usr/bin/claude"
    );
}

#[test]
fn a_vanished_or_unreadable_process_stops_the_walk() {
    let procs = FakeProc::new();
    procs.process(100, 90, UID, "/usr/local/bin/tidings-mcp", &["tidings-mcp"]);
    assert!(procs.identify(100).is_unidentified(), "parent 90 is gone");
    procs.raw_process(90, 1, UID, None, b"claude\0");
    assert!(
        procs.identify(100).is_unidentified(),
        "90's exe cannot be read"
    );
    assert!(
        procs.identify(4242).is_unidentified(),
        "the peer itself is gone"
    );
}

#[test]
fn init_and_nonsense_pids_are_unidentified() {
    let procs = FakeProc::new();
    procs.process(100, 1, UID, "/usr/bin/bash", &["bash"]);
    assert!(procs.identify(100).is_unidentified());
    assert!(procs.identify(0).is_unidentified());
    assert!(procs.identify(-5).is_unidentified());
}

#[test]
fn a_loop_or_a_chain_deeper_than_the_limit_is_unidentified() {
    let procs = FakeProc::new();
    procs.process(100, 101, UID, "/usr/bin/bash", &["bash"]);
    procs.process(101, 100, UID, "/usr/bin/bash", &["bash"]);
    assert!(procs.identify(100).is_unidentified());
    procs.process(102, 102, UID, "/usr/bin/bash", &["bash"]);
    assert!(procs.identify(102).is_unidentified(), "its own parent");

    // Shells at 200..200+n, each the child of the next, over a program.
    let chain = |base: i32, shells: i32| {
        for i in 0..shells {
            procs.process(base + i, base + i + 1, UID, "/bin/sh", &["sh"]);
        }
        procs.process(base + shells, 1, UID, "/usr/bin/claude", &["claude"]);
    };
    let limit = i32::try_from(MAX_STEPS).unwrap();
    chain(200, limit - 1);
    assert_eq!(
        procs.identify(200).key,
        "exe:/usr/bin/claude",
        "the program is step 16"
    );
    chain(300, limit);
    assert!(
        procs.identify(300).is_unidentified(),
        "the program would be step 17"
    );
}

#[test]
fn odd_bytes_and_huge_argument_lists_are_read_safely() {
    let procs = FakeProc::new();
    procs.raw_process(
        90,
        1,
        UID,
        Some("/usr/bin/node"),
        b"node\0/srv/\xff\xfe.js\0",
    );
    let agent = procs.identify(90);
    assert_eq!(
        agent.key,
        "exe:/usr/bin/node script:/srv/\u{fffd}\u{fffd}.js"
    );

    let mut huge = b"node\0".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 3 * MAX_ARGS_BYTES));
    procs.raw_process(91, 1, UID, Some("/usr/bin/node"), &huge);
    let args = procs.table().args(91).unwrap();
    assert_eq!(
        args.iter().map(String::len).sum::<usize>() + args.len() - 1,
        MAX_ARGS_BYTES
    );
    assert!(
        procs
            .identify(91)
            .key
            .starts_with("exe:/usr/bin/node script:")
    );
}
