//! [`Processes`]: is a program running? Asked before editing a host's config, which the
//! host reads only at start, to say it must be restarted. [`ProcFs`] reads `/proc` (Linux);
//! [`Pgrep`] asks `pgrep -x` through a [`CommandRunner`] (macOS, which has no `/proc`).

use std::path::Path;

use crate::command::CommandRunner;
use crate::paths::Os;

/// Which of some program names have a running process.
pub trait Processes: Send + Sync {
    /// Whether a process whose name is one of `names` runs (exact match).
    fn any_running(&self, names: &[&str]) -> bool;
}

/// Linux: the names in `/proc/<pid>/comm` (cut to 15 bytes by the kernel) and the file name
/// of `argv[0]` in `/proc/<pid>/cmdline` (Node programs such as `claude` and `codex` show
/// as `node` in `comm`, by their script in `cmdline`).
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: std::path::PathBuf,
}

impl Default for ProcFs {
    fn default() -> Self {
        ProcFs {
            root: "/proc".into(),
        }
    }
}

impl ProcFs {
    /// Reads a `/proc`-shaped tree at `root` (tests lay one out).
    pub fn at(root: impl Into<std::path::PathBuf>) -> Self {
        ProcFs { root: root.into() }
    }

    /// The names one process goes by.
    fn names(dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        if let Ok(comm) = std::fs::read_to_string(dir.join("comm")) {
            names.push(comm.trim_end().to_owned());
        }
        if let Ok(cmdline) = std::fs::read(dir.join("cmdline")) {
            // argv[0], and argv[1] for a script run by an interpreter (`node …/claude`).
            for arg in cmdline.split(|b| *b == 0).take(2) {
                let arg = String::from_utf8_lossy(arg);
                if let Some(name) = Path::new(arg.as_ref()).file_name() {
                    names.push(name.to_string_lossy().into_owned());
                }
            }
        }
        names
    }
}

impl Processes for ProcFs {
    fn any_running(&self, names: &[&str]) -> bool {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return false;
        };
        entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .any(|e| {
                ProcFs::names(&e.path())
                    .iter()
                    .any(|n| names.contains(&n.as_str()))
            })
    }
}

/// macOS: `pgrep -x NAME` per name; exit 0 means one runs. A `pgrep` that cannot run counts
/// as "not running": the warning is advice, never a reason to fail.
pub struct Pgrep<R: CommandRunner> {
    runner: R,
}

impl<R: CommandRunner> Pgrep<R> {
    /// `pgrep` through `runner`.
    pub fn new(runner: R) -> Self {
        Pgrep { runner }
    }

    /// The runner it asks through.
    pub fn runner(&self) -> &R {
        &self.runner
    }
}

impl<R: CommandRunner> Processes for Pgrep<R> {
    fn any_running(&self, names: &[&str]) -> bool {
        names.iter().any(|name| {
            self.runner
                .run("pgrep", &["-x", name])
                .is_ok_and(|out| out.is_success())
        })
    }
}

/// The process check for this OS.
pub fn default_processes() -> Box<dyn Processes> {
    match Os::CURRENT {
        Os::MacOs => Box::new(Pgrep::new(crate::command::SystemRunner)),
        Os::Linux => Box::new(ProcFs::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{CommandOutput, RecordingRunner};

    #[test]
    fn procfs_finds_a_program_by_comm_or_by_script() {
        let root = tempfile::tempdir().unwrap();
        let one = root.path().join("101");
        std::fs::create_dir(&one).unwrap();
        std::fs::write(one.join("comm"), "zed\n").unwrap();
        let two = root.path().join("202");
        std::fs::create_dir(&two).unwrap();
        std::fs::write(two.join("comm"), "node\n").unwrap();
        std::fs::write(
            two.join("cmdline"),
            b"node\0/usr/lib/node_modules/.bin/claude\0--resume\0",
        )
        .unwrap();
        let procs = ProcFs::at(root.path());
        assert!(procs.any_running(&["zed"]));
        assert!(procs.any_running(&["claude"]));
        assert!(!procs.any_running(&["cursor", "code"]));
    }

    #[test]
    fn the_real_proc_sees_this_test() {
        if Os::CURRENT == Os::Linux {
            let me = std::env::current_exe().unwrap();
            let name = me.file_name().unwrap().to_string_lossy().into_owned();
            assert!(ProcFs::default().any_running(&[&name]));
        }
    }

    #[test]
    fn pgrep_asks_per_name_until_one_runs() {
        let runner = RecordingRunner::new();
        runner.push_output(CommandOutput::failure(1, ""));
        runner.push_output(CommandOutput::success());
        let procs = Pgrep::new(runner);
        assert!(procs.any_running(&["Code", "Electron"]));
        let calls: Vec<Vec<String>> = procs.runner().calls().into_iter().map(|c| c.args).collect();
        assert_eq!(calls, [["-x", "Code"], ["-x", "Electron"]]);
    }
}
