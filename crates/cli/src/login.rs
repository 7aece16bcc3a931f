//! `tidings install` / `tidings uninstall`: the login item through
//! `tidings_platform::login`, the code the app's "Start at Login" runs too. What uninstall
//! removes and keeps, and which executable install starts: docs/decisions/install.md.

use std::path::{Path, PathBuf};

use tidings_platform::login::{self, Options, Report, Step};
use tidings_platform::paths::{self, Os};
use tidings_platform::{Keychain, KeyringKeychain, LoginItem, Plan, SystemRunner};

use super::args::{InstallArgs, PlatformArg, UninstallArgs};
use super::exit_code::{Coded, USAGE};
use super::resolve_socket;

/// A command line install cannot act on.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The other platform's rules were asked for without `--dry-run`.
    #[error(
        "--platform {asked} is not this machine's platform; add --dry-run to see what it would \
         do there"
    )]
    OtherPlatform {
        /// The platform asked for.
        asked: &'static str,
    },
    /// No `--exe`, and no app beside this `tidings`.
    #[error(
        "no {app} beside {}; pass --exe PATH: the app's executable (on a Mac, \
         /Applications/Tidings.app/Contents/MacOS/{app}), or a `tidings` to run \
         `tidings serve` headless at login",
        .dir.display(),
        app = login::APP_EXECUTABLE
    )]
    NoApp {
        /// Where it looked.
        dir: PathBuf,
    },
    /// `--exe` names no file.
    #[error("--exe {}: no such file; pass the path of the app (or of `tidings`) to start at login", .0.display())]
    NoExe(PathBuf),
}

impl Coded for InstallError {
    fn exit_code(&self) -> u8 {
        USAGE
    }
}

fn os_for(platform: Option<PlatformArg>, dry_run: bool) -> Result<Os, InstallError> {
    let (os, asked) = match platform {
        None => return Ok(Os::CURRENT),
        Some(PlatformArg::Macos) => (Os::MacOs, "macos"),
        Some(PlatformArg::Linux) => (Os::Linux, "linux"),
    };
    if os != Os::CURRENT && !dry_run {
        return Err(InstallError::OtherPlatform { asked });
    }
    Ok(os)
}

/// `--exe` made absolute (and, unless a dry run, checked to exist); else the app beside the
/// running `tidings` (in the bundle both sit in `Contents/MacOS`).
fn install_exe(flag: Option<&Path>, dry_run: bool) -> Result<PathBuf, InstallError> {
    if let Some(exe) = flag {
        let exe = std::path::absolute(exe).unwrap_or_else(|_| exe.to_path_buf());
        if !dry_run && !exe.is_file() {
            return Err(InstallError::NoExe(exe));
        }
        return Ok(exe);
    }
    let dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let app = dir.join(login::APP_EXECUTABLE);
    if app.is_file() {
        Ok(app)
    } else {
        Err(InstallError::NoApp { dir })
    }
}

/// Runs `tidings install`.
pub fn install(args: &InstallArgs) -> anyhow::Result<()> {
    let os = os_for(args.platform, args.dry_run)?;
    let exe = install_exe(args.exe.as_deref(), args.dry_run)?;
    let plan = Plan::current(os, exe)?;
    let service = login::default_app_service(&plan);
    let item = LoginItem::new(plan, &SystemRunner, service.as_ref()).with_options(Options {
        dry_run: args.dry_run,
        ..Options::default()
    });
    let report = item.install()?;
    let starts = item.plan().program_arguments().join(" ");
    if args.dry_run {
        out(format_args!(
            "tidings: dry run: would install {} starting `{starts}`; nothing written or run",
            report.mechanism.describe()
        ));
    } else {
        out(format_args!(
            "tidings: Tidings now starts at login ({}), and again after a crash: `{starts}`",
            report.mechanism.describe()
        ));
    }
    print_steps(&report, args.dry_run);
    Ok(())
}

