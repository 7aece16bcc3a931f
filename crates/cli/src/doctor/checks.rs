//! The doctor's checks, pure functions of the [`Findings`]: the daemon and its socket
//! directory, each store and Full Disk Access, the settings file, the HTTP endpoint, the
//! login item and each configured client, each with its one-line fix; then the update checks
//! (`updates`).

use tidings_connect::Verification;
use tidings_core::{EventType, StoreError};
use tidings_server::app::LoginView;
use tidings_server::notices::FULL_DISK_ACCESS_OWNER;
use tidings_server::state::{
    FullDiskAccess, HttpEndpointState, SettingsFileState, State, StoreAccess,
};

use super::{Check, Findings, Outcome};

/// The checks, in the order they print.
pub fn checks(f: &Findings) -> Vec<Check> {
    let mut checks = vec![daemon_check(f), socket_dir_check(f)];
    for (i, ty) in EventType::ALL.into_iter().enumerate() {
        checks.push(store_check(f, ty, i));
    }
    checks.push(access_check(f));
    checks.push(settings_check(f));
    checks.push(contacts_check(f));
    checks.push(http_check(f));
    checks.push(login_check(&f.login));
    checks.extend(client_checks(&f.clients));
    checks.extend(super::updates::update_checks(f));
    checks
}

/// Off is a choice, not a failure; waiting for approval is worth a warning.
fn login_check(login: &LoginView) -> Check {
    match login.state {
        "enabled" => Check::new("login item", Outcome::Pass, login.text.clone()),
        "requiresApproval" => Check::new("login item", Outcome::Warn, login.text.clone())
            .fix("allow Tidings in System Settings > General > Login Items"),
        _ => Check::new("login item", Outcome::Warn, login.text.clone())
            .fix("run `tidings install`, or tick Start at Login in the menu"),
    }
}

