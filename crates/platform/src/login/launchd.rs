//! The macOS `LaunchAgent`: the plist (generated with the `plist` crate, for
//! `~/Library/LaunchAgents` and for the bundle) and the `launchctl` steps that load, unload
//! and restart it.
//!
//! `launchctl bootstrap` fails (5: Input/output error; 37 on some releases) when the job is
//! already loaded, and `bootout` returns before the job is gone, so a reinstall boots out,
//! polls `print` until the label is gone (bounded), and bootstraps again.

use plist::{Dictionary, Value};

use super::{APP_EXECUTABLE, LABEL, LoginState, LoginStatus, Mechanism, Plan, Session};
use crate::error::{CommandError, LoginError};

/// The bundled agent's path inside `Contents/` (the `packaging` step puts
/// `src-tauri/macos/LaunchAgents/dev.tidings.Tidings.plist` there).
pub const BUNDLED_PLIST_PATH: &str = "Library/LaunchAgents/dev.tidings.Tidings.plist";

/// Seconds launchd waits between two starts of a job that keeps exiting. 10 (launchd's own
/// default, said out loud so nobody lowers it by accident): a crash is recovered within
/// ten seconds, and a crash loop (say, a settings file the app cannot start with) costs one
/// start every ten seconds rather than a busy loop. Events are not lost meanwhile: clients
/// resume from their cursors.
pub const THROTTLE_INTERVAL_SECS: u64 = 10;

