// Generated from the engine's Rust types by crates/server/src/ui_contract/ (ts-rs):
// do not edit. After changing a type the bridge carries, run
// `TIDINGS_BLESS=1 cargo test -p tidings-server --lib ui_contract`.

/**
 * Everything the engine knows that a person or a tool may want to see, as one value.
 */
export type State = {
/**
 * The engine's version.
 */
version: string,
/**
 * The Unix socket, home-relative; `None` when the engine serves no socket (tests).
 */
socket: string | null,
/**
 * Open socket connections.
 */
connections: number,
/**
 * Open long-lived requests (push streams and listens) across all clients.
 */
streams: number,
/**
 * One entry per event type, in `EventType::ALL` order.
 */
types: Array<TypeState>,
/**
 * The loopback HTTP endpoint.
 */
http: HttpEndpointState,
/**
 * Whether `settings.toml` holds the settings in force.
 */
settings: SettingsFileState,
/**
 * The clients connected now, oldest first.
 */
clients: Array<ClientState>,
/**
 * The agents: each with a grant in settings.toml, seen since start, or asking.
 */
agents: Array<AgentState>,
/**
 * What a never-seen agent gets (`[agents] new`).
 */
newAgents: NewAgents,
/**
 * Until when every type is paused (ms since the Unix epoch): clients see every type off
 * while `types` still says what is configured. `None`: not paused.
 */
pausedUntilMs: number | null,
/**
 * Whether Tidings has Full Disk Access, from the stores' last checks.
 */
fullDiskAccess: FullDiskAccess,
/**
 * Whether the Contacts stores could be read: counts and files only, never a card.
 */
contacts: ContactsState,
/**
 * Webhook delivery: the destinations, the subscriptions and how they deliver.
 */
webhooks: WebhooksState, };

/**
 * One event type: whether it is on, who may reach agents through it, and its store.
 */
export type TypeState = {
/**
 * The wire name (`mail.received`).
 */
name: string,
/**
 * Whether clients may see it.
 */
enabled: boolean,
/**
 * The sender allowlist, as counts per kind.
 */
allowlist: AllowlistSummary,
/**
 * The backfill window in days (`0`: off).
 */
backfillDays: number,
/**
 * The store behind it.
 */
store: StoreState, };

/**
 * How many allowlist entries of each kind are set; never the entries themselves.
 */
export type AllowlistSummary = {
/**
 * Exact email addresses.
 */
addresses: number,
/**
 * Exact phone numbers or other handles.
 */
handles: number,
/**
 * Domains (with their subdomains).
 */
domains: number,
/**
 * Prefixes (`+1202*`).
 */
prefixes: number,
/**
 * Cards from Contacts (each stands for its numbers and addresses).
 */
people: number,
/**
 * Contacts groups (each stands for its members).
 */
groups: number,
/**
 * Person or group entries that stand for nobody now: the card or group is gone, the
 * name is shared, or Contacts cannot be read. They match no sender.
 */
unresolved: number, };

/**
 * One store: where it is, whether it can be read, and what the engine saw in it.
 */
export type StoreState = {
/**
 * The store file, home-relative.
 */
path: string,
/**
 * Whether it can be read, from the last check (else the last scan).
 */
access: StoreAccess,
/**
 * The last check's or scan's error message (home-relative), when not `ok`.
 */
problem: string | null,
/**
 * The last scan's error (a poll or a stream step), home-relative; `None` when the last
 * scan worked or none ran yet.
 */
lastScanError: string | null,
/**
 * When the store last changed (ms since the Unix epoch), as seen since start.
 */
lastChangeMs: number | null,
/**
 * Distinct rows skipped as backfill since start.
 */
backfilled: number,
/**
 * Rows skipped because they could not be read, since start.
 */
unreadableRows: number, };

/**
 * Whether a store can be read, in the terms its fix is given in.
 */
export type StoreAccess = "not_checked" | "ok" | "missing" | "permission_denied" | "schema_problem" | "unreadable";

/**
 * The loopback HTTP endpoint, as its supervisor reports it.
 */
export type HttpEndpointState = { "state": "off" } | { "state": "starting" } | { "state": "serving",
/**
 * `http://127.0.0.1:PORT/mcp`.
 */
url: string,
/**
 * Whether requests need no token (`--demo --no-auth`).
 */
no_auth: boolean, } | { "state": "failed",
/**
 * The address asked for.
 */
listen: string,
/**
 * Why (names no secret).
 */
error: string, };

