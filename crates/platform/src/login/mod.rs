//! Start at login: [`LoginItem`] installs, removes, reports and restarts the login item, the
//! one code path `tidings install` / `tidings uninstall` and the app's "Start at Login" share.
//!
//! - macOS 13+ in a bundle: `SMAppService` registers the agent the app ships
//!   (`Contents/Library/LaunchAgents/dev.tidings.Tidings.plist`), behind [`AppService`];
//! - macOS otherwise (not in a bundle, the bundled agent not found, or registration refused):
//!   a `LaunchAgent` plist in `~/Library/LaunchAgents` loaded with `launchctl` ([`launchd`]);
//! - Linux: a systemd user unit ([`systemd`]).
//!
//! Every file write and command goes through one [`Session`], which records it as a
//! [`Step`]; with [`Options::dry_run`] the session writes and runs nothing, so `--dry-run`
//! prints exactly the steps a real run takes. Which platform's rules apply is
//! [`Plan::os`], a value, so either side's output can be shown (and tested) on any machine.

pub mod appservice;
pub mod launchd;
pub mod systemd;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use appservice::{AppService, FakeAppService, NoAppService, ServiceState, default_app_service};

use crate::command::{CommandOutput, CommandRunner, command_line};
use crate::error::{CommandError, LoginError};
use crate::paths::{BUNDLE_ID, Os};

/// The `LaunchAgent` label (and the bundle id whose name and icon macOS shows for it).
pub const LABEL: &str = BUNDLE_ID;

/// The agent's file name, `<label>.plist` (a literal: `SMAppService` takes a `&'static str`).
pub const PLIST_NAME: &str = "dev.tidings.Tidings.plist";

/// The app's executable name inside the bundle (`Contents/MacOS/tidings-app`): Tauri keeps
/// the cargo binary's name.
pub const APP_EXECUTABLE: &str = "tidings-app";

/// The `tidings` CLI's executable name; a login item that starts it runs `tidings serve`.
pub const CLI_EXECUTABLE: &str = "tidings";

/// Where the Login Items pane of System Settings opens (macOS 13+).
pub const LOGIN_ITEMS_URL: &str =
    "x-apple.systempreferences:com.apple.LoginItems-Settings.extension";

/// What the login item runs and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Whose rules: launchd (macOS) or systemd (Linux).
    pub os: Os,
    /// The executable the login item starts (absolute).
    pub exe: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// The user's uid (`gui/<uid>` is the launchd domain).
    pub uid: u32,
    /// `$XDG_CONFIG_HOME` when set and absolute; the unit goes in `<it>/systemd/user`.
    pub xdg_config_home: Option<PathBuf>,
}

impl Plan {
    /// The plan for this user on this machine, starting `exe`.
    pub fn current(os: Os, exe: PathBuf) -> Result<Plan, LoginError> {
        let home = directories::BaseDirs::new()
            .map(|dirs| dirs.home_dir().to_path_buf())
            .ok_or(LoginError::NoHome)?;
        let xdg_config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        Ok(Plan {
            os,
            exe,
            home,
            uid: crate::paths::current_uid(),
            xdg_config_home,
        })
    }

    /// `~/Library/LaunchAgents/dev.tidings.Tidings.plist`, the fallback agent's file.
    pub fn agent_plist_path(&self) -> PathBuf {
        self.home
            .join("Library/LaunchAgents")
            .join(format!("{LABEL}.plist"))
    }

    /// `~/.config/systemd/user/tidings.service` (or under `$XDG_CONFIG_HOME`).
    pub fn unit_path(&self) -> PathBuf {
        self.xdg_config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
            .join("systemd/user")
            .join(systemd::UNIT)
    }

    /// The `.app` that holds [`Plan::exe`] (`X.app/Contents/MacOS/<exe>`) when it also ships
    /// the bundled agent; `None` for a bare binary (a dev build, the Linux app).
    pub fn bundle(&self) -> Option<PathBuf> {
        let macos_dir = self.exe.parent()?;
        let contents = macos_dir.parent()?;
        let bundle = contents.parent()?;
        let is_bundle = macos_dir.file_name()? == "MacOS"
            && contents.file_name()? == "Contents"
            && bundle.extension()? == "app";
        (is_bundle && contents.join(launchd::BUNDLED_PLIST_PATH).is_file())
            .then(|| bundle.to_path_buf())
    }

