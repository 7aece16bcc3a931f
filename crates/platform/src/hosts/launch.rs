//! What an entry starts ([`Launch`]: the shim, its mode, the socket when it must be named)
//! and where the shim is found.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Host, MACOS_APP_SHIM, Mode, SHIM};
use crate::paths::Os;

/// What an entry starts: the shim, in a mode, told which socket to use when the host's
/// environment would not lead it to the daemon's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch<'a> {
    /// The absolute path of `tidings-mcp`.
    pub shim: &'a Path,
    /// What it serves.
    pub mode: Mode,
    /// `--socket PATH` for the entry; `None` when the shim finds the daemon's socket by
    /// itself in the host's environment ([`super::socket_arg`]).
    pub socket: Option<&'a Path>,
}

impl<'a> Launch<'a> {
    /// The shim in `mode`, finding the socket by itself.
    pub const fn new(shim: &'a Path, mode: Mode) -> Launch<'a> {
        Launch {
            shim,
            mode,
            socket: None,
        }
    }

    /// The shim in `mode` for `host`, naming `socket` unless that host's shim finds it by
    /// itself, judged from this process's environment ([`super::socket_arg`]): what
    /// `tidings connect`, the app and `--print-config` write.
    pub fn reaching(host: Host, shim: &'a Path, mode: Mode, socket: &'a Path) -> Launch<'a> {
        Launch::reaching_in(host, shim, mode, socket, &|name| std::env::var_os(name))
    }

    /// [`Launch::reaching`], judged from the environment `env` reads (`HOME`, the runtime
    /// directory): for a test, or a caller that answers for another environment.
    pub fn reaching_in(
        host: Host,
        shim: &'a Path,
        mode: Mode,
        socket: &'a Path,
        env: &impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Launch<'a> {
        Launch::new(shim, mode).with_socket(super::socket_arg(host, socket, env))
    }

    /// The same, naming `socket` (or not, for `None`).
    #[must_use]
    pub const fn with_socket(self, socket: Option<&'a Path>) -> Launch<'a> {
        Launch { socket, ..self }
    }

    /// The shim's arguments: `--socket PATH` when needed, then the mode's.
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(socket) = self.socket {
            args.push("--socket".to_owned());
            args.push(socket.display().to_string());
        }
        args.extend(self.mode.args());
        args
    }
}

/// Where the shim is, for an entry: beside the running executable (the app bundle's
/// `Contents/MacOS`, or a build's `target/…`), else in the installed app on macOS, else the
/// first on `path` (`PATH`). Absolute, or `None` when there is none.
pub fn find_shim(exe: Option<&Path>, os: Os, path: Option<&OsStr>) -> Option<PathBuf> {
    let beside = exe
        .and_then(Path::parent)
        .map(|dir| dir.join(SHIM))
        .filter(|p| p.is_file());
    let app = (os == Os::MacOs)
        .then(|| PathBuf::from(MACOS_APP_SHIM))
        .filter(|p| p.is_file());
    let on_path = || {
        std::env::split_paths(path?)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(SHIM))
            .find(|p| p.is_file())
    };
    beside.or(app).or_else(on_path)
}

/// [`find_shim`] for this process.
pub fn current_shim() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let path = std::env::var_os("PATH");
    find_shim(exe.as_deref(), Os::CURRENT, path.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_beside_the_executable_comes_first() {
        let beside = tempfile::tempdir().unwrap();
        let on_path = tempfile::tempdir().unwrap();
        std::fs::write(on_path.path().join(SHIM), "").unwrap();
        let path = std::env::join_paths([on_path.path()]).unwrap();
        let exe = beside.path().join("tidings");
        assert_eq!(
            find_shim(Some(&exe), Os::Linux, Some(&path)),
            Some(on_path.path().join(SHIM))
        );
        std::fs::write(beside.path().join(SHIM), "").unwrap();
        assert_eq!(
            find_shim(Some(&exe), Os::Linux, Some(&path)),
            Some(beside.path().join(SHIM))
        );
        assert_eq!(find_shim(None, Os::Linux, None), None);
    }
}
