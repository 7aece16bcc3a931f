// Plain-language sentences for what the engine reports: each store problem with its fix, the
// endpoint, the settings file, a subscription's filter. Pure functions, no DOM.

import type {
  AllowCheck,
  ContactsView,
  EntryState,
  FullDiskAccess,
  NotificationKind,
  HttpEndpointState,
  SettingsFileState,
  StoreState,
  SubscriptionState,
} from "./model";

/** "Mail" for `mail.received`, "Messages" for `messages.received`. */
export function typeLabel(name: string): string {
  if (name === "mail.received") return "Mail";
  if (name === "messages.received") return "Messages";
  return name;
}

/** The store's state in one sentence, with the fix when something is wrong. */
export function storeSentence(app: string, store: StoreState): string {
  switch (store.access) {
    case "ok":
      return store.lastScanError
        ? `The ${app} store is readable, but the last scan failed: ${store.lastScanError}. Tidings retries on the next change.`
        : `The ${app} store was found and is readable.`;
    case "not_checked":
      return `The ${app} store has not been checked yet.`;
    case "missing":
      return `No ${app} store was found. Open ${app} once on this Mac, then Tidings finds it.`;
    case "permission_denied":
      return `Tidings may not read the ${app} store. Give Tidings Full Disk Access in System Settings › Privacy & Security › Full Disk Access.`;
    case "schema_problem":
      return `The ${app} store has a layout Tidings does not know (a newer macOS?). Update Tidings.${detail(store.problem)}`;
    case "unreadable":
      return `The ${app} store could not be read.${detail(store.problem)} Tidings retries on the next change.`;
  }
}

function detail(problem: string | null): string {
  return problem ? ` (${problem})` : "";
}

/** A short badge for the store's state. */
export function storeBadge(store: StoreState): { text: string; tone: "ok" | "warn" | "bad" } {
  switch (store.access) {
    case "ok":
      return store.lastScanError ? { text: "Scan failed", tone: "warn" } : { text: "Readable", tone: "ok" };
    case "not_checked":
      return { text: "Checking", tone: "warn" };
    case "missing":
      return { text: "Not found", tone: "bad" };
    case "permission_denied":
      return { text: "Needs Full Disk Access", tone: "bad" };
    case "schema_problem":
      return { text: "Unknown schema", tone: "bad" };
    case "unreadable":
      return { text: "Unreadable", tone: "bad" };
  }
}

/** The HTTP endpoint in one sentence. */
export function httpSentence(http: HttpEndpointState): string {
  switch (http.state) {
    case "off":
      return "Off. Clients connect through the socket.";
    case "starting":
      return "Starting…";
    case "serving":
      return `Serving at ${http.url}${http.no_auth ? " without a token (--no-auth)" : ""}.`;
    case "failed":
      return `Not serving on ${http.listen}: ${http.error}. Change the port to retry.`;
  }
}

/** The settings file's state in one sentence. */
export function settingsSentence(s: SettingsFileState): string {
  if (s.state === "ok") return "settings.toml is in force.";
  return `settings.toml was refused: ${s.reason}. The last good settings stay in force until you fix it.`;
}

const FILTER_WORDS: Record<string, [string, string]> = {
  from: ["sender", "senders"],
  domains: ["domain", "domains"],
  mailboxes: ["mailbox", "mailboxes"],
  chats: ["chat", "chats"],
  service: ["service", "services"],
  account: ["account", "accounts"],
};

/** "1 sender, 1 domain", or "everything the allowlist lets through" for no filter. */
export function filterSummary(sub: SubscriptionState): string {
  const parts = Object.entries(sub.filter)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => {
      const [one, many] = FILTER_WORDS[k] ?? [k, k];
      return `${n} ${n === 1 ? one : many}`;
    });
  return parts.length ? parts.join(", ") : "no filter";
}

const MODE_LABELS: Record<string, string> = {
  push: "push",
  poll: "poll",
  tools: "tools",
  channel: "channel",
};

/** The mode's label. */
export function modeLabel(mode: string): string {
  return MODE_LABELS[mode] ?? mode;
}

const KIND_LABELS: Record<string, string> = {
  address: "An email address",
  domain: "A domain and its subdomains",
  phone: "A phone number",
  phone_prefix: "Phone numbers starting with this prefix",
  address_prefix: "Email addresses starting with this text",
  person: "A person in Contacts: all of their card's numbers and addresses",
  group: "A group in Contacts: all of its members",
};

