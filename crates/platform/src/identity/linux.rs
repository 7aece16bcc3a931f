//! Linux's side of identity: [`ProcFsTable`] reads a process from `/proc` (or a
//! `/proc`-shaped tree tests lay out), and [`NoCodeSigning`], since Linux programs carry no
//! signature to go by.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{CodeSigning, MAX_ARGS_BYTES, ProcessTable, Signing};

/// A process table read from `/proc/<pid>/`: `status` (`PPid:`, `Uid:`), the `exe` and
/// `cwd` links, and `cmdline`.
#[derive(Debug, Clone)]
pub struct ProcFsTable {
    root: PathBuf,
}

impl Default for ProcFsTable {
    fn default() -> Self {
        ProcFsTable {
            root: "/proc".into(),
        }
    }
}

impl ProcFsTable {
    /// Reads a `/proc`-shaped tree at `root` (tests lay one out).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ProcFsTable { root: root.into() }
    }

    fn dir(&self, pid: i32) -> Option<PathBuf> {
        (pid > 0).then(|| self.root.join(pid.to_string()))
    }

    /// The first field of a `Name:\t…` line of `status`.
    fn status_field(&self, pid: i32, name: &str) -> Option<String> {
        let status = std::fs::read_to_string(self.dir(pid)?.join("status")).ok()?;
        status.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key == name).then(|| value.split_whitespace().next().map(str::to_owned))?
        })
    }

    /// A link under the process's directory; the kernel appends " (deleted)" when the file
    /// is gone (a program upgraded while it runs), which is not part of the path.
    fn link(&self, pid: i32, name: &str) -> Option<PathBuf> {
        let target = std::fs::read_link(self.dir(pid)?.join(name)).ok()?;
        let text = target.to_string_lossy();
        match text.strip_suffix(" (deleted)") {
            Some(path) => Some(PathBuf::from(path)),
            None => Some(target),
        }
    }
}

impl ProcessTable for ProcFsTable {
    fn parent(&self, pid: i32) -> Option<i32> {
        self.status_field(pid, "PPid")?.parse().ok()
    }

    fn uid(&self, pid: i32) -> Option<u32> {
        // `Uid:` lists real, effective, saved and filesystem ids; the socket peer's
        // credentials are the effective one, so that is what must match.
        let status = std::fs::read_to_string(self.dir(pid)?.join("status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("Uid:"))?;
        line["Uid:".len()..].split_whitespace().nth(1)?.parse().ok()
    }

    fn exe(&self, pid: i32) -> Option<PathBuf> {
        self.link(pid, "exe").filter(|p| p.is_absolute())
    }

    fn args(&self, pid: i32) -> Option<Vec<String>> {
        let file = std::fs::File::open(self.dir(pid)?.join("cmdline")).ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_ARGS_BYTES as u64)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(split_nul(&bytes))
    }

    fn cwd(&self, pid: i32) -> Option<PathBuf> {
        self.link(pid, "cwd")
    }
}

/// NUL-separated arguments as lossy UTF-8 (a trailing NUL ends the last one, it does not
/// start an empty one).
pub(super) fn split_nul(bytes: &[u8]) -> Vec<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Linux's code signing: there is none to go by, so every program is known by its path.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCodeSigning;

impl CodeSigning for NoCodeSigning {
    fn signing(&self, _program: &Path) -> Option<Signing> {
        None
    }
}