/**
 * Whether the settings in force are the file's.
 */
export type SettingsFileState = { "state": "ok" } | { "state": "rejected",
/**
 * The line at fault, when known.
 */
line: number | null,
/**
 * Why, naming the line and the limit, never a value from the file.
 */
reason: string, };

/**
 * One connected client and what it listens to.
 */
export type ClientState = {
/**
 * The engine's id for it (for `Handle::revoke`); never reused while the engine runs.
 */
id: number,
/**
 * The name it announced (`clientInfo.name`), cut to 64 characters.
 */
name: string | null,
/**
 * The version it announced.
 */
version: string | null,
/**
 * How it is connected.
 */
transport: Transport,
/**
 * When it connected (ms since the Unix epoch).
 */
connectedSinceMs: number,
/**
 * Its process id, where the OS tells (socket connections).
 */
pid: number | null,
/**
 * The id of the agent behind it (`State.agents`), whose grant applies.
 */
agent: string,
/**
 * Whether it was revoked (it gets Forbidden until it reconnects).
 */
revoked: boolean,
/**
 * Its subscriptions: open streams, and the polls and tool calls it made.
 */
subscriptions: Array<SubscriptionState>, };

/**
 * How a client is connected.
 */
export type Transport = "socket" | "http";

/**
 * One subscription of a client.
 */
export type SubscriptionState = {
/**
 * The event type's wire name.
 */
eventType: string,
/**
 * The filter, as the number of values per argument (`{"from": 2}`), never the values.
 */
filter: { [key in string]: number },
/**
 * How it receives.
 */
mode: Mode,
/**
 * Events delivered through it.
 */
delivered: number,
/**
 * When it last delivered (ms since the Unix epoch).
 */
lastDeliveryMs: number | null, };

/**
 * How a client receives events.
 */
export type Mode = "push" | "poll" | "tools" | "channel";

/**
 * Full Disk Access, as the stores' checks show it (macOS has no API that tells).
 */
export type FullDiskAccess = { "state": "unknown" } | { "state": "granted" } | { "state": "missing" } | { "state": "stale",
/**
 * The version that last had access.
 */
last_granted: string, };

/**
 * The Contacts stores as last read. Person and group allowlist entries need them; when none
 * can be read those entries match nobody.
 */
export type ContactsState = {
/**
 * Stores read without a problem.
 */
storesRead: number,
/**
 * The first store that could not be read and why (home-relative), if any.
 */
problem: string | null, };

/**
 * One agent.
 */
export type AgentState = {
/**
 * Its id (`tidings agents allow ID`), the key of its grant in settings.toml.
 */
id: string,
/**
 * What identifies it (`exe:/usr/bin/foo`, `signed:TEAM:ID`, `token:NAME`,
 * `unidentified`): the `identity` of its grant in settings.toml.
 */
identity: string,
/**
 * What it is: the program's name, never the name it announced.
 */
name: string,
/**
 * Who signed it (macOS), when known.
 */
signer: string | null,
/**
 * The program's path, home-relative, when known.
 */
program: string | null,
/**
 * How it was identified.
 */
kind: AgentKind,
/**
 * The names its connections announced (`clientInfo.name`): shown, never trusted.
 */
announced: Array<string>,
/**
 * What the user decided.
 */
access: AgentAccess,
/**
 * Its grant per type (for an agent with no grant: what `new = "allow"` would give).
 */
grants: Array<TypeGrantState>,
/**
 * The type of the request waiting for the user's answer, while it asks.
 */
asking: string | null,
/**
 * Open connections (socket) or tokens in use (HTTP).
 */
connections: number,
/**
 * Open streams.
 */
streams: number,
/**
 * Events delivered to it since Tidings started.
 */
delivered: number,
/**
 * When it last connected or made a request (ms since the Unix epoch); `None`: not seen
 * since Tidings started.
 */
lastSeenMs: number | null, };

/**
 * Webhook delivery as the window and `tidings status` show it.
 */
export type WebhooksState = {
/**
 * The origins on `[webhooks] allow`, as the file holds them.
 */
destinations: Array<string>,
/**
 * Every subscription, by id.
 */
subscriptions: Array<WebhookState>,
/**
 * Destinations an agent asked for that are not on the list, oldest first.
 */
asks: Array<DestinationAskState>, };

