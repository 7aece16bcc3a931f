//! [`Launcher`]: how the shim asks the OS to start the daemon when nothing answers on the
//! socket. [`Launchd`] (macOS) and [`NoLauncher`] (Linux) sit side by side; only
//! [`default_launcher`] is chosen by `cfg`.

use crate::command::{CommandRunner, SystemRunner};
use crate::error::LauncherError;
use crate::paths::{BUNDLE_ID, current_uid};

/// What came of asking the OS to start the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartRequest {
    /// The OS accepted the request; the daemon should appear on the socket shortly, so the
    /// caller retries its connect for a few seconds.
    Requested,
    /// This platform has no way to start it for us; the caller gives up at once.
    NotAvailable,
}

/// Asks the OS to start the Tidings daemon.
pub trait Launcher: Send + Sync {
    /// Requests a start and returns without waiting for the daemon to be ready.
    fn request_start(&self) -> Result<StartRequest, LauncherError>;
}

/// macOS: `launchctl kickstart gui/<uid>/dev.tidings.Tidings`, which starts the `LaunchAgent`
/// the app installed (or does nothing if it is already running).
#[derive(Debug)]
pub struct Launchd<R: CommandRunner> {
    runner: R,
    uid: u32,
}

impl<R: CommandRunner> Launchd<R> {
    /// A launcher that runs `launchctl` through `runner` for the GUI session of `uid`.
    pub fn new(runner: R, uid: u32) -> Self {
        Self { runner, uid }
    }

    /// The service target, `gui/<uid>/<label>`.
    fn target(&self) -> String {
        format!("gui/{}/{BUNDLE_ID}", self.uid)
    }
}

impl Launchd<SystemRunner> {
    /// The real launcher for the current user.
    pub fn system() -> Self {
        Self::new(SystemRunner, current_uid())
    }
}

impl<R: CommandRunner> Launcher for Launchd<R> {
    fn request_start(&self) -> Result<StartRequest, LauncherError> {
        const PROGRAM: &str = "launchctl";
        let target = self.target();
        // No `-k`: if the daemon is running but slow to answer, killing it would make
        // things worse; without `-k` kickstart only starts a stopped service.
        let args = ["kickstart", target.as_str()];
        let output = self
            .runner
            .run(PROGRAM, &args)
            .map_err(|source| LauncherError::spawn(PROGRAM, source))?;
        if output.is_success() {
            return Ok(StartRequest::Requested);
        }
        Err(LauncherError::failed(PROGRAM, &args, &output))
    }
}

/// Linux: nothing starts the daemon on demand, so the shim reports at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLauncher;

impl Launcher for NoLauncher {
    fn request_start(&self) -> Result<StartRequest, LauncherError> {
        Ok(StartRequest::NotAvailable)
    }
}

/// The launcher for the platform this was compiled for.
pub fn default_launcher() -> Box<dyn Launcher> {
    #[cfg(target_os = "macos")]
    {
        Box::new(Launchd::system())
    }
    #[cfg(not(target_os = "macos"))]
    {
        Box::new(NoLauncher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{CommandOutput, RecordingRunner};

    #[test]
    fn launchd_kickstarts_the_gui_agent_for_the_uid() {
        let launcher = Launchd::new(RecordingRunner::new(), 501);
        assert_eq!(launcher.request_start().unwrap(), StartRequest::Requested);

        let calls = launcher.runner.calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].program, "launchctl");
        assert_eq!(calls[0].args, ["kickstart", "gui/501/dev.tidings.Tidings"]);
    }

    #[test]
    fn launchd_failure_carries_command_code_and_first_stderr_line() {
        let runner = RecordingRunner::new();
        runner.push_output(CommandOutput::failure(
            113,
            "Could not find service \"dev.tidings.Tidings\" in domain for user gui: 501\nmore\n",
        ));
        let err = Launchd::new(runner, 501).request_start().unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                err,
                LauncherError::Failed {
                    code: Some(113),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            text.contains("launchctl kickstart gui/501/dev.tidings.Tidings"),
            "{text}"
        );
        assert!(text.contains("Could not find service"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn launchd_missing_launchctl_is_a_spawn_error() {
        let runner = RecordingRunner::new();
        runner.push_error(std::io::ErrorKind::NotFound);
        let err = Launchd::new(runner, 501).request_start().unwrap_err();
        assert!(matches!(err, LauncherError::Spawn { ref program, .. } if program == "launchctl"));
    }

    #[test]
    fn no_launcher_is_not_available() {
        assert_eq!(
            NoLauncher.request_start().unwrap(),
            StartRequest::NotAvailable
        );
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn default_launcher_on_linux_never_requests() {
        assert_eq!(
            default_launcher().request_start().unwrap(),
            StartRequest::NotAvailable
        );
    }
}