    /// What the login item runs: the executable, plus `serve` when it is the `tidings` CLI
    /// (the headless daemon) rather than the app.
    pub fn program_arguments(&self) -> Vec<String> {
        let mut args = vec![self.exe.display().to_string()];
        if self.runs_cli() {
            args.push("serve".to_owned());
        }
        args
    }

    /// Whether the executable is the `tidings` CLI (headless) rather than the app.
    pub fn runs_cli(&self) -> bool {
        self.exe.file_name().is_some_and(|n| n == CLI_EXECUTABLE)
    }
}

/// How the login item is (or would be) registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// `SMAppService.agent` with the agent the bundle ships (macOS 13+).
    AppService,
    /// A plist in `~/Library/LaunchAgents`, loaded with `launchctl`.
    LaunchAgent,
    /// A systemd user unit.
    Systemd,
}

impl Mechanism {
    /// Its name in words.
    pub fn describe(self) -> &'static str {
        match self {
            Mechanism::AppService => "the app's bundled LaunchAgent (SMAppService)",
            Mechanism::LaunchAgent => "a LaunchAgent in ~/Library/LaunchAgents",
            Mechanism::Systemd => "a systemd user unit",
        }
    }
}

/// Whether Tidings starts at login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginState {
    /// It does.
    Enabled,
    /// It is registered, but macOS waits for the user to allow it in the Login Items pane.
    RequiresApproval,
    /// It does not.
    Disabled,
}

/// The login item's state, how it is registered, and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginStatus {
    /// On, off, or waiting for approval.
    pub state: LoginState,
    /// How it is (or would be) registered.
    pub mechanism: Mechanism,
    /// One sentence: what it means, and what to do when it needs something.
    pub text: String,
}

/// One thing a run did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A file written (atomically: a temporary file renamed over it), with its full text.
    Write {
        /// The file.
        path: PathBuf,
        /// What it holds.
        text: String,
    },
    /// A file removed.
    Remove {
        /// The file.
        path: PathBuf,
    },
    /// A command run, as a shell would show it.
    Run {
        /// The command line.
        command: String,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Write { path, text } => {
                writeln!(f, "write {}:", path.display())?;
                for line in text.lines() {
                    writeln!(f, "    {line}")?;
                }
                Ok(())
            }
            Step::Remove { path } => writeln!(f, "remove {}", path.display()),
            Step::Run { command } => writeln!(f, "run {command}"),
        }
    }
}

/// What a run did: how the item is registered, every step, and notes for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// How the item is (or would be) registered.
    pub mechanism: Mechanism,
    /// Every file written or removed and command run, in order.
    pub steps: Vec<Step>,
    /// Sentences for the user (approval needed, a fallback taken).
    pub notes: Vec<String>,
}

/// How a run behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Write and run nothing; only record the steps.
    pub dry_run: bool,
    /// The caller may be the process the login item runs (the app's menu): never stop it.
    /// Installing then only writes and enables (it starts at the next login; the app is
    /// already running), and removing only deletes and disables.
    pub keep_running: bool,
    /// Between two `launchctl print` checks while a bootout finishes.
    pub poll_interval: Duration,
    /// How many checks before giving up on a bootout ([`LoginError::StillLoaded`]).
    pub poll_attempts: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dry_run: false,
            keep_running: false,
            // 5 s in all: launchd finishes a bootout of an app that quits promptly well
            // within it.
            poll_interval: Duration::from_millis(100),
            poll_attempts: 50,
        }
    }
}

/// The login item: one API for the CLI and the app.
pub struct LoginItem<'a> {
    plan: Plan,
    runner: &'a dyn CommandRunner,
    service: &'a dyn AppService,
    options: Options,
}

impl<'a> LoginItem<'a> {
    /// A login item for `plan`, running tools through `runner` and registering through
    /// `service` (use [`NoAppService`] where `SMAppService` cannot apply).
    pub fn new(plan: Plan, runner: &'a dyn CommandRunner, service: &'a dyn AppService) -> Self {
        LoginItem {
            plan,
            runner,
            service,
            options: Options::default(),
        }
    }