/**
 * One webhook subscription.
 */
export type WebhookState = {
/**
 * `sub_…`, as the `X-MCP-Subscription-Id` header carries it.
 */
id: string,
/**
 * `mail.received` or `messages.received`.
 */
eventType: string,
/**
 * The destination's origin.
 */
destination: string,
/**
 * The agent it belongs to (its id) and how it is shown.
 */
agent: string, agentName: string,
/**
 * The filter, as the number of values per argument (`{"domains": 1}`), never the
 * values.
 */
filter: { [key in string]: number },
/**
 * Deliveries go out; false once the retries ran out (suspended).
 */
active: boolean,
/**
 * When it lapses unless refreshed (ms since the epoch); `None`: never.
 */
refreshBeforeMs: number | null,
/**
 * The last accepted delivery (ms since the epoch).
 */
lastDeliveryMs: number | null,
/**
 * The last failure's category (`connection_refused`, `timeout`, `tls_error`,
 * `http_4xx`, `http_5xx`, `challenge_failed`).
 */
lastError: string | null,
/**
 * Since when deliveries fail (ms since the epoch).
 */
failedSinceMs: number | null,
/**
 * Events delivered.
 */
delivered: number, };

/**
 * A destination an agent asked for, not on the list: the window asks the user.
 */
export type DestinationAskState = {
/**
 * The origin, as the list would hold it.
 */
origin: string,
/**
 * Who asked.
 */
agent: string,
/**
 * When it first asked (ms since the epoch).
 */
sinceMs: number, };

/**
 * How an agent was identified.
 */
export type AgentKind = "program" | "signed" | "token" | "unidentified";

/**
 * What the user decided about an agent.
 */
export type AgentAccess = "allowed" | "denied" | "asking" | "new";

/**
 * One type's part of an agent's grant.
 */
export type TypeGrantState = {
/**
 * The event type's wire name.
 */
eventType: string,
/**
 * Whether the agent may receive it at all.
 */
granted: boolean,
/**
 * How many of the type's allowlist entries it keeps; `None`: every sender the type lets
 * through.
 */
senders: number | null, };

/**
 * What a never-seen agent gets.
 */
export type NewAgents = "ask" | "allow" | "deny";

/**
 * The settings window's whole view of the settings.
 */
export type SettingsView = {
/**
 * One entry per event type, in `EventType::ALL` order.
 */
types: Array<TypeView>,
/**
 * The loopback HTTP endpoint.
 */
http: HttpView,
/**
 * Whether the app may show notifications (the master switch).
 */
notifications: boolean,
/**
 * Each kind's own switch, in `NotificationKind::ALL` order.
 */
notificationKinds: Array<NotificationSwitch>,
/**
 * Until when every type is paused (ms since the Unix epoch), if paused.
 */
pausedUntilMs: number | null,
/**
 * Whether the first-run walk-through is still to be shown.
 */
firstRun: boolean,
/**
 * The JSON to paste into a client's MCP configuration.
 */
connectSnippet: string,
/**
 * Whether the app starts at login.
 */
startAtLogin: LoginView,
/**
 * Whether the Contacts stores can be read.
 */
contacts: ContactsView,
/**
 * The questions open about programs with no grant, oldest first (their words are for
 * the window only: `State` says only which agents ask).
 */
asks: Array<AskView>,
/**
 * What a never-seen program gets (`[agents] new`).
 */
newAgents: NewAgents,
/**
 * The grant of each agent in settings.toml, with its sender entries.
 */
agentGrants: Array<AgentGrantView>,
/**
 * The agents' own HTTP tokens (names and dates, never the tokens).
 */
agentTokens: Array<AgentTokenView>,
/**
 * The update check: its switch, this copy's version, the last check.
 */
updates: UpdatesView, };

/**
 * One event type's settings, with its allowlist in words.
 */
export type TypeView = {
/**
 * The wire name (`mail.received`).
 */
name: string,
/**
 * Whether it is configured on (a pause does not change this).
 */
enabled: boolean,
/**
 * The allowlist entries, as settings.toml holds them.
 */
allow: Array<string>,
/**
 * The backfill window in days (`0`: off).
 */
backfillDays: number,
/**
 * What an agent can see, in a sentence.
 */
reach: string,
/**
 * The menu's line under the type: "from acme.com and 2 more".
 */
summary: string,
/**
 * Each entry of `allow`, in the same order, with its kind, label and state.
 */
entries: Array<AllowEntryView>,
/**
 * Whether events carry the sender's name from Contacts (`contact_names`).
 */
names: boolean,
/**
 * The categories the type is restricted to; empty: all.
 */
categories: Array<string>,
/**
 * The categories this type's store files messages under, in the window's order.
 */
offeredCategories: Array<string>, };