/// How the agent names its program.
enum Program<'a> {
    /// `ProgramArguments`: absolute paths (the plist in `~/Library/LaunchAgents`).
    Arguments(&'a [String]),
    /// `BundleProgram`: a path inside the bundle (the agent `SMAppService` registers).
    Bundle(&'a str),
}

fn agent(program: &Program<'_>) -> Value {
    let mut dict = Dictionary::new();
    dict.insert("Label".into(), LABEL.into());
    match program {
        Program::Arguments(args) => {
            let args = args.iter().map(|a| Value::from(a.as_str())).collect();
            dict.insert("ProgramArguments".into(), Value::Array(args));
        }
        Program::Bundle(path) => {
            dict.insert("BundleProgram".into(), (*path).into());
        }
    }
    dict.insert("RunAtLoad".into(), true.into());
    // A crash (non-zero exit, a signal) restarts it; the menu's Quit exits 0 and stays quit.
    let mut keep_alive = Dictionary::new();
    keep_alive.insert("SuccessfulExit".into(), false.into());
    dict.insert("KeepAlive".into(), keep_alive.into());
    dict.insert("ThrottleInterval".into(), THROTTLE_INTERVAL_SECS.into());
    // A UI app: no background throttling.
    dict.insert("ProcessType".into(), "Interactive".into());
    // Only in a GUI login session: the menu-bar app needs one.
    dict.insert("LimitLoadToSessionType".into(), "Aqua".into());
    // macOS 13+ shows the app's name and icon in Login Items for it.
    dict.insert(
        "AssociatedBundleIdentifiers".into(),
        Value::Array(vec![LABEL.into()]),
    );
    Value::Dictionary(dict)
}

fn to_xml(value: &Value) -> String {
    let mut bytes = Vec::new();
    value
        .to_writer_xml(&mut bytes)
        .expect("a plist of strings, bools and integers always serialises");
    bytes.push(b'\n');
    String::from_utf8(bytes).expect("the plist crate writes UTF-8")
}

/// The plist for `~/Library/LaunchAgents`, running `program_arguments`.
pub fn agent_plist(program_arguments: &[String]) -> String {
    to_xml(&agent(&Program::Arguments(program_arguments)))
}

/// The plist the app bundle ships for `SMAppService` (`BundleProgram`
/// `Contents/MacOS/tidings-app`); committed at
/// `src-tauri/macos/LaunchAgents/dev.tidings.Tidings.plist`, checked equal by a test.
pub fn bundled_plist() -> String {
    to_xml(&agent(&Program::Bundle(&format!(
        "Contents/MacOS/{APP_EXECUTABLE}"
    ))))
}

fn domain(plan: &Plan) -> String {
    format!("gui/{}", plan.uid)
}

fn service(plan: &Plan) -> String {
    format!("gui/{}/{LABEL}", plan.uid)
}

/// Whether a failed `bootstrap` means "already loaded".
fn already_loaded(code: Option<i32>, stderr: &str) -> bool {
    matches!(code, Some(5 | 17 | 37))
        || stderr.contains("Input/output error")
        || stderr.contains("already")
}

/// Whether a failed `bootout` means "was not loaded" (3: No such process; 113: Could not
/// find specified service).
fn not_loaded(code: Option<i32>, stderr: &str) -> bool {
    matches!(code, Some(3 | 113))
        || stderr.contains("No such process")
        || stderr.contains("Could not find")
}

/// Writes the plist and loads it: bootstrap; when already loaded, bootout, wait until it is
/// gone, bootstrap again. With `keep_running`, only writes: launchd loads it at the next
/// login, and the running app is not touched.
pub(super) fn install(session: &mut Session<'_>) -> Result<(), LoginError> {
    let plan = session.plan().clone();
    let path = plan.agent_plist_path();
    session.write(&path, &agent_plist(&plan.program_arguments()))?;
    if session.options().keep_running {
        return Ok(());
    }
    let domain = domain(&plan);
    let path_text = path.display().to_string();
    let args = ["bootstrap", domain.as_str(), path_text.as_str()];
    let output = session.run("launchctl", &args)?;
    if output.is_success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !already_loaded(output.code, &stderr) {
        return Err(CommandError::failed("launchctl", &args, &output).into());
    }
    bootout(session, &plan)?;
    session.run_checked("launchctl", &args)
}

/// Unloads the agent (unless `keep_running`) and removes its plist.
pub(super) fn uninstall(session: &mut Session<'_>) -> Result<(), LoginError> {
    let plan = session.plan().clone();
    if !session.options().keep_running {
        bootout(session, &plan)?;
    }
    session.remove(&plan.agent_plist_path())
}

/// `launchctl bootout`, then `print` until the label is gone. Not loaded is fine.
fn bootout(session: &mut Session<'_>, plan: &Plan) -> Result<(), LoginError> {
    let target = service(plan);
    let args = ["bootout", target.as_str()];
    let output = session.run("launchctl", &args)?;
    if !output.is_success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if not_loaded(output.code, &stderr) {
            return Ok(());
        }
        return Err(CommandError::failed("launchctl", &args, &output).into());
    }
    // bootout returns before launchd has let go of the job.
    let options = session.options();
    for attempt in 0..options.poll_attempts {
        if attempt > 0 {
            std::thread::sleep(options.poll_interval);
        }
        if !session
            .probe("launchctl", &["print", &target])?
            .is_success()
        {
            return Ok(());
        }
    }
    Err(LoginError::StillLoaded {
        service: target,
        waited: options.poll_interval * options.poll_attempts.saturating_sub(1),
    })
}

/// `launchctl kickstart -k`: kills the running app and starts it again.
pub(super) fn restart(session: &mut Session<'_>) -> Result<(), LoginError> {
    let target = service(session.plan());
    session.run_checked("launchctl", &["kickstart", "-k", &target])
}

/// On when the plist is in `~/Library/LaunchAgents` (launchd loads it at login).
pub(super) fn status(plan: &Plan, mechanism: Mechanism) -> LoginStatus {
    let path = plan.agent_plist_path();
    if path.is_file() {
        LoginStatus {
            state: LoginState::Enabled,
            mechanism: Mechanism::LaunchAgent,
            text: format!(
                "Tidings starts when you log in, and again if it stops unexpectedly ({}).",
                path.display()
            ),
        }
    } else {
        LoginStatus {
            state: LoginState::Disabled,
            mechanism,
            text: "Tidings does not start at login.".to_owned(),
        }
    }
}
