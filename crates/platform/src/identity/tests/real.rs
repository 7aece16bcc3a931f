//! The walk over the real `/proc`, from processes this test starts.

use super::*;

/// A child process that is killed when the test ends, pass or fail.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Child {
    /// Starts `command` and waits until its new argument list shows `arg`: spawn returns
    /// once the new program is mapped, a moment before the kernel publishes its arguments.
    /// A process that never shows it fails the test (after a generous 10 s).
    fn start(command: &mut std::process::Command, arg: &str) -> (Self, i32) {
        let child = Child(command.spawn().unwrap());
        let pid = i32::try_from(child.0.id()).unwrap();
        let table = ProcFsTable::default();
        for _ in 0..1000 {
            if table
                .args(pid)
                .is_some_and(|args| args.iter().any(|a| a == arg))
            {
                return (child, pid);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("pid {pid} never showed {arg:?} in its arguments");
    }
}

#[test]
fn the_real_proc_walks_from_a_shell_to_this_test() {
    // `; exit 0` keeps the shell from replacing itself with `sleep`.
    let (_child, pid) = Child::start(
        std::process::Command::new("/bin/sh").args(["-c", "sleep 30; exit 0"]),
        "sleep 30; exit 0",
    );
    let agent = default_identifier().identify(pid, crate::paths::current_uid());
    let me = std::env::current_exe().unwrap().canonicalize().unwrap();
    assert_eq!(agent.key, format!("exe:{}", me.display()));
    assert_eq!(agent.program, Some(me));
    // Someone else's view of the same chain is refused.
    assert!(
        default_identifier()
            .identify(pid, crate::paths::current_uid() + 1)
            .is_unidentified()
    );
}

#[test]
fn the_real_proc_names_a_python_script_by_its_path() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("host_a.py"),
        "import time\ntime.sleep(30)\n",
    )
    .unwrap();
    // The interpreter itself: `python3` on PATH may be a launcher script (pyenv's shim) that
    // only becomes Python once it has run.
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 on PATH");
    let python = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let (_child, pid) = Child::start(
        std::process::Command::new(&python)
            .arg("host_a.py")
            .current_dir(work.path()),
        "host_a.py",
    );
    let agent = default_identifier().identify(pid, crate::paths::current_uid());
    let script = work.path().canonicalize().unwrap().join("host_a.py");
    let exe = python.canonicalize().unwrap();
    assert_eq!(
        agent.key,
        format!("exe:{} script:{}", exe.display(), script.display())
    );
    // As it was started: `python3`, not the `python3.12` its symlinks end at.
    let started = python.file_name().unwrap().to_string_lossy();
    assert_eq!(agent.name, format!("{started} host_a.py"));
}