/**
 * The HTTP endpoint as configured.
 */
export type HttpView = {
/**
 * Whether it is on in settings.
 */
enabled: boolean,
/**
 * The port it listens on.
 */
port: number,
/**
 * The bearer token, when one is stored; `None` without a token (not made yet, no
 * keychain, or `--no-auth`).
 */
token: string | null, };

/**
 * One kind of notification's switch (`[notifications]` in settings.toml).
 */
export type NotificationSwitch = {
/**
 * Its key in `[notifications]`, the name `set_notification_kind` takes
 * (`first_subscription`).
 */
kind: NotificationKind,
/**
 * Whether its switch is on (shown only while the master switch is on too).
 */
enabled: boolean, };

/**
 * The kinds of notification, each with its own switch in [`NotificationSettings`].
 */
export type NotificationKind = "first_subscription" | "full_disk_access" | "store_rebuilt" | "settings_rejected" | "agent_asks";

/**
 * Start at login, as the window and the menu show it.
 */
export type LoginView = {
/**
 * `enabled`, `requiresApproval` (macOS waits for the user in Login Items) or `disabled`.
 */
state: "enabled" | "requiresApproval" | "disabled",
/**
 * One sentence: what it means, and what to do when it needs something.
 */
text: string, };

/**
 * One allowlist entry as the window shows it.
 */
export type AllowEntryView = {
/**
 * The entry as settings.toml holds it (`person: Ana Ruiz [ID]`, `acme.com`).
 */
entry: string,
/**
 * What it names.
 */
kind: AllowKind,
/**
 * The name to show: a person's or group's name, else the entry itself.
 */
label: string,
/**
 * Whether it stands for anyone now.
 */
state: EntryState, };

/**
 * Whether a people entry stands for anyone now, for status and the app.
 */
export type EntryState = "ok" | "missing" | "ambiguous" | "unreadable";

/**
 * Whether the Contacts stores can be read, and why not.
 */
export type ContactsView = {
/**
 * At least one store was read.
 */
readable: boolean,
/**
 * The first store that could not be read and why, if any.
 */
problem: string | null, };

/**
 * One question open: a program with no grant asked for events and waits for the answer.
 */
export type AskView = {
/**
 * The agent's id (`answer_agent` takes it).
 */
id: string,
/**
 * What it is, as the OS says: "claude (signed by Anthropic PBC)".
 */
agent: string,
/**
 * What it asked for: "new mail from example.com".
 */
wants: string,
/**
 * The type of its first request.
 */
eventType: string,
/**
 * When it asked (ms since the Unix epoch).
 */
sinceMs: number, };

/**
 * The grant of one agent with an entry in settings.toml (`State.agents` has the rest).
 */
export type AgentGrantView = {
/**
 * The agent's id, as in `State.agents`.
 */
id: string,
/**
 * Each type's grant, in `EventType::ALL` order.
 */
types: Array<AgentTypeView>, };

/**
 * One agent token, as the window lists it (never the token).
 */
export type AgentTokenView = {
/**
 * The agent's name: requests with the token are the agent `token:NAME`.
 */
name: string,
/**
 * When it was made (ms since the Unix epoch).
 */
createdMs: number, };

/**
 * A token just made: shown once, with the settings as they are now.
 */
export type CreatedToken = {
/**
 * The agent's name.
 */
name: string,
/**
 * The bearer token: shown now, never again (only its hash is kept).
 */
token: string,
/**
 * The settings, with the new token listed.
 */
settings: SettingsView, };

/**
 * One type of an agent's grant, with its senders.
 */
export type AgentTypeView = {
/**
 * The type's wire name.
 */
eventType: string,
/**
 * What the agent may receive of it.
 */
grant: TypeGrantView, };

/**
 * One type's part of an agent's grant, as the window shows and sends it: `"every"`,
 * `"none"`, or `{"senders": [...]}` (entries of the type's allowlist, as settings.toml holds
 * them).
 */
export type TypeGrantView = "every" | "none" | { "senders": Array<string> };