    /// The same with `options`.
    #[must_use]
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How an install would register: systemd on Linux; on macOS `SMAppService` when the
    /// bundled agent is there to register, else the `LaunchAgent` plist.
    pub fn mechanism(&self) -> Mechanism {
        match self.plan.os {
            Os::Linux => Mechanism::Systemd,
            Os::MacOs => match self.service.state() {
                ServiceState::Unavailable | ServiceState::NotFound => Mechanism::LaunchAgent,
                _ => Mechanism::AppService,
            },
        }
    }

    /// Installs the login item (and starts it, unless [`Options::keep_running`]).
    /// Reinstalling is safe: an agent already loaded is booted out and loaded again.
    pub fn install(&self) -> Result<Report, LoginError> {
        let mut session = self.session();
        let mut mechanism = self.mechanism();
        let mut notes = Vec::new();
        match mechanism {
            Mechanism::Systemd => systemd::install(&mut session)?,
            Mechanism::LaunchAgent => launchd::install(&mut session)?,
            Mechanism::AppService => {
                // One job per label: an older fallback plist goes first.
                if session.exists(&self.plan.agent_plist_path()) {
                    launchd::uninstall(&mut session)?;
                }
                session.record_run(&appservice::command("register"));
                let registered = if self.options.dry_run {
                    Ok(())
                } else {
                    self.service.register()
                };
                match registered {
                    Ok(()) => {
                        if self.service.state() == ServiceState::RequiresApproval {
                            notes.push(REQUIRES_APPROVAL.to_owned());
                        }
                    }
                    Err(reason) => {
                        // An unsigned or moved build cannot register; the plist still works.
                        notes.push(format!(
                            "SMAppService refused to register the bundled agent ({reason}); \
                             installed a LaunchAgent in ~/Library/LaunchAgents instead"
                        ));
                        mechanism = Mechanism::LaunchAgent;
                        launchd::install(&mut session)?;
                    }
                }
            }
        }
        Ok(Report {
            mechanism,
            steps: session.steps,
            notes,
        })
    }

    /// Removes the login item (and stops it, unless [`Options::keep_running`]). Removing
    /// what is not there is not an error.
    pub fn uninstall(&self) -> Result<Report, LoginError> {
        let mut session = self.session();
        let mechanism = self.mechanism();
        match mechanism {
            Mechanism::Systemd => systemd::uninstall(&mut session)?,
            Mechanism::LaunchAgent => launchd::uninstall(&mut session)?,
            Mechanism::AppService => {
                if self.options.dry_run
                    || matches!(
                        self.service.state(),
                        ServiceState::Enabled | ServiceState::RequiresApproval
                    )
                {
                    session.record_run(&appservice::command("unregister"));
                    if !self.options.dry_run {
                        self.service
                            .unregister()
                            .map_err(|reason| LoginError::AppService {
                                action: "unregister",
                                reason,
                            })?;
                    }
                }
                // A fallback plist from an unsigned build, if any.
                launchd::uninstall(&mut session)?;
            }
        }
        Ok(Report {
            mechanism,
            steps: session.steps,
            notes: Vec::new(),
        })
    }

    /// Whether it starts at login. Runs no command on macOS; asks `systemctl is-enabled` on
    /// Linux.
    pub fn status(&self) -> LoginStatus {
        let mechanism = self.mechanism();
        let status = |state, text: &str| LoginStatus {
            state,
            mechanism,
            text: text.to_owned(),
        };
        match mechanism {
            Mechanism::Systemd => systemd::status(&self.session()),
            Mechanism::AppService => match self.service.state() {
                ServiceState::Enabled => status(LoginState::Enabled, ENABLED),
                ServiceState::RequiresApproval => {
                    status(LoginState::RequiresApproval, REQUIRES_APPROVAL)
                }
                // A fallback plist counts too.
                _ => launchd::status(&self.plan, mechanism),
            },
            Mechanism::LaunchAgent => launchd::status(&self.plan, Mechanism::LaunchAgent),
        }
    }

    /// Restarts the running login item (`launchctl kickstart -k`, `systemctl restart`).
    pub fn restart(&self) -> Result<Report, LoginError> {
        let mut session = self.session();
        let mechanism = self.mechanism();
        match mechanism {
            Mechanism::Systemd => systemd::restart(&mut session)?,
            _ => launchd::restart(&mut session)?,
        }
        Ok(Report {
            mechanism,
            steps: session.steps,
            notes: Vec::new(),
        })
    }

