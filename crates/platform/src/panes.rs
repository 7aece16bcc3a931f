//! Opening System Settings at the pane a fix needs (Full Disk Access, Login Items), through the [`CommandRunner`], so tests
//! see the exact command. macOS has no API that asks for Full Disk Access: the user adds
//! Tidings to the list, and the best an app can do is open the pane.

use crate::command::CommandRunner;
use crate::paths::Os;

/// The Full Disk Access pane of System Settings (Privacy & Security); still opens the right
/// pane on macOS 13+.
pub const FULL_DISK_ACCESS_URL: &str =
    "x-apple.systempreferences:com.apple.preference.security?Privacy_AllFiles";

/// The Login Items pane of System Settings (macOS 13+), where a login item that "requires
/// approval" is allowed.
pub const LOGIN_ITEMS_URL: &str =
    "x-apple.systempreferences:com.apple.LoginItems-Settings.extension";

/// Why the pane did not open.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PaneError {
    /// The opener could not be started (no `open` or `xdg-open` on the PATH).
    #[error("cannot run {program} to open {url}: {source}; open it by hand")]
    Spawn {
        /// `open` or `xdg-open`.
        program: &'static str,
        /// What it was asked to open.
        url: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The opener ran and failed.
    #[error("{program} could not open {url} (exit {code:?}): {stderr}; open it by hand")]
    Failed {
        /// `open` or `xdg-open`.
        program: &'static str,
        /// What it was asked to open.
        url: String,
        /// Its exit code.
        code: Option<i32>,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// The program that opens a URL on `os`: macOS `open`, Linux `xdg-open`.
pub fn opener(os: Os) -> &'static str {
    match os {
        Os::MacOs => "open",
        Os::Linux => "xdg-open",
    }
}

/// Open the Full Disk Access pane. On Linux, where there is no such pane, the same call goes
/// to `xdg-open` (which says it cannot open the URL): one control flow on both.
pub fn open_full_disk_access(runner: &dyn CommandRunner, os: Os) -> Result<(), PaneError> {
    open_url(runner, os, FULL_DISK_ACCESS_URL)
}

/// Open the Login Items pane. On Linux, where a login item is a systemd unit with nothing to
/// approve, the same call goes to `xdg-open`: one control flow on both.
pub fn open_login_items(runner: &dyn CommandRunner, os: Os) -> Result<(), PaneError> {
    open_url(runner, os, LOGIN_ITEMS_URL)
}

/// Open `url` with the OS's opener.
pub fn open_url(runner: &dyn CommandRunner, os: Os, url: &str) -> Result<(), PaneError> {
    let program = opener(os);
    let out = runner
        .run(program, &[url])
        .map_err(|source| PaneError::Spawn {
            program,
            url: url.to_owned(),
            source,
        })?;
    if out.is_success() {
        Ok(())
    } else {
        Err(PaneError::Failed {
            program,
            url: url.to_owned(),
            code: out.code,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{CommandOutput, RecordingRunner};

    #[test]
    fn each_pane_opens_with_each_os_opener() {
        type Open = fn(&dyn CommandRunner, Os) -> Result<(), PaneError>;
        let panes: [(Open, &str); 2] = [
            (open_full_disk_access, FULL_DISK_ACCESS_URL),
            (
                open_login_items,
                "x-apple.systempreferences:com.apple.LoginItems-Settings.extension",
            ),
        ];
        for (open, url) in panes {
            for (os, program) in [(Os::MacOs, "open"), (Os::Linux, "xdg-open")] {
                let runner = RecordingRunner::new();
                runner.push_output(CommandOutput::success());
                open(&runner, os).unwrap();
                let calls = runner.calls();
                assert_eq!(calls.len(), 1);
                assert_eq!(calls[0].program, program);
                assert_eq!(calls[0].args, [url]);
            }
        }
    }

    #[test]
    fn a_failed_or_missing_opener_is_an_error_naming_it() {
        let runner = RecordingRunner::new();
        runner.push_output(CommandOutput::failure(4, "no handler"));
        let e = open_full_disk_access(&runner, Os::Linux).unwrap_err();
        assert!(e.to_string().contains("xdg-open could not open"), "{e}");
        assert!(e.to_string().contains("no handler"), "{e}");
        let runner = RecordingRunner::new();
        runner.push_error(std::io::ErrorKind::NotFound);
        let e = open_full_disk_access(&runner, Os::MacOs).unwrap_err();
        assert!(e.to_string().contains("cannot run open"), "{e}");
    }
}
