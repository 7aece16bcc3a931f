//! The settings window's commands (names in `src-tauri/commands.json`), run in the app
//! process for the window process (`window`). Each is one call into `tidings_server`
//! (`app::*` or the `Handle`); a failure rejects the page's call with `{ "message": ... }`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tidings_connect as connect;
use tidings_server::app;
use tidings_server::clients::Delivery;
use tidings_server::{Handle, State, app::AllowCheck};

use crate::AppEvent;
use crate::menu_bar::{MenuBarState, MenuBarView};

/// Every command's name, the one list `commands.json`, the page and its fake bridge are
/// checked against.
pub const COMMANDS: &[&str] = &[
    "get_state",
    "get_settings",
    "set_type_enabled",
    "set_allowlist",
    "check_allow_entry",
    "set_backfill_days",
    "get_activity",
    "clear_activity",
    "revoke_client",
    "set_http",
    "rotate_http_token",
    "set_notifications",
    "set_notification_kind",
    "pause_all",
    "resume_all",
    "finish_first_run",
    "set_start_at_login",
    "list_hosts",
    "connect_host",
    "disconnect_host",
    "open_full_disk_access",
    "open_login_items",
    "restart_app",
    "search_people",
    "list_groups",
    "recent_senders",
    "set_names",
    "set_categories",
    "answer_agent",
    "set_agent_access",
    "set_agent_type",
    "forget_agent",
    "set_new_agents",
    "create_agent_token",
    "revoke_agent_token",
    "allow_destination",
    "remove_destination",
    "answer_destination",
    "end_webhook",
    "set_update_check",
    "check_for_updates",
];

/// What a failed command rejects with.
#[derive(Debug, Serialize)]
pub struct CommandError {
    message: String,
}

impl<E: std::fmt::Display> From<E> for CommandError {
    fn from(error: E) -> CommandError {
        CommandError {
            message: error.to_string(),
        }
    }
}

/// What the app needs to run a command: the engine, a way to tell the main thread
/// (the menu's login tick, a restart), and what the app found about its menu-bar icon.
pub struct Context {
    /// The engine.
    pub handle: Handle,
    /// The main thread's event loop.
    pub main: crate::Proxy,
    /// Whether the menu-bar icon is shown (the main thread's launch check).
    pub menu_bar: MenuBarState,
}

/// The State the window gets (`get_state`, `state-changed`): the engine's, with what only the
/// app knows, whether its menu-bar icon is shown (`menuBar`). Not the engine's: `tidings
/// status` and MCP clients see no `menuBar`, as an engine without the app has no icon.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowState<'a> {
    /// The engine's State, its fields at the top level.
    #[serde(flatten)]
    pub state: &'a State,
    /// The menu-bar icon.
    pub menu_bar: MenuBarView,
}

impl Context {
    /// The window's State from the engine's `state`.
    pub fn window_state<'a>(&self, state: &'a State) -> WindowState<'a> {
        WindowState {
            state,
            menu_bar: self.menu_bar.get(),
        }
    }
}

/// Every host for the Connect section, with who is connected to this engine now.
fn hosts_view(handle: &Handle) -> Vec<connect::app::HostView> {
    let names = handle.state().borrow().client_names();
    connect::app::hosts_view(&names, handle.socket_path())
}