    /// Opens System Settings at Login Items (macOS), where a login item waiting for approval
    /// is allowed.
    pub fn open_login_items(&self) -> Result<(), LoginError> {
        let mut session = self.session();
        session.run_checked("open", &[LOGIN_ITEMS_URL])?;
        Ok(())
    }

    fn session(&self) -> Session<'_> {
        Session {
            plan: &self.plan,
            runner: self.runner,
            options: self.options,
            steps: Vec::new(),
        }
    }
}

/// The status text when it starts at login.
const ENABLED: &str = "Tidings starts when you log in, and again if it stops unexpectedly.";

/// The status text, and the note, when macOS waits for the user's approval.
pub const REQUIRES_APPROVAL: &str = "macOS is waiting for your approval: open System Settings \
    > General > Login Items and allow Tidings under \"Allow in the Background\".";

/// One run: the plan, the runner and the steps so far. Every write, removal and command
/// goes through here, so a dry run records the same steps a real run takes.
pub struct Session<'a> {
    plan: &'a Plan,
    runner: &'a dyn CommandRunner,
    options: Options,
    steps: Vec<Step>,
}

impl Session<'_> {
    /// The plan.
    pub fn plan(&self) -> &Plan {
        self.plan
    }

    /// The options.
    pub fn options(&self) -> Options {
        self.options
    }

    /// Whether `path` exists; in a dry run, assume it does (show every step a removal
    /// would take).
    pub fn exists(&self, path: &Path) -> bool {
        self.options.dry_run || path.exists()
    }

    /// Writes `text` to `path` atomically (a temporary file beside it, then a rename), making
    /// the parent directory first.
    pub fn write(&mut self, path: &Path, text: &str) -> Result<(), LoginError> {
        self.steps.push(Step::Write {
            path: path.to_path_buf(),
            text: text.to_owned(),
        });
        if self.options.dry_run {
            return Ok(());
        }
        crate::files::write_atomic(path, text.as_bytes(), 0o644).map_err(|source| {
            LoginError::Write {
                path: path.to_path_buf(),
                source,
            }
        })
    }

    /// Removes `path` if it is there.
    pub fn remove(&mut self, path: &Path) -> Result<(), LoginError> {
        if !self.exists(path) {
            return Ok(());
        }
        self.steps.push(Step::Remove {
            path: path.to_path_buf(),
        });
        if self.options.dry_run {
            return Ok(());
        }
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(LoginError::Remove {
                path: path.to_path_buf(),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Records a step that is not a command line (an `SMAppService` call).
    fn record_run(&mut self, command: &str) {
        self.steps.push(Step::Run {
            command: command.to_owned(),
        });
    }

    /// Runs a command that changes something and returns its output, failed or not. In a dry
    /// run it is recorded and answers success.
    pub fn run(&mut self, program: &str, args: &[&str]) -> Result<CommandOutput, LoginError> {
        self.record_run(&command_line(program, args));
        if self.options.dry_run {
            return Ok(CommandOutput::success());
        }
        self.runner
            .run(program, args)
            .map_err(|source| CommandError::spawn(program, source).into())
    }

    /// Like [`Session::run`], but a non-zero exit is an error naming the command and stderr.
    pub fn run_checked(&mut self, program: &str, args: &[&str]) -> Result<(), LoginError> {
        let output = self.run(program, args)?;
        if output.is_success() {
            Ok(())
        } else {
            Err(CommandError::failed(program, args, &output).into())
        }
    }

    /// Asks a question that changes nothing (`launchctl print`, `systemctl is-enabled`).
    /// In a dry run it is recorded and answers "no" (exit 1): nothing is loaded.
    pub fn probe(&mut self, program: &str, args: &[&str]) -> Result<CommandOutput, LoginError> {
        if self.options.dry_run {
            self.record_run(&command_line(program, args));
            return Ok(CommandOutput::failure(1, ""));
        }
        self.run(program, args)
    }

    /// Like [`Session::probe`] but recording nothing (status checks).
    fn ask(&self, program: &str, args: &[&str]) -> std::io::Result<CommandOutput> {
        self.runner.run(program, args)
    }
}

#[cfg(test)]
mod tests;
