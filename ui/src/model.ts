// The shapes the bridge carries. The engine's are generated from its Rust types
// (./generated/engine.ts: `State` as `tidings status --json` prints it, the app contract's
// SettingsView, Delivery, AllowCheck and the Connect section's HostView and ConnectOutcome);
// this file adds what only the app and the window know.

import type {
  AllowKind as EngineAllowKind,
  SettingsView as EngineSettingsView,
  State as EngineState,
  TypeView as EngineTypeView,
} from "./generated/engine";

export type {
  AllowCheck,
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

// People, groups, names and categories (issue 33). Written by hand until the engine's types
// are regenerated with them: the names are the bridge contract's.

/** What an allowlist entry names: a sender pattern's kind, or a Contacts person or group. */
export type AllowKind = EngineAllowKind | "person" | "group";

/** Whether a person or group entry stands for someone now (sender entries are always `ok`). */
export type EntryState = "ok" | "missing" | "ambiguous" | "unreadable";

/** One allowlist entry as the window shows it. */
export interface AllowEntryView {
  /** The entry as settings.toml holds it (`person: Ana Ruiz [ID]`, `acme.com`). */
  entry: string;
  /** What it names; null when the engine cannot tell. */
  kind: AllowKind | null;
  /** The name to show: a person's or group's name, else the entry itself. */
  label: string;
  state: EntryState;
}

/** One event type's settings, with the people fields. */
export type TypeView = EngineTypeView & {
  /** Each entry of `allow`, in the same order, with its kind, label and state. */
  entries: AllowEntryView[];
  /** Whether events carry the sender's Contacts name (off until the user turns it on). */
  names: boolean;
  /** The categories the type is restricted to; empty: all. */
  categories: string[];
  /** The categories this type's store can tell apart; empty: none (no control shown). */
  offeredCategories: string[];
};

/** Whether the Contacts stores can be read, and why not. */
export interface ContactsView {
  readable: boolean;
  problem: string | null;
}

/** The settings window's whole view, with the people fields. */
export type SettingsView = Omit<EngineSettingsView, "types"> & {
  types: TypeView[];
  contacts: ContactsView;
};

/** One card found by `search_people`. */
export interface PersonHit {
  id: string;
  name: string;
  /** A company card (its name is the organisation's). */
  company: boolean;
  /** The card's numbers and addresses, as written on it. */
  handles: string[];
  /** The allowlist entry that names this person. */
  entry: string;
}

/** One Contacts group from `list_groups`. */
export interface GroupHit {
  id: string;
  name: string;
  /** How many people it holds. */
  members: number;
  entry: string;
}

/** One sender who wrote in the last 30 days, from `recent_senders`. */
export interface RecentSenderView {
  /** As the store holds it (`+12025550101`, `ana@example.com`). */
  handle: string;
  /** The Contacts name, when a card has this handle. */
  name: string | null;
  /** Messages from this sender in the window. */
  count: number;
  /** The newest one's time (RFC 3339). */
  last: string;
  /** Whether the allowlist already lets this sender through. */
  allowed: boolean;
}