/// Runs `command` with the page's `args` (camelCase keys, as Tauri's commands took them).
/// Logged by name at info level (`-v`), never with its arguments: allowlist entries are
/// personal.
pub async fn dispatch(cx: &Context, command: &str, args: Value) -> Result<Value, CommandError> {
    if !COMMANDS.contains(&command) {
        return Err(CommandError::from(format!(
            "unknown command `{command}`; the app runs those in src-tauri/commands.json"
        )));
    }
    tracing::info!(command, "command");
    let handle = &cx.handle;
    match command {
        "get_state" => reply(cx.window_state(&handle.state().borrow())),
        "get_settings" => reply(app::settings_view(handle).await),
        "set_type_enabled" => {
            let a: TypeSwitch = parse(command, args)?;
            reply(app::set_type_enabled(handle, &a.event_type, a.enabled).await?)
        }
        "set_allowlist" => {
            let a: Allowlist = parse(command, args)?;
            reply(app::set_allowlist(handle, &a.event_type, &a.entries).await?)
        }
        "check_allow_entry" => {
            let a: AllowEntry = parse(command, args)?;
            reply::<AllowCheck>(app::check_allow_entry(&a.event_type, &a.entry))
        }
        "set_backfill_days" => {
            let a: Backfill = parse(command, args)?;
            reply(app::set_backfill_days(handle, &a.event_type, a.days).await?)
        }
        "get_activity" => reply(newest_first(handle)),
        "clear_activity" => {
            handle.activity().clear();
            Ok(Value::Null)
        }
        "revoke_client" => {
            let a: Client = parse(command, args)?;
            handle.revoke(a.id)?;
            Ok(Value::Null)
        }
        "set_http" => {
            let a: Http = parse(command, args)?;
            reply(app::set_http(handle, a.enabled, a.port).await?)
        }
        "rotate_http_token" => reply(app::rotate_http_token(handle).await?),
        "set_notifications" => {
            let a: Switch = parse(command, args)?;
            reply(app::set_notifications(handle, a.enabled).await?)
        }
        "set_notification_kind" => {
            let a: KindSwitch = parse(command, args)?;
            reply(app::set_notification_kind(handle, &a.kind, a.enabled).await?)
        }
        "pause_all" => {
            let a: Pause = parse(command, args)?;
            reply(app::pause_all(handle, a.minutes).await?)
        }
        "resume_all" => reply(app::resume_all(handle).await),
        "finish_first_run" => {
            app::finish_first_run(handle);
            Ok(Value::Null)
        }
        "set_start_at_login" => {
            let a: Switch = parse(command, args)?;
            let view = app::set_start_at_login(handle, a.enabled).await?;
            // The menu's tick follows the window's switch.
            cx.main.send(AppEvent::Login(view.start_at_login.clone()));
            reply(view)
        }
        "list_hosts" => reply(hosts_view(handle)),
        "connect_host" => {
            let a: Host = parse(command, args)?;
            reply(connect::app::connect_host(&a.id, &a.mode, handle.socket_path()).await?)
        }
        "disconnect_host" => {
            let a: HostId = parse(command, args)?;
            reply(connect::app::disconnect_host(&a.id)?)
        }
        "open_full_disk_access" | "open_login_items" => open_pane(command).await,
        // Quit and start again, as macOS applies a Full Disk Access grant only to a new
        // process. Started by the login item, the service manager restarts the job (and stops
        // this process with SIGTERM, a clean Quit); otherwise the main thread stops the engine
        // (socket removed, hand-over socket freed) and starts the same executable with the
        // same arguments.
        "restart_app" => {
            if !app::restart_through_login_item().await? {
                tracing::info!("restarting at the user's request");
                cx.main.send(AppEvent::Restart);
            }
            Ok(Value::Null)
        }
        "search_people" | "list_groups" | "recent_senders" | "set_names" | "set_categories" => {
            people(handle, command, args).await
        }
        "answer_agent" | "set_agent_access" | "set_agent_type" | "forget_agent"
        | "set_new_agents" | "create_agent_token" | "revoke_agent_token" => {
            agents(handle, command, args).await
        }
        "allow_destination" | "remove_destination" | "answer_destination" | "end_webhook" => {
            webhooks(handle, command, args).await
        }
        "set_update_check" | "check_for_updates" => updates(cx, command, args).await,
        // A name added to COMMANDS without its arm: the page hears it, nothing panics.
        _ => Err(CommandError::from(format!(
            "`{command}` is listed in commands.json but the app has no code for it"
        ))),
    }
}

/// System Settings at Full Disk Access, or at Login Items (where a login item waiting for
/// approval is allowed): an opener process, so off the async threads.
async fn open_pane(command: &str) -> Result<Value, CommandError> {
    let full_disk_access = command == "open_full_disk_access";
    tokio::task::spawn_blocking(move || {
        let runner = tidings_platform::SystemRunner;
        if full_disk_access {
            app::open_full_disk_access(&runner)
        } else {
            app::open_login_items(&runner)
        }
    })
    .await??;
    Ok(Value::Null)
}

/// The update check: the daily switch (`[updates] check`), and Check Now, which is the main
/// thread's (the updater runs there, as for the menu's "Check for Updates…"); the check's
/// outcome reaches the window in the `SettingsView` of the next `settings-changed`.
async fn updates(cx: &Context, command: &str, args: Value) -> Result<Value, CommandError> {
    match command {
        "set_update_check" => {
            let a: On = parse(command, args)?;
            reply(app::set_update_check(&cx.handle, a.on).await?)
        }
        "check_for_updates" => {
            cx.main.send(AppEvent::CheckForUpdates);
            Ok(Value::Null)
        }
        _ => Err(CommandError::from(format!(
            "`{command}` is not one of the update check's commands"
        ))),
    }
}