/**
 * The update check, as the Advanced section shows it.
 */
export type UpdatesView = {
/**
 * Whether the app checks once a day (`[updates] check`).
 */
check: boolean,
/**
 * This copy's version.
 */
current: string,
/**
 * The last check in one line ("Tidings 0.2.0 is ready to install."); `None` before the
 * first.
 */
last: string | null,
/**
 * When the last check ended (ms since the Unix epoch).
 */
checkedAtMs: number | null, };

/**
 * One card found by [`search_people`].
 */
export type PersonHit = {
/**
 * The card's id in Contacts.
 */
id: string,
/**
 * Its name (the organisation's, for a company card).
 */
name: string,
/**
 * A company card.
 */
company: boolean,
/**
 * Its numbers and addresses, as written on it.
 */
handles: Array<string>,
/**
 * The allowlist entry that names this person.
 */
entry: string, };

/**
 * One Contacts group from [`list_groups`].
 */
export type GroupHit = {
/**
 * The group's id in Contacts.
 */
id: string,
/**
 * Its name.
 */
name: string,
/**
 * How many people it holds.
 */
members: number,
/**
 * The allowlist entry that names this group.
 */
entry: string, };

/**
 * One sender who wrote in the last [`RECENT_DAYS`] days, from [`recent_senders`].
 */
export type RecentSenderView = {
/**
 * As the store holds it (`+12025550101`, `ana@example.com`).
 */
handle: string,
/**
 * The Contacts name when a card has this handle, else the name Mail shows.
 */
name: string | null,
/**
 * Messages from this sender in the window.
 */
count: number,
/**
 * The newest one's time (RFC 3339).
 */
last: string,
/**
 * Whether the allowlist already lets this sender through.
 */
allowed: boolean, };

/**
 * The answer to `check_allow_entry`.
 */
export type AllowCheck = {
/**
 * Whether the entry would be accepted.
 */
ok: boolean,
/**
 * What it names, when accepted.
 */
kind: AllowKind | null,
/**
 * Why not, when refused.
 */
reason: string | null, };

/**
 * What an allowlist entry names.
 */
export type AllowKind = "address" | "domain" | "phone" | "phone_prefix" | "address_prefix" | "person" | "group";

/**
 * One delivery, for the app's Activity list. It names the sender, so it is kept in memory
 * only and is never part of `State` (which any client may read).
 */
export type Delivery = {
/**
 * When (ms since the Unix epoch).
 */
atMs: number,
/**
 * The event type's wire name.
 */
eventType: string,
/**
 * The client's id (as in `State.clients`).
 */
clientId: number,
/**
 * The name the client announced.
 */
clientName: string | null,
/**
 * The sender's address or handle.
 */
sender: string, };

/**
 * One row of the Connect section.
 */
export type HostView = {
/**
 * The snippet to copy, for the configured mode (else tools); `None` without a shim.
 */
snippet: string | null,
/**
 * Whether the host runs now (a change needs a restart).
 */
running: boolean,
/**
 * `claude-code`, ….
 */
id: string,
/**
 * "Claude Code", ….
 */
name: string,
/**
 * Its config file.
 */
path: string,
/**
 * The configured mode (`tools` stands for tools and events), `None` when not
 * configured.
 */
configured: string | null,
/**
 * The configured command, when configured.
 */
command: string | null,
/**
 * Why the config could not be read, if it could not.
 */
problem: string | null,
/**
 * The modes that apply.
 */
modes: Array<string>,
/**
 * How many connections announced this host now; `None` when no daemon answered.
 */
connected: number | null, };

/**
 * What Connect or Disconnect did, for the row.
 */
export type ConnectOutcome = {
/**
 * The file written.
 */
path: string,
/**
 * The copy of the old file.
 */
backup: string | null,
/**
 * The restart warning, when the host runs.
 */
restart: string | null,
/**
 * The check after connecting ("Connected ✓ …" or the failure); `None` after a
 * disconnect.
 */
verification: Verification | null, };

/**
 * The result of a check.
 */
export type Verification = {
/**
 * Whether the handshake completed.
 */
ok: boolean,
/**
 * "Connected ✓ (…)" or the failure.
 */
message: string, };

/** The longest backfill window the app offers, in days (`app::MAX_APP_BACKFILL_DAYS`). */
export const MAX_APP_BACKFILL_DAYS = 365;
