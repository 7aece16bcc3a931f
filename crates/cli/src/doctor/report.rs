//! What the doctor prints: the checks for people, and the bug report (`--report`) with
//! nothing personal in it.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use tidings_core::settings::NotificationKind;
use tidings_core::{EventType, Settings, StorePaths};
use tidings_server::state::HttpEndpointState;

use super::checks::store_view;
use super::{Check, Findings, Outcome};

/// The checks for people: `[ok]   daemon  Tidings 0.1.0 serving on …`, a fix under each
/// failure.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let mark = match c.outcome {
            Outcome::Pass => "[ok]  ",
            Outcome::Warn => "[warn]",
            Outcome::Fail => "[FAIL]",
            Outcome::Skip => "[skip]",
        };
        let _ = writeln!(out, "{mark} {:<17} {}", c.name, c.detail);
        if let (Some(fix), true) = (&c.fix, c.outcome != Outcome::Pass) {
            let _ = writeln!(out, "       fix: {fix}");
        }
    }
    let failed = checks.iter().filter(|c| c.outcome == Outcome::Fail).count();
    let _ = writeln!(
        out,
        "{}",
        match failed {
            0 => "All checks passed.".to_owned(),
            1 => "1 check failed.".to_owned(),
            n => format!("{n} checks failed."),
        }
    );
    out
}

/// What a bug report needs, as JSON: versions, OS, schema profiles, access, settings in
/// counts, the daemon's counts. Nothing personal: no address, subject, handle or value.
pub fn report(home: &Path, f: &Findings, runner: &dyn tidings_platform::CommandRunner) -> Value {
    let paths = StorePaths::for_home(home);
    let stores: Vec<Value> = EventType::ALL
        .into_iter()
        .enumerate()
        .map(|(i, ty)| {
            let (access, _, by_daemon) = store_view(f, ty, i);
            let profile = match tidings_core::store_profile(&paths, ty) {
                Ok(p) => serde_json::to_value(p).unwrap_or(Value::Null),
                Err(e) => json!({"error": e.reason()}),
            };
            json!({
                "type": ty.name(),
                "path": home_relative(paths.database(ty), home),
                "access": access,
                "accessSeenBy": if by_daemon { "daemon" } else { "doctor" },
                "profile": profile,
            })
        })
        .collect();
    let settings = match &f.settings {
        Ok(s) => settings_summary(s),
        Err(e) => json!({"error": e.summary()}),
    };
    let daemon = match &f.daemon {
        Ok(s) => json!({
            "version": s.version,
            "connections": s.connections,
            "streams": s.streams,
            "clients": s.clients.len(),
            "http": match &s.http {
                HttpEndpointState::Off => "off",
                HttpEndpointState::Starting => "starting",
                HttpEndpointState::Serving { .. } => "serving",
                HttpEndpointState::Failed { .. } => "failed",
            },
            "fullDiskAccess": s.full_disk_access,
            "paused": s.paused_until_ms.is_some(),
        }),
        Err(_) => json!("not running"),
    };
    json!({
        "tidings": tidings_server::daemon::build_id(),
        "os": os_description(runner),
        "stores": stores,
        "settings": settings,
        "daemon": daemon,
        "updates": updates_summary(f),
    })
}

/// The last check for updates in words that carry nothing of this machine: the outcome, why
/// it failed (the reason, not the message, which may name a path), the versions, whether
/// Homebrew installed this copy and who signed it and the update waiting.
fn updates_summary(f: &Findings) -> Value {
    use tidings_server::app::updates::Outcome as Check;
    let last = match &f.last_check {
        Ok(Some(c)) => {
            let (outcome, reason) = match &c.outcome {
                Check::UpToDate { .. } => ("upToDate", None),
                Check::Ready(_) => ("ready", None),
                Check::Older { .. } => ("older", None),
                Check::Failed { reason, .. } => ("failed", Some(*reason)),
            };
            let signed_by = match &c.outcome {
                Check::Ready(staged) => staged.signed_by.clone(),
                _ => None,
            };
            json!({
                "outcome": outcome,
                "reason": reason,
                "checkedBy": c.current,
                "newest": c.outcome.newest(),
                "signedBy": signed_by,
            })
        }
        Ok(None) => Value::Null,
        Err(_) => json!("unreadable"),
    };
    let own = match &f.own_signing {
        super::OwnSigning::NotHere => json!("not code-signed here"),
        super::OwnSigning::Unknown(_) => json!("unknown"),
        super::OwnSigning::Signed(s) => json!(s.label().unwrap_or_else(|| "ad hoc".to_owned())),
    };
    json!({
        "lastCheck": last,
        "homebrew": f.install.is_homebrew(),
        "signedBy": own,
    })
}

/// The settings in counts: which types are on, how many allowlist entries, backfill days,
/// whether HTTP and each notification are on. Never an entry or an address.
fn settings_summary(s: &Settings) -> Value {
    let types: serde_json::Map<String, Value> = EventType::ALL
        .into_iter()
        .map(|ty| {
            let t = s.for_type(ty);
            (
                ty.name().to_owned(),
                json!({
                    "enabled": t.enabled,
                    "allowEntries": t.allow.len(),
                    "backfillDays": t.backfill_days,
                }),
            )
        })
        .collect();
    let notifications: serde_json::Map<String, Value> = NotificationKind::ALL
        .into_iter()
        .map(|k| {
            (
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                Value::Bool(*s.notifications.switch(k)),
            )
        })
        .collect();
    json!({
        "types": types,
        "http": {"enabled": s.http.enabled, "allowedOrigins": s.http.allowed_origins.len()},
        "channelPresets": s.channel.presets.len(),
        "notifications": {"enabled": s.notifications.enabled, "kinds": notifications},
    })
}

/// `macOS 15.1 (aarch64)`, `Debian GNU/Linux 13 (trixie) (x86_64)`.
fn os_description(runner: &dyn tidings_platform::CommandRunner) -> String {
    let arch = std::env::consts::ARCH;
    let name = if cfg!(target_os = "macos") {
        runner
            .run("sw_vers", &["-productVersion"])
            .ok()
            .filter(tidings_platform::CommandOutput::is_success)
            .map(|o| format!("macOS {}", String::from_utf8_lossy(&o.stdout).trim()))
    } else {
        std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_owned())
            })
    };
    format!(
        "{} ({arch})",
        name.unwrap_or_else(|| std::env::consts::OS.to_owned())
    )
}

/// `path` with `home` shown as `~` (the home names the user).
fn home_relative(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// The report for people: the JSON, indented (it is pasted into an issue as is).
pub(super) fn render_report(report: &Value) -> String {
    format!(
        "Bug report (no personal data: names of tables and columns, rounded counts):\n{}",
        serde_json::to_string_pretty(report).unwrap_or_default()
    )
}