/// One check per configured client; none configured is a warning with the way to connect.
fn client_checks(clients: &[(&'static str, Result<Verification, String>)]) -> Vec<Check> {
    if clients.is_empty() {
        return vec![
            Check::new(
                "clients",
                Outcome::Warn,
                "no MCP client is configured for Tidings",
            )
            .fix("run `tidings connect claude-code` (or any client `tidings clients` lists)"),
        ];
    }
    clients
        .iter()
        .map(|(id, result)| {
            let name = format!("client {id}");
            match result {
                Ok(v) if v.ok => Check::new(&name, Outcome::Pass, v.message.clone()),
                Ok(v) => Check::new(&name, Outcome::Fail, v.message.clone())
                    .fix(format!("run `tidings connect {id}` again; it rewrites the entry and checks it")),
                Err(e) => Check::new(&name, Outcome::Fail, e.clone())
                    .fix("fix or remove the file named above; `tidings connect` will not touch it until then"),
            }
        })
        .collect()
}

fn daemon_check(f: &Findings) -> Check {
    match &f.daemon {
        Ok(state) => Check::new(
            "daemon",
            Outcome::Pass,
            format!(
                "Tidings {} serving on {}",
                state.version,
                f.socket.display()
            ),
        ),
        Err(e) => Check::new("daemon", Outcome::Fail, e.clone()).fix(
            "Start Tidings: open Tidings.app, or run `tidings serve` (the stores below are \
             then checked by this process instead)",
        ),
    }
}

fn socket_dir_check(f: &Findings) -> Check {
    let dir = f
        .socket
        .parent()
        .map_or_else(String::new, |d| d.display().to_string());
    match &f.socket_dir {
        None => Check::new(
            "socket directory",
            Outcome::Skip,
            format!("{dir} does not exist yet; Tidings creates it (mode 0700) when it starts"),
        ),
        Some(Ok(())) => Check::new(
            "socket directory",
            Outcome::Pass,
            format!("{dir} is private (0700, yours)"),
        ),
        Some(Err(e)) => Check::new("socket directory", Outcome::Fail, e.clone()).fix(format!(
            "Run `chmod 700 {dir}` if it is yours, else remove it and restart Tidings"
        )),
    }
}

/// A store's access in `State`'s terms, from the daemon when it answered, else from this
/// process's probe; and the problem's words.
pub(super) fn store_view(
    f: &Findings,
    ty: EventType,
    i: usize,
) -> (StoreAccess, Option<String>, bool) {
    if let Ok(state) = &f.daemon
        && let Some(t) = state.types.iter().find(|t| t.name == ty.name())
    {
        return (t.store.access, t.store.problem.clone(), true);
    }
    match &f.local_stores[i] {
        Ok(()) => (StoreAccess::Ok, None, false),
        Err(e) => (StoreAccess::from(e.kind()), Some(e.to_string()), false),
    }
}

fn type_enabled(f: &Findings, ty: EventType) -> bool {
    match (&f.daemon, &f.settings) {
        (Ok(state), _) => state.types.iter().any(|t| t.name == ty.name() && t.enabled),
        (_, Ok(settings)) => settings.for_type(ty).enabled,
        _ => false,
    }
}

pub(super) fn store_check(f: &Findings, ty: EventType, i: usize) -> Check {
    let name = match ty {
        EventType::MailReceived => "mail store",
        EventType::MessagesReceived => "messages store",
    };
    let (access, problem, by_daemon) = store_view(f, ty, i);
    let problem = problem.unwrap_or_default();
    let whose = if by_daemon {
        ""
    } else {
        " (checked by this process, not by Tidings)"
    };
    let enabled = type_enabled(f, ty);
    match access {
        StoreAccess::Ok => Check::new(name, Outcome::Pass, format!("readable{whose}")),
        StoreAccess::NotChecked => Check::new(
            name,
            Outcome::Warn,
            "not checked yet (the daemon just started)",
        )
        .fix("Run `tidings doctor` again in a few seconds"),
        StoreAccess::Missing => {
            let outcome = if enabled { Outcome::Fail } else { Outcome::Warn };
            Check::new(name, outcome, format!("{problem}{whose}")).fix(
                "Open Mail or Messages once on this Mac so it creates its store, or turn the type \
                 off",
            )
        }
        StoreAccess::PermissionDenied => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix(format!(
                "Grant Full Disk Access to Tidings.app (System Settings > Privacy & Security > \
                 Full Disk Access). {FULL_DISK_ACCESS_OWNER}"
            )),
        StoreAccess::SchemaProblem => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix(
                "Update Tidings; if this is the newest, file a bug with `tidings doctor --report`",
            ),
        StoreAccess::Unreadable => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix("Quit and reopen Mail or Messages; if it stays, file a bug with `tidings doctor --report`"),
    }
}

pub(super) fn access_check(f: &Findings) -> Check {
    let access = if let Ok(state) = &f.daemon {
        state.full_disk_access.clone()
    } else {
        let denied = f
            .local_stores
            .iter()
            .any(|r| matches!(r, Err(StoreError::PermissionDenied { .. })));
        let read = f.local_stores.iter().any(Result::is_ok);
        if denied {
            FullDiskAccess::Missing
        } else if read {
            FullDiskAccess::Granted
        } else {
            FullDiskAccess::Unknown
        }
    };
    let name = "full disk access";
    match &access {
        FullDiskAccess::Granted => Check::new(name, Outcome::Pass, "granted (a store was read)"),
        FullDiskAccess::Unknown => {
            Check::new(name, Outcome::Skip, "unknown: no store was read or refused")
        }
        FullDiskAccess::Missing => Check::new(name, Outcome::Fail, "missing: a store was refused")
            .fix(format!(
                "{} {FULL_DISK_ACCESS_OWNER}",
                access.fix().unwrap_or_default()
            )),
        FullDiskAccess::Stale { last_granted } => Check::new(
            name,
            Outcome::Fail,
            format!("stale: Tidings {last_granted} had it, this build has not"),
        )
        .fix(access.fix().unwrap_or_default()),
    }
}

fn settings_check(f: &Findings) -> Check {
    let name = "settings file";
    let path = f.settings_path.display();
    if let Ok(State {
        settings: SettingsFileState::Rejected { reason, .. },
        ..
    }) = &f.daemon
    {
        return Check::new(
            name,
            Outcome::Fail,
            format!("{reason}; the last good settings are in force"),
        )
        .fix(format!(
            "Fix that line of {path}; Tidings applies the file when it is saved"
        ));
    }
    match &f.settings {
        Ok(s) => {
            let on: Vec<&str> = EventType::ALL
                .into_iter()
                .filter(|ty| s.for_type(*ty).enabled)
                .map(EventType::name)
                .collect();
            let on = if on.is_empty() {
                "no type is on".to_owned()
            } else {
                format!("on: {}", on.join(", "))
            };
            Check::new(name, Outcome::Pass, format!("{path} parses; {on}"))
        }
        Err(e) => Check::new(name, Outcome::Fail, e.summary()).fix(format!(
            "Fix {path} (or remove it to start over from the defaults)"
        )),
    }
}

/// Person and group entries need the Contacts stores; without any they match nobody. Not
/// having Contacts is no problem for a user who names senders by address.
fn contacts_check(f: &Findings) -> Check {
    let name = "contacts";
    let people_entries = f.settings.as_ref().map_or(0, |s| {
        EventType::ALL
            .into_iter()
            .flat_map(|ty| &s.for_type(ty).allow)
            .filter(|e| e.sender().is_none())
            .count()
    });
    let c = &f.contacts;
    let stores = match c.stores_read {
        1 => "1 store read".to_owned(),
        n => format!("{n} stores read"),
    };
    match &c.problem {
        None => Check::new(name, Outcome::Pass, stores),
        Some(problem) if people_entries == 0 => Check::new(
            name,
            Outcome::Pass,
            format!("{stores}; cannot read {problem} (no person or group entry needs it)"),
        ),
        Some(problem) => {
            let fix = if problem.contains("unreadable") {
                "give Tidings Full Disk Access: it covers the Contacts stores, with no Contacts \
                 prompt"
                    .to_owned()
            } else {
                "open Contacts once so it rewrites its store, then look again".to_owned()
            };
            Check::new(
                name,
                Outcome::Warn,
                format!(
                    "{stores}; cannot read {problem}: person and group entries for its cards \
                     match nobody"
                ),
            )
            .fix(fix)
        }
    }
}

fn http_check(f: &Findings) -> Check {
    let name = "http endpoint";
    let daemon_http = f.daemon.as_ref().ok().map(|s| &s.http);
    let enabled = f.settings.as_ref().is_ok_and(|s| s.http.enabled);
    match (daemon_http, &f.http_reachable) {
        (Some(HttpEndpointState::Serving { url, .. }), Some(Ok(()))) => {
            Check::new(name, Outcome::Pass, format!("serving at {url}"))
        }
        (Some(HttpEndpointState::Serving { url, .. }), Some(Err(e))) => {
            Check::new(name, Outcome::Fail, format!("{url} does not answer: {e}"))
                .fix("Restart Tidings; if it stays, another program may hold the port")
        }
        (Some(failed @ HttpEndpointState::Failed { .. }), _) => {
            Check::new(name, Outcome::Fail, failed.describe())
                .fix("Pick another port in [http] listen, or free this one")
        }
        (Some(HttpEndpointState::Starting), _) => Check::new(name, Outcome::Warn, "starting")
            .fix("Run `tidings doctor` again in a few seconds"),
        _ if enabled => Check::new(
            name,
            Outcome::Skip,
            "on in settings; not checked without a daemon",
        ),
        _ => Check::new(name, Outcome::Skip, "off"),
    }
}