/// Runs `tidings uninstall`.
pub fn uninstall(args: &UninstallArgs) -> anyhow::Result<()> {
    let os = os_for(args.platform, args.dry_run)?;
    // Only decides, on a Mac, whether SMAppService applies (run from the bundle).
    let exe = install_exe(None, true)
        .or_else(|_| std::env::current_exe())
        .unwrap_or_default();
    let plan = Plan::current(os, exe)?;
    let service = login::default_app_service(&plan);
    let item = LoginItem::new(plan, &SystemRunner, service.as_ref()).with_options(Options {
        dry_run: args.dry_run,
        ..Options::default()
    });
    let report = item.uninstall()?;
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    if report.steps.is_empty() {
        out("tidings: no login item was installed");
    } else {
        out(format_args!(
            "tidings: {verb} the login item ({}){}",
            report.mechanism.describe(),
            if args.dry_run {
                "; dry run: nothing removed or run"
            } else {
                ""
            }
        ));
    }
    print_steps(&report, args.dry_run);

    let socket = resolve_socket(args.socket.as_deref())?;
    remove_socket(&socket, args.dry_run, verb);

    let config = paths::config_dir()?;
    let data = paths::data_dir()?;
    if args.purge {
        purge(&config, &data, args.dry_run, verb);
    } else {
        out("kept (`tidings uninstall --purge` removes them):");
        out(format_args!(
            "  settings: {}",
            config.join("settings.toml").display()
        ));
        out(format_args!(
            "  consumer positions (`tidings check`): {}",
            data.join("consumers").display()
        ));
        out(format_args!(
            "  the HTTP token: in the OS keychain (service {})",
            tidings_platform::keychain::SERVICE
        ));
    }
    Ok(())
}

/// Removes the socket file when nothing serves on it (the app removes its own on Quit; a
/// crash leaves it). One a daemon still answers on is kept: that daemon was not started by
/// the login item (a `tidings serve` in a terminal).
fn remove_socket(socket: &Path, dry_run: bool, verb: &str) {
    if std::fs::symlink_metadata(socket).is_err() {
        return;
    }
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        out(format_args!(
            "kept the socket {}: a daemon still serves on it (stop it first)",
            socket.display()
        ));
        return;
    }
    if !dry_run && let Err(e) = std::fs::remove_file(socket) {
        out(format_args!(
            "could not remove the socket {}: {e}",
            socket.display()
        ));
        return;
    }
    out(format_args!("  {verb} the socket {}", socket.display()));
}

/// `--purge`: the config and data directories and the keychain token.
fn purge(config: &Path, data: &Path, dry_run: bool, verb: &str) {
    let mut dirs = vec![config];
    if data != config {
        dirs.push(data);
    }
    for dir in dirs {
        if !dir.exists() {
            continue;
        }
        if !dry_run && let Err(e) = std::fs::remove_dir_all(dir) {
            out(format_args!("could not remove {}: {e}", dir.display()));
            continue;
        }
        out(format_args!("  {verb} {}", dir.display()));
    }
    if dry_run {
        out(format_args!("  {verb} the HTTP token from the OS keychain"));
        return;
    }
    let deleted = KeyringKeychain::system(tidings_platform::keychain::SERVICE)
        .map_err(|e| e.to_string())
        .and_then(|k| {
            k.delete(tidings_platform::keychain::HTTP_TOKEN_ACCOUNT)
                .map_err(|e| e.to_string())
        });
    match deleted {
        Ok(()) => out(format_args!("  {verb} the HTTP token from the OS keychain")),
        Err(e) => out(format_args!(
            "could not remove the HTTP token from the OS keychain ({e}); remove the item \
             `{}` by hand",
            tidings_platform::keychain::SERVICE
        )),
    }
}

/// A dry run prints each step in full (file text included); a real run one line per step.
fn print_steps(report: &Report, dry_run: bool) {
    for step in &report.steps {
        if dry_run {
            let text = step.to_string();
            out(text.trim_end());
        } else {
            match step {
                Step::Write { path, .. } => out(format_args!("  wrote {}", path.display())),
                Step::Remove { path } => out(format_args!("  removed {}", path.display())),
                Step::Run { command } => out(format_args!("  ran {command}")),
            }
        }
    }
    for note in &report.notes {
        out(format_args!("note: {note}"));
    }
}

fn out(line: impl std::fmt::Display) {
    crate::output::out(line);
}