/// The sender picker and the people switches: Contacts and recent senders, for the person at
/// the Mac only (no MCP method or tool reaches these).
async fn people(handle: &Handle, command: &str, args: Value) -> Result<Value, CommandError> {
    match command {
        "search_people" => {
            let a: Query = parse(command, args)?;
            reply(app::search_people(handle, &a.query)?)
        }
        "list_groups" => reply(app::list_groups(handle)),
        "recent_senders" => {
            let a: TypeOnly = parse(command, args)?;
            reply(app::recent_senders(handle, &a.event_type).await?)
        }
        "set_names" => {
            let a: NamesSwitch = parse(command, args)?;
            reply(app::set_names(handle, &a.event_type, a.on).await?)
        }
        "set_categories" => {
            let a: Categories = parse(command, args)?;
            reply(app::set_categories(handle, &a.event_type, &a.categories).await?)
        }
        _ => Err(CommandError::from(format!(
            "`{command}` is not one of the picker's commands"
        ))),
    }
}

/// The agents: a question answered, an agent allowed or denied, its grant per type, forgotten,
/// what a never-seen program gets, and an agent's own HTTP token made or revoked.
async fn agents(handle: &Handle, command: &str, args: Value) -> Result<Value, CommandError> {
    match command {
        "answer_agent" => {
            let a: AgentAllow = parse(command, args)?;
            reply(app::answer_agent(handle, &a.id, a.allow).await?)
        }
        "set_agent_access" => {
            let a: AgentAllow = parse(command, args)?;
            reply(app::set_agent_access(handle, &a.id, a.allow).await?)
        }
        "set_agent_type" => {
            let a: AgentType = parse(command, args)?;
            reply(app::set_agent_type(handle, &a.id, &a.event_type, a.grant).await?)
        }
        "forget_agent" => {
            let a: AgentId = parse(command, args)?;
            reply(app::forget_agent(handle, &a.id).await?)
        }
        "set_new_agents" => {
            let a: NewAgents = parse(command, args)?;
            reply(app::set_new_agents(handle, &a.new).await?)
        }
        // One HTTP token per agent: the token is in the answer once, never again.
        "create_agent_token" => {
            let a: TokenName = parse(command, args)?;
            reply(app::create_agent_token(handle, &a.name).await?)
        }
        "revoke_agent_token" => {
            let a: TokenName = parse(command, args)?;
            reply(app::revoke_agent_token(handle, &a.name).await?)
        }
        _ => Err(CommandError::from(format!(
            "`{command}` is not one of the agents' commands"
        ))),
    }
}

/// Webhooks: a destination allowed or removed, an agent's question about one answered, a
/// subscription ended.
async fn webhooks(handle: &Handle, command: &str, args: Value) -> Result<Value, CommandError> {
    match command {
        "allow_destination" => {
            let a: Destination = parse(command, args)?;
            reply(app::allow_destination(handle, &a.origin).await?)
        }
        "remove_destination" => {
            let a: Destination = parse(command, args)?;
            reply(app::remove_destination(handle, &a.origin).await?)
        }
        "answer_destination" => {
            let a: DestinationAnswer = parse(command, args)?;
            reply(app::answer_destination(handle, &a.origin, a.allow).await?)
        }
        "end_webhook" => {
            let a: AgentId = parse(command, args)?;
            reply(app::end_webhook(handle, &a.id).await?)
        }
        _ => Err(CommandError::from(format!(
            "`{command}` is not one of the webhooks' commands"
        ))),
    }
}

/// The activity log as the window lists it: newest first (the engine keeps it oldest first).
pub fn newest_first(handle: &Handle) -> Vec<Delivery> {
    handle.activity().snapshot().into_iter().rev().collect()
}

fn reply<T: Serialize>(value: T) -> Result<Value, CommandError> {
    Ok(serde_json::to_value(value)?)
}

/// The page's arguments for `command`, or an error naming the command and what is wrong.
fn parse<T: DeserializeOwned>(command: &str, args: Value) -> Result<T, CommandError> {
    let args = if args.is_null() { json!({}) } else { args };
    serde_json::from_value(args)
        .map_err(|error| CommandError::from(format!("bad arguments to `{command}`: {error}")))
}

// The arguments, one struct per shape (the page's camelCase keys).

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TypeSwitch {
    event_type: String,
    enabled: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Allowlist {
    event_type: String,
    entries: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AllowEntry {
    event_type: String,
    entry: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Query {
    query: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TypeOnly {
    event_type: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NamesSwitch {
    event_type: String,
    on: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Categories {
    event_type: String,
    categories: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Backfill {
    event_type: String,
    days: u32,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentAllow {
    id: String,
    allow: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentType {
    id: String,
    event_type: String,
    grant: app::TypeGrantView,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentId {
    id: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Destination {
    origin: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DestinationAnswer {
    origin: String,
    allow: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenName {
    name: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NewAgents {
    new: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Client {
    id: u64,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Http {
    enabled: bool,
    port: u16,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Switch {
    enabled: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct On {
    on: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KindSwitch {
    kind: String,
    enabled: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Pause {
    minutes: u32,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Host {
    id: String,
    mode: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HostId {
    id: String,
}

#[cfg(test)]
mod tests;