/** What a checked allowlist entry will match, or why it is refused. */
export function checkSentence(c: AllowCheck): string {
  if (!c.ok) return c.reason ?? "Not a valid entry.";
  return c.kind ? `${KIND_LABELS[c.kind] ?? c.kind}.` : "Valid.";
}

/** "14:05" today, else "30 Nov, 14:05". */
export function timeLabel(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const sameDay = new Date(now).toDateString() === d.toDateString();
  const time = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (sameDay) return time;
  return `${d.toLocaleDateString(undefined, { day: "numeric", month: "short" })}, ${time}`;
}

/** "3 clients" / "1 client". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Whose grant Full Disk Access is (crates/server/src/notices.rs `FULL_DISK_ACCESS_OWNER`; the
 * UI tests check the two agree). */
export const FULL_DISK_ACCESS_OWNER =
  "Full Disk Access belongs to Tidings.app itself, not to Terminal or your MCP client: tidings-mcp only forwards bytes and reads nothing.";

/** How to refresh a grant gone stale with an update (notices.rs `STALE_GRANT_FIX`). */
export const STALE_GRANT_FIX =
  "Tidings had Full Disk Access before this update and has lost it: in System Settings > Privacy & Security > Full Disk Access, remove Tidings with the minus button, add it again, then restart Tidings.";

/** What to do while it is missing (state.rs `FullDiskAccess::fix`). */
export const MISSING_GRANT_FIX =
  "Open System Settings > Privacy & Security > Full Disk Access, turn Tidings on (add it with + if it is not listed), then restart Tidings.";

/** Full Disk Access in one sentence, with the fix when something is to be done. */
export function fullDiskAccessSentence(fda: FullDiskAccess | undefined): string {
  switch (fda?.state ?? "unknown") {
    case "granted":
      return "Tidings has Full Disk Access.";
    case "missing":
      return `Tidings does not have Full Disk Access. ${MISSING_GRANT_FIX}`;
    case "stale":
      return STALE_GRANT_FIX;
    default:
      return "Tidings has not read a store yet, so it cannot tell whether it has Full Disk Access.";
  }
}

/** The label of each kind of notification's switch. */
export function notificationLabel(kind: NotificationKind): string {
  switch (kind) {
    case "first_subscription":
      return "A client starts listening to a type";
    case "full_disk_access":
      return "Tidings lacks Full Disk Access";
    case "store_rebuilt":
      return "A Mail or Messages store is rebuilt";
    case "settings_rejected":
      return "An edit of settings.toml is rejected";
    case "agent_asks":
      return "A new program asks for your mail or messages";
  }
}

/** Why a person or group entry matches nobody; null when it stands for someone. */
export function entryProblem(state: EntryState): string | null {
  switch (state) {
    case "ok":
      return null;
    case "missing":
      return "No longer in Contacts: matches nobody.";
    case "ambiguous":
      return "More than one card or group has this name: matches nobody. Remove it and pick the one you mean.";
    case "unreadable":
      return "Contacts cannot be read: matches nobody until it can.";
  }
}

/** The word beside a person or group entry. */
export function entryKindWord(kind: string | null): string | null {
  if (kind === "person") return "Person";
  if (kind === "group") return "Group";
  return null;
}

const CATEGORY_LABELS: Record<string, string> = {
  primary: "Primary",
  transactions: "Transactions",
  updates: "Updates",
  promotions: "Promotions",
};

/** "Primary" for `primary`; an unknown category by its own name. */
export function categoryLabel(category: string): string {
  return CATEGORY_LABELS[category] ?? category;
}

/** The line an agent gets with names on: the example beside the names switch. */
export function namesExample(eventType: string): string {
  return eventType === "mail.received"
    ? "New mail from Alice Park (alice@example.com)"
    : "New message from Ana Ruiz (+1 202 555 0101)";
}

/** The Contacts status in one line, or null while Contacts can be read. */
export function contactsSentence(c: ContactsView | undefined): string | null {
  if (!c || c.readable) return null;
  const why = c.problem ? ` (${c.problem})` : "";
  return `Contacts cannot be read${why}: names are left out, and person and group entries match nobody.`;
}

/** "29 Nov" for a recent sender's last message. */
export function dayLabel(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return d.toLocaleDateString(undefined, { day: "numeric", month: "short" });
}
