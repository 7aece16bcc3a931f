// The shapes the bridge carries: `State` mirrors crates/server/src/state.rs (camelCase, as
// `tidings status --json` prints it) plus the app's `menuBar`, the rest the app contract's
// SettingsView and Delivery.

export type StoreAccess =
  | "not_checked"
  | "ok"
  | "missing"
  | "permission_denied"
  | "schema_problem"
  | "unreadable";

export interface StoreState {
  path: string;
  access: StoreAccess;
  problem: string | null;
  lastScanError: string | null;
  lastChangeMs: number | null;
  backfilled: number;
  unreadableRows: number;
}

export interface AllowlistSummary {
  addresses: number;
  handles: number;
  domains: number;
  prefixes: number;
}

export interface TypeState {
  name: string;
  enabled: boolean;
  allowlist: AllowlistSummary;
  backfillDays: number;
  store: StoreState;
}

export type HttpEndpointState =
  | { state: "off" }
  | { state: "starting" }
  | { state: "serving"; url: string; no_auth: boolean }
  | { state: "failed"; listen: string; error: string };

export type SettingsFileState =
  | { state: "ok" }
  | { state: "rejected"; line: number | null; reason: string };

export type Mode = "push" | "poll" | "tools" | "channel";

export interface SubscriptionState {
  eventType: string;
  filter: Record<string, number>;
  mode: Mode;
  delivered: number;
  lastDeliveryMs: number | null;
}

export interface ClientState {
  id: number;
  name: string | null;
  version: string | null;
  transport: "socket" | "http";
  connectedSinceMs: number;
  pid: number | null;
  revoked: boolean;
  subscriptions: SubscriptionState[];
}

/** Full Disk Access as the stores' checks show it (state.rs `FullDiskAccess`). */
export type FullDiskAccess =
  | { state: "unknown" }
  | { state: "granted" }
  | { state: "missing" }
  | { state: "stale"; last_granted: string };

/**
 * The app's menu-bar icon, as its launch check found it (src-tauri/src/menu_bar.rs). Added by
 * the app beside the engine's fields: `tidings status` has no `menuBar`.
 */
export type MenuBar =
  | { state: "checking" }
  | { state: "shown" }
  | { state: "hidden"; fix: string }
  | { state: "unknown" };

export interface State {
  version: string;
  socket: string | null;
  connections: number;
  streams: number;
  types: TypeState[];
  http: HttpEndpointState;
  settings: SettingsFileState;
  clients: ClientState[];
  /** Absent from an engine older than the field: read as unknown. */
  fullDiskAccess?: FullDiskAccess;
  /** Absent outside the app (a State from `tidings status`): nothing to say. */
  menuBar?: MenuBar;
}

export interface TypeSettings {
  name: string;
  enabled: boolean;
  allow: string[];
  backfillDays: number;
  /** A plain sentence of what an agent can see. */
  reach: string;
  /** "from acme.com and 2 more". */
  summary: string;
}

export interface SettingsView {
  types: TypeSettings[];
  http: { enabled: boolean; port: number; token: string | null };
  notifications: boolean;
  /** Each kind's own switch (`[notifications]` keys), in the window's order. */
  notificationKinds: { kind: NotificationKind; enabled: boolean }[];
  pausedUntilMs: number | null;
  firstRun: boolean;
  connectSnippet: string;
  /** Start at login (the menu's "Start at Login"), with one sentence for the user. */
  startAtLogin: { state: "enabled" | "requiresApproval" | "disabled"; text: string };
}

/** The kinds of notification (core's `NotificationKind`, by their settings.toml keys). */
export type NotificationKind = "first_subscription" | "full_disk_access" | "store_rebuilt" | "settings_rejected";

/** The kinds core's `check_allow_entry` returns (crates/core/src/allowlist.rs `AllowKind`). */
export type AllowKind = "address" | "domain" | "phone" | "phone_prefix" | "address_prefix";

export interface AllowCheck {
  ok: boolean;
  kind: AllowKind | null;
  reason: string | null;
}

export interface Delivery {
  atMs: number;
  eventType: string;
  clientId: number;
  clientName: string | null;
  sender: string;
}

/** The most backfill the engine accepts, in days (contract: 0..=365). */
export const MAX_BACKFILL_DAYS = 365;

/** One MCP host in the Connect section (`list_hosts`, crates/connect/src/app.rs). */
export interface HostView {
  id: string;
  name: string;
  /** Its config file. */
  path: string;
  /** The configured mode ("tools" also stands for events), or null. */
  configured: string | null;
  command: string | null;
  /** Why the config could not be read. */
  problem: string | null;
  modes: string[];
  /** Connections that announced this host now; null when the engine cannot tell. */
  connected: number | null;
  /** The snippet to copy; null when the shim is not found. */
  snippet: string | null;
  /** The host runs now: a change needs a restart. */
  running: boolean;
}

/** What `connect_host` / `disconnect_host` did. */
export interface ConnectOutcome {
  path: string;
  backup: string | null;
  restart: string | null;
  verification: { ok: boolean; message: string } | null;
}
