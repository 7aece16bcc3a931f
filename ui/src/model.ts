// The shapes the bridge carries. The engine's are generated from its Rust types
// (./generated/engine.ts: `State` as `tidings status --json` prints it, the app contract's
// SettingsView, Delivery, AllowCheck and the Connect section's HostView and ConnectOutcome);
// this file adds what only the app and the window know.

import type { State as EngineState } from "./generated/engine";

export type {
  AgentAccess,
  AgentGrantView,
  AgentKind,
  AgentState,
  AgentTokenView,
  AgentTypeView,
  CreatedToken,
  AskView,
  NewAgents,
  TypeGrantState,
  TypeGrantView,
  AllowCheck,
  AllowEntryView,
  AllowKind,
  ContactsView,
  EntryState,
  GroupHit,
  PersonHit,
  RecentSenderView,
  SettingsView,
  TypeView,
  AllowlistSummary,
  ClientState,
  ConnectOutcome,
  Delivery,
  FullDiskAccess,
  HostView,
  HttpEndpointState,
  HttpView,
  LoginView,
  Mode,
  NotificationKind,
  NotificationSwitch,
  SettingsFileState,
  StoreAccess,
  StoreState,
  SubscriptionState,
  Transport,
  TypeState,
  Verification,
} from "./generated/engine";

/**
 * The app's menu-bar icon, as its launch check found it (src-tauri/src/menu_bar.rs). Added by
 * the app beside the engine's fields: `tidings status` has no `menuBar`.
 */
export type MenuBar =
  | { state: "checking" }
  | { state: "shown" }
  | { state: "hidden"; fix: string }
  | { state: "unknown" };

/** What `get_state` and `state-changed` carry: the engine's State and the app's `menuBar`. */
export type State = EngineState & {
  /** Absent outside the app (a State from `tidings status`): nothing to say. */
  menuBar?: MenuBar;
};

/** The most backfill the app accepts, in days (0 is off). */
export { MAX_APP_BACKFILL_DAYS as MAX_BACKFILL_DAYS } from "./generated/engine";
