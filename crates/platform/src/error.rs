//! The crate's error enums: [`PathError`] for paths and directories, [`CommandError`] for an
//! OS tool that could not run or said no (all a [`LauncherError`] is), [`LoginError`] for the
//! login item.

use std::path::PathBuf;

/// Why a path could not be worked out, or why a directory is not fit to hold the socket.
///
/// Every variant names the path or variable involved, so the message alone tells the user
/// what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// No home directory was found, so the default location cannot be computed.
    #[error("cannot find the home directory to place the {what}; set {var} to choose one")]
    NoHomeDir {
        /// What was being placed ("config directory", "data directory", "socket").
        what: &'static str,
        /// The environment variable that overrides it.
        var: &'static str,
    },

    /// An override that must be absolute was not.
    #[error("{var} must be an absolute path, got {}", .value.display())]
    NotAbsolute {
        /// The environment variable.
        var: &'static str,
        /// Its value.
        value: PathBuf,
    },

    /// An explicitly chosen socket path does not fit in `sun_path`.
    #[error(
        "socket path {} is {len} bytes, over the {max}-byte limit of a Unix socket address",
        .path.display()
    )]
    SocketPathTooLong {
        /// The path as given.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The limit ([`crate::paths::Os::max_socket_path_bytes`]).
        max: usize,
    },

    /// Creating or inspecting a directory failed.
    #[error("cannot create or inspect {}: {source}", .path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The directory is a symlink; someone else could point it anywhere.
    #[error("{} is a symlink; refusing to use it as a private directory", .path.display())]
    Symlink {
        /// The directory.
        path: PathBuf,
    },

    /// Something other than a directory sits at the path.
    #[error("{} exists but is not a directory", .path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },

    /// The directory belongs to another user.
    #[error("{} is owned by uid {owner}, not by us (uid {expected}); refusing to use it", .path.display())]
    WrongOwner {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Our effective uid.
        expected: u32,
    },

    /// The directory grants permissions to group or others.
    #[error(
        "{} has mode {mode:04o}, which lets other users in; it must be 0700 (run `chmod 700` on it)",
        .path.display()
    )]
    TooOpen {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// Why an OS tool (`launchctl`, `systemctl`) run through the [`crate::CommandRunner`] failed:
/// it could not be started, or it ran and said no. Each names the command and quotes its
/// stderr, so the message alone says what to look at.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The program could not be run at all.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program, e.g. `launchctl`.
        program: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The program ran and reported failure.
    #[error("`{command}` failed ({}){}", exit_text(*.code), stderr_text(.stderr))]
    Failed {
        /// The full command line.
        command: String,
        /// Its exit code, `None` if it was killed by a signal.
        code: Option<i32>,
        /// The first line of its stderr, trimmed.
        stderr: String,
    },
}

impl CommandError {
    /// `program` could not be started.
    pub fn spawn(program: &str, source: std::io::Error) -> Self {
        Self::Spawn {
            program: program.to_owned(),
            source,
        }
    }

    /// `program args…` ran and exited with `output`'s failure.
    pub fn failed(program: &str, args: &[&str], output: &crate::CommandOutput) -> Self {
        Self::Failed {
            command: crate::command::command_line(program, args),
            code: output.code,
            stderr: output.stderr_first_line(),
        }
    }
}

/// Why asking the OS to start the daemon failed: only the ways running `launchctl` fails.
pub type LauncherError = CommandError;

fn exit_text(code: Option<i32>) -> String {
    match code {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_owned(),
    }
}

fn stderr_text(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// Why installing, removing or restarting the login item failed. Each names the file or
/// the command (with its stderr) to look at.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoginError {
    /// No home directory, so there is nowhere to put the agent or unit.
    #[error("cannot find the home directory for the login item; set HOME")]
    NoHome,

    /// `launchctl` or `systemctl` could not be run, or said no.
    #[error(transparent)]
    Command(#[from] CommandError),

    /// Writing the agent or unit file failed (the old file, if any, is left whole).
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// Removing the agent or unit file failed.
    #[error("cannot remove {}: {source}; remove it by hand", .path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// `launchctl bootout` returned, but the job was still loaded when we stopped waiting.
    #[error(
        "{service} was still loaded {} ms after `launchctl bootout`; quit Tidings and run the \
         command again",
        .waited.as_millis()
    )]
    StillLoaded {
        /// `gui/<uid>/<label>`.
        service: String,
        /// How long we waited.
        waited: std::time::Duration,
    },

    /// `SMAppService` refused.
    #[error("SMAppService could not {action} the login item: {reason}")]
    AppService {
        /// `register` or `unregister`.
        action: &'static str,
        /// What macOS said.
        reason: String,
    },
}
