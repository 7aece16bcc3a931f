// The bridge's command names. The one list lives in src-tauri/commands.json (a Rust test
// checks it against the registered handlers); this copy types `invoke`, and the UI tests check
// that this list, the fake bridge and commands.json agree.

/** Every Tauri command the settings window may call, in the contract's order. */
export const COMMANDS = [
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
] as const;

/** One command name. */
export type Command = (typeof COMMANDS)[number];

/** The events the app emits to the window. */
export const EVENTS = ["state-changed", "settings-changed", "activity-changed"] as const;

/** One event name. */
export type EventName = (typeof EVENTS)[number];
