// The fake app bridge the UI tests inject before the page loads (page.addInitScript): it
// keeps a State, a SettingsView and the activity in memory, answers the contract's commands
// the way the app does (each settings change also emits settings-changed), records every
// call, and lets a test emit events as the app or the tray would. It also keeps a small
// Contacts (people, a company card, groups) and each type's recent senders, so the sender
// picker, person and group entries, the names switch and the categories work as in the app.
// Agents: the State's agents and the SettingsView's questions and grants move together, as
// the app's answer_agent, set_agent_access, set_agent_type, forget_agent and set_new_agents
// move them (a grant made on first decision, a question closed by any decision).
//
// Self-contained on purpose: Playwright serialises `installFakeBridge` into the page.

export function installFakeBridge(seed) {
  const clone = (v) => JSON.parse(JSON.stringify(v));
  const data = {
    state: clone(seed.state),
    settings: clone(seed.settings),
    activity: clone(seed.activity),
    hosts: clone(seed.hosts ?? defaultHosts()),
    people: clone(seed.people ?? defaultPeople()),
    groups: clone(seed.groups ?? defaultGroups()),
    recent: clone(seed.recent ?? defaultRecent()),
  };
  // The people fields, for fixtures captured before the app had them.
  data.settings.contacts ??= { readable: true, problem: null };
  for (const t of data.settings.types) {
    t.names ??= false;
    t.categories ??= [];
    t.offeredCategories ??= t.name === "mail.received" ? ["primary", "transactions", "updates", "promotions"] : ["primary", "transactions", "promotions"];
  }
  data.settings.asks ??= [];
  data.settings.newAgents ??= "ask";
  data.settings.agentGrants ??= [];
  data.settings.agentTokens ??= [];
  data.settings.updates ??= { check: true, current: "0.1.0", last: null, checkedAtMs: null };
  data.state.agents ??= [];
  data.state.webhooks ??= { destinations: [], subscriptions: [], asks: [] };
  const calls = [];
  const unknown = [];
  const listeners = new Map();
  const fail = (message) => Promise.reject({ message });

  function emit(name, payload) {
    for (const cb of listeners.get(name) ?? []) cb({ event: name, id: 0, payload: clone(payload) });
  }
  function typeOf(eventType) {
    return data.settings.types.find((t) => t.name === eventType);
  }
  // The demo Contacts: ids are ZUNIQUEIDs, handles as written on the card with the store's form.
  function defaultPeople() {
    const phone = (written, key) => ({ written, key });
    const mail = (written) => ({ written, key: written.toLowerCase() });
    const person = (id, name, phones, emails, company = false) => ({ id: `${id}:ABPerson`, name, company, phones, emails });
    return [
      person("4F1C2A7E-0D7B-4E55-9C3A-1B2D3E4F5A60", "Ana Ruiz", [phone("(202) 555-0101", "+12025550101")], [mail("ana.ruiz@example.net")]),
      person("7B9E0C41-5A2D-4C8F-B1E3-2D4F6A8C0E12", "Alice Park", [phone("+1 202 555 0147", "+12025550147")], [mail("alice@example.com")]),
      person("A3D5F7B9-1C2E-4A6B-8D0F-3E5A7C9B1D24", "Bob Stone", [], [mail("Bob@Example.org")]),
      person("C8E0A2B4-6D8F-4B1C-9E3A-5F7B9D1C3E46", "Anders Berg", [phone("070-123 45 67", "+46701234567")], []),
      person("E2B4D6F8-0A1C-4E3B-8F5D-7A9C1E3B5D68", "Acme Couriers", [phone("(202) 555-0188", "+12025550188"), phone("56249", "56249")], [mail("dispatch@acme.example")], true),
    ];
  }
  function defaultGroups() {
    const [ana, alice, bob, anders] = defaultPeople().map((p) => p.id);
    return [
      { id: "9A2B4C6D-8E0F-4A1B-9C2D-3E4F5A6B7C80:ABGroup", name: "Family", members: [ana, bob] },
      { id: "1D3F5B7A-9C0E-4B2D-8F4A-6C8E0A2B4D91:ABGroup", name: "Book club", members: [alice, ana, anders] },
    ];
  }
  function defaultRecent() {
    const r = (handle, count, last) => ({ handle, count, last });
    return {
      "mail.received": [
        r("news@shop.example", 22, "2026-11-30T08:02:00Z"),
        r("alice@example.com", 14, "2026-11-30T07:45:00Z"),
        r("dispatch@acme.example", 5, "2026-11-29T16:20:00Z"),
        r("bob@example.org", 3, "2026-11-27T19:05:00Z"),
      ],
      "messages.received": [
        r("+12025550101", 9, "2026-11-30T09:12:00Z"),
        r("56249", 6, "2026-11-28T11:30:00Z"),
        r("+12025550143", 2, "2026-11-21T18:40:00Z"),
        r("+46701234567", 1, "2026-11-12T10:00:00Z"),
      ],
    };
  }

  // People entries: "person: Ana Ruiz [ID]", "group: Family [ID]" or "group: Family".
  function parsePeople(raw) {
    const m = /^(person|group):\s*(.*?)\s*(?:\[([^\]]+)\])?$/.exec(String(raw).trim());
    return m && m[2] ? { kind: m[1], name: m[2], id: m[3] ?? null } : null;
  }
  function resolve(p) {
    if (!data.settings.contacts.readable) return { state: "unreadable", keys: [] };
    const pool = p.kind === "person" ? data.people : data.groups;
    const found = p.id ? pool.filter((x) => x.id === p.id) : pool.filter((x) => x.name.toLowerCase() === p.name.toLowerCase());
    if (found.length > 1) return { state: "ambiguous", keys: [] };
    if (!found.length) return { state: "missing", keys: [] };
    const people = p.kind === "person" ? found : data.people.filter((x) => found[0].members.includes(x.id));
    const keys = people.flatMap((x) => [...x.phones, ...x.emails]).map((hd) => hd.key).filter(Boolean);
    return { state: "ok", keys, name: found[0].name };
  }
  // Whether the allowlist lets `handle` through (a small model of core's matching).
  function allows(list, handle) {
    const h = handle.toLowerCase();
    return list.some((e) => {
      const p = parsePeople(e);
      if (p) return resolve(p).keys.some((k) => k.toLowerCase() === h);
      const x = e.toLowerCase();
      if (x.endsWith("*")) return h.startsWith(x.slice(0, -1));
      if (x.includes("@") && !x.startsWith("@")) return x === h;
      if (/^[a-z0-9@]/.test(x) && /[a-z]/.test(x)) {
        const d = x.replace(/^@/, "");
        const host = h.split("@")[1] ?? "";
        return host === d || host.endsWith(`.${d}`);
      }
      return x.replace(/[^+0-9]/g, "") === h;
    });
  }
  const nameOf = (handle) => data.people.find((p) => [...p.phones, ...p.emails].some((hd) => hd.key === handle.toLowerCase()))?.name ?? null;
  const personHit = (p) => ({ id: p.id, name: p.name, company: p.company, handles: [...p.phones, ...p.emails].map((hd) => hd.written), entry: `person: ${p.name} [${p.id}]` });

  // The derived lines, as the app words them (roughly): kept true to the seed's lists.
  function derive() {
    for (const t of data.settings.types) {
      t.entries = t.allow.map((entry) => {
        const p = parsePeople(entry);
        if (!p) return { entry, kind: check(t.name, entry).kind, label: entry, state: "ok" };
        const r = resolve(p);
        return { entry, kind: p.kind, label: r.name ?? p.name, state: r.state };
      });
      const noun = t.name === "mail.received" ? "mail" : "messages";
      const word = (e) => (e.kind === "group" ? `the group ${e.label}` : e.label);
      t.summary = t.allow.length ? `from ${t.entries[0].label}${t.allow.length > 1 ? ` and ${t.allow.length - 1} more` : ""}` : "from nobody";
      // As the engine's reach sentence: entries that stand for nobody are counted, not named.
      const live = t.entries.filter((e) => e.state === "ok");
      const lost = t.entries.length - live.length;
      const nobody = lost === 0 ? "" : lost === 1
        ? " (1 person or group entry is not found in Contacts and matches nobody)"
        : ` (${lost} person or group entries are not found in Contacts and match nobody)`;
      t.reach = !t.enabled || !t.allow.length
        ? `Agents receive no ${noun}.`
        : live.length
          ? `Agents can receive ${noun} from ${live.map(word).join(", ")}; nothing else${nobody}. Never the body.`
          : `Agents receive no ${noun}: no entry matches anyone${nobody}.`;
    }
  }
  function settingsChanged() {
    derive();
    const view = settingsOut();
    emit("settings-changed", view);
    return view;
  }

  // A small model of core's SenderPattern::parse_allow, enough to exercise the UI.
  function check(eventType, raw) {
    const s = String(raw).trim();
    const no = (reason) => ({ ok: false, kind: null, reason });
    if (!typeOf(eventType)) return no(`unknown event type \`${eventType}\``);
    if (!s) return no("empty entry: write an address, a phone number, a domain or a prefix ending in `*`");
    if (/^(person|group):/.test(s)) return parsePeople(s) ? { ok: true, kind: s.slice(0, s.indexOf(":")), reason: null } : no(`\`${s}\` names nobody: write \`person: Name\` or \`group: Name\``);
    if (s.endsWith("*")) {
      const p = s.slice(0, -1);
      if (!p || p === "+" || p.includes("*")) return no(`\`${s}\` is not a prefix: write one such as \`+120255501*\``);
      return { ok: true, kind: p.startsWith("+") ? "phone_prefix" : "address_prefix", reason: null };
    }
    if (s.startsWith("@")) return /^@[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(s) ? { ok: true, kind: "domain", reason: null } : no(`\`${s}\` is not a domain`);
    if (s.includes("@")) {
      const [l, d] = s.split("@");
      return l && d && !/\s/.test(s) ? { ok: true, kind: "address", reason: null } : no(`\`${s}\` is not an email address or a phone number`);
    }
    if (/^\+?[0-9 ().-]{6,}$/.test(s)) return { ok: true, kind: "phone", reason: null };
    if (/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(s) && !/^[0-9.]+$/.test(s)) return { ok: true, kind: "domain", reason: null };
    return no(`\`${s}\` is not an address, a phone number, a domain or a prefix ending in \`*\``);
  }

  // The Connect section's hosts, as the app lists them (crates/connect/src/app.rs).
  function defaultHosts() {
    const shim = "/Applications/Tidings.app/Contents/MacOS/tidings-mcp";
    const json = `{"mcpServers": {"tidings": {"command": "${shim}", "args": []}}}`;
    const host = (id, name, path, modes, snippet = json) => ({
      id, name, path, configured: null, command: null, problem: null, modes, connected: 0, snippet, running: false,
    });
    const tools = ["tools", "events"];
    return [
      host("claude-code", "Claude Code", "~/.claude.json", ["tools", "channel", "events"]),
      host("claude-desktop", "Claude Desktop", "~/Library/Application Support/Claude/claude_desktop_config.json", tools),
      host("cursor", "Cursor", "~/.cursor/mcp.json", tools),
      host("vscode", "VS Code", "~/Library/Application Support/Code/User/mcp.json", tools),
      host("codex", "Codex", "~/.codex/config.toml", tools),
      host("zed", "Zed", "~/.config/zed/settings.json", tools),
      host("gemini", "Gemini CLI", "~/.gemini/settings.json", tools),
      host("goose", "Goose", "~/.config/goose/config.yaml", tools,
        `extensions:\n  tidings:\n    enabled: true\n    type: "stdio"\n    name: "tidings"\n    cmd: "${shim}"\n    args: []\n    envs: {}\n    timeout: 300`),
      host("windsurf", "Windsurf", "~/.codeium/windsurf/mcp_config.json", tools),
      host("lm-studio", "LM Studio", "~/.lmstudio/mcp.json", tools),
    ];
  }
  function hostOf(id) {
    return data.hosts.find((x) => x.id === id);
  }

  // Agents: a decision saves a grant (made on the first one) and closes the agent's question.
  function agentOf(id) {
    return data.state.agents.find((a) => a.id === id);
  }
  function grantOf(id) {
    return data.settings.agentGrants.find((g) => g.id === id);
  }
  function decide(id, change) {
    const a = agentOf(id);
    let g = grantOf(id);
    if (!a && !g) return fail(`no agent \`${id}\`: \`tidings agents\` lists the agents Tidings knows and their ids (a program is known once it has connected)`);
    if (!g) {
      g = { id, types: data.settings.types.map((t) => ({ eventType: t.name, grant: "every" })), access: "allowed" };
      data.settings.agentGrants.push(g);
    }
    g.access ??= a?.access === "denied" ? "denied" : "allowed";
    change(g);
    data.settings.asks = data.settings.asks.filter((x) => x.id !== id);
    if (a) {
      a.access = g.access;
      a.asking = null;
      a.grants = g.types.map((t) => ({
        eventType: t.eventType,
        granted: t.grant !== "none" && a.access !== "denied",
        senders: typeof t.grant === "object" ? t.grant.senders.length : null,
      }));
      if (a.access === "denied") a.streams = 0;
    }
    // The view carries no access (State does): kept aside on the grant, left out of the view.
    const view = settingsChanged();
    emit("state-changed", data.state);
    return view;
  }
  function settingsOut() {
    const out = clone(data.settings);
    for (const g of out.agentGrants) delete g.access;
    return out;
  }

  derive();

  // As core's [webhooks] allow: an origin (no path), https:// any host, http:// only for
  // this Mac; normalised to a lower-case host with the default port left out.
  function originOf(text) {
    const m = /^(https?):\/\/([^/?#@\s]+?)(?::(\d+))?\/?$/i.exec(text.trim());
    if (!m) return { error: "an allowed destination is an origin with no path: write scheme://host[:port]" };
    const scheme = m[1].toLowerCase();
    const host = m[2].toLowerCase();
    if (scheme === "http" && !["localhost", "[::1]"].includes(host) && !host.startsWith("127.")) {
      return { error: `http:// is allowed only for this machine (localhost, 127.0.0.1, [::1]); write https://${host} for ${host}` };
    }
    const port = m[3] && m[3] !== (scheme === "https" ? "443" : "80") ? `:${m[3]}` : "";
    return { origin: `${scheme}://${host}${port}` };
  }
  function webhooksChanged() {
    const w = data.state.webhooks;
    w.subscriptions = w.subscriptions.filter((s) => w.destinations.includes(s.destination));
    w.asks = w.asks.filter((a) => !w.destinations.includes(a.origin));
    emit("state-changed", data.state);
    return settingsChanged();
  }

  const handlers = {
    allow_destination: ({ origin }) => {
      const o = originOf(origin);
      if (o.error) return fail(o.error);
      if (!data.state.webhooks.destinations.includes(o.origin)) data.state.webhooks.destinations.push(o.origin);
      return webhooksChanged();
    },
    remove_destination: ({ origin }) => {
      const o = originOf(origin).origin ?? origin;
      const w = data.state.webhooks;
      if (!w.destinations.includes(o)) return fail(`\`${origin}\` is not on the list of webhook destinations; nothing was removed`);
      w.destinations = w.destinations.filter((d) => d !== o);
      return webhooksChanged();
    },
    answer_destination: ({ origin, allow }) => {
      const w = data.state.webhooks;
      if (allow) {
        const o = originOf(origin);
        if (o.error) return fail(o.error);
        if (!w.destinations.includes(o.origin)) w.destinations.push(o.origin);
      } else {
        w.asks = w.asks.filter((a) => a.origin !== origin);
      }
      return webhooksChanged();
    },
    end_webhook: ({ id }) => {
      const w = data.state.webhooks;
      if (!w.subscriptions.some((s) => s.id === id)) return fail(`no webhook subscription \`${id}\`: \`tidings webhooks\` lists them`);
      w.subscriptions = w.subscriptions.filter((s) => s.id !== id);
      return webhooksChanged();
    },
    answer_agent: ({ id, allow }) => {
      if (!data.settings.asks.some((x) => x.id === id) && !agentOf(id)) return fail(`no agent \`${id}\``);
      return decide(id, (g) => { g.access = allow ? "allowed" : "denied"; });
    },
    set_agent_access: ({ id, allow }) => decide(id, (g) => { g.access = allow ? "allowed" : "denied"; }),
    set_agent_type: ({ id, eventType, grant }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\`; use mail.received or messages.received`);
      if (typeof grant === "object") {
        if (!grant.senders.length) return fail(`pick at least one sender for ${eventType}, or grant none (an empty list is no sender at all)`);
        const bad = grant.senders.find((e) => !t.allow.includes(e));
        if (bad !== undefined) return fail(`\`${bad}\` is not on the ${eventType} allowlist; an agent can be granted only senders the allowlist lets through, so add it to the allowlist first`);
      } else if (grant !== "every" && grant !== "none") {
        return fail("bad arguments to `set_agent_type`");
      }
      return decide(id, (g) => { g.types.find((x) => x.eventType === eventType).grant = clone(grant); });
    },
    forget_agent: ({ id }) => {
      if (!grantOf(id)) return fail(`no agent \`${id}\`: \`tidings agents\` lists the agents Tidings knows and their ids (a program is known once it has connected)`);
      data.settings.agentGrants = data.settings.agentGrants.filter((g) => g.id !== id);
      const a = agentOf(id);
      if (a) {
        a.access = "new";
        a.grants = data.settings.types.map((t) => ({ eventType: t.name, granted: true, senders: null }));
      }
      const view = settingsChanged();
      emit("state-changed", data.state);
      return view;
    },
    // As http/agent_tokens.rs: a name of lower-case letters, digits and `-` (not `http`),
    // one token per name; the token is in the answer once and never in the settings.
    create_agent_token: ({ name }) => {
      if (!/^[a-z0-9-]{1,32}$/.test(name) || name === "http") return fail(`\`${name}\` cannot name an agent token`);
      if (data.settings.agentTokens.some((t) => t.name === name)) return fail(`agent \`${name}\` already has a token; revoke it first (\`tidings token revoke ${name}\`), then create a new one`);
      data.settings.agentTokens.push({ name, createdMs: 1796049400000 });
      return { name, token: `fake-token-for-${name}`, settings: settingsChanged() };
    },
    revoke_agent_token: ({ name }) => {
      if (!data.settings.agentTokens.some((t) => t.name === name)) return fail(`agent \`${name}\` has no token; \`tidings token list\` lists the agents that have one`);
      data.settings.agentTokens = data.settings.agentTokens.filter((t) => t.name !== name);
      return settingsChanged();
    },
    set_new_agents: ({ new: value }) => {
      if (!["ask", "allow", "deny"].includes(value)) return fail(`new programs get \`ask\`, \`allow\` or \`deny\`, not \`${value}\``);
      data.settings.newAgents = value;
      return settingsChanged();
    },
    list_hosts: () => clone(data.hosts),
    // A host whose `failWith` is set fails its check with that text, as a shim that cannot
    // reach the daemon does; one with `problem` is refused like a malformed config.
    connect_host: ({ id, mode }) => {
      const x = hostOf(id);
      if (!x) return fail(`no client called \`${id}\``);
      if (!x.modes.includes(mode)) return fail(`${x.name} has no ${mode} mode`);
      if (x.problem) return fail(`${x.path} ${x.problem}; fix it (or move it aside) and try again. It was left untouched.`);
      x.configured = mode === "events" ? "tools" : mode;
      const verification = x.failWith
        ? { ok: false, message: x.failWith }
        : { ok: true, message: `Connected ✓ (${mode === "channel" ? "channel, tools" : "tools"}: tidings_check, tidings_wait)` };
      return {
        path: x.path,
        backup: `${x.path}.tidings-backup-20261130T170559Z`,
        restart: x.running ? `${x.name} is running: restart it to load the change (it reads its config only at start).` : null,
        verification,
      };
    },
    disconnect_host: ({ id }) => {
      const x = hostOf(id);
      if (!x) return fail(`no client called \`${id}\``);
      const had = x.configured;
      x.configured = null;
      return { path: x.path, backup: had ? `${x.path}.tidings-backup-20261130T170600Z` : null, restart: null, verification: null };
    },
    get_state: () => clone(data.state),
    get_settings: () => settingsOut(),
    set_type_enabled: ({ eventType, enabled }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      t.enabled = Boolean(enabled);
      return settingsChanged();
    },
    set_allowlist: ({ eventType, entries }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      for (const e of entries) {
        const c = check(eventType, e);
        if (!c.ok) return fail(`allowlist entry ${entries.indexOf(e) + 1}: ${c.reason}`);
      }
      t.allow = [...entries];
      return settingsChanged();
    },
    check_allow_entry: ({ eventType, entry }) => check(eventType, entry),
    set_backfill_days: ({ eventType, days }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      if (!Number.isInteger(days) || days < 0 || days > 365) return fail(`backfill days: ${days} is not in 0..=365`);
      t.backfillDays = days;
      return settingsChanged();
    },
    get_activity: () => clone(data.activity),
    clear_activity: () => {
      data.activity = [];
      emit("activity-changed", data.activity);
      return null;
    },
    revoke_client: ({ id }) => {
      const c = data.state.clients.find((x) => x.id === id);
      if (!c) return fail(`client ${id} has left`);
      c.revoked = true;
      emit("state-changed", data.state);
      return null;
    },
    set_http: ({ enabled, port }) => {
      if (!Number.isInteger(port) || port < 1024 || port > 65535) return fail(`port: ${port} is not in 1024..=65535`);
      data.settings.http.enabled = Boolean(enabled);
      data.settings.http.port = port;
      return settingsChanged();
    },
    rotate_http_token: () => {
      data.settings.http.token = `tdg_rotated${calls.length}`;
      return settingsChanged();
    },
    set_notifications: ({ enabled }) => {
      data.settings.notifications = Boolean(enabled);
      return settingsChanged();
    },
    set_notification_kind: ({ kind, enabled }) => {
      const k = (data.settings.notificationKinds ?? []).find((x) => x.kind === kind);
      if (!k) return fail(`unknown notification \`${kind}\`; use first_subscription, full_disk_access, store_rebuilt or settings_rejected`);
      k.enabled = Boolean(enabled);
      return settingsChanged();
    },
    set_update_check: ({ on }) => {
      if (typeof on !== "boolean") return fail("bad arguments to `set_update_check`: invalid type, expected a boolean");
      // A settings file that cannot be written (data.saveError, set by a test).
      if (data.saveError) return fail(data.saveError);
      data.settings.updates.check = on;
      return settingsChanged();
    },
    // The app checks on its main thread and answers at once; the check's record arrives
    // with settings-changed, here on the next turn (window.__fake.nextCheck says what it found).
    check_for_updates: () => {
      setTimeout(() => {
        const u = data.settings.updates;
        u.last = window.__fake.nextCheck ?? `Tidings ${u.current} is up to date.`;
        u.checkedAtMs = Date.now();
        settingsChanged();
      }, 0);
      return null;
    },
    // The panes and the restart only leave a record (window.__fake.calls).
    open_full_disk_access: () => null,
    open_login_items: () => null,
    restart_app: () => null,
    set_start_at_login: ({ enabled }) => {
      data.settings.startAtLogin = enabled
        ? { state: "enabled", text: "Tidings starts when you log in, and again if it stops unexpectedly." }
        : { state: "disabled", text: "Tidings does not start at login." };
      return settingsChanged();
    },
    pause_all: ({ minutes }) => {
      data.settings.pausedUntilMs = Date.now() + minutes * 60000;
      return settingsChanged();
    },
    resume_all: () => {
      data.settings.pausedUntilMs = null;
      return settingsChanged();
    },
    search_people: ({ query }) => {
      const q = String(query ?? "").trim().toLowerCase();
      if (!q || !data.settings.contacts.readable) return [];
      const digits = q.replace(/\D/g, "");
      const hit = (p) =>
        p.name.toLowerCase().includes(q) ||
        p.emails.some((hd) => hd.key.includes(q)) ||
        (digits.length >= 3 && p.phones.some((hd) => hd.written.replace(/\D/g, "").includes(digits) || (hd.key ?? "").replace(/\D/g, "").includes(digits)));
      return data.people.filter(hit).slice(0, 20).map(personHit);
    },
    list_groups: () =>
      data.settings.contacts.readable
        ? data.groups.map((g) => ({ id: g.id, name: g.name, members: g.members.length, entry: `group: ${g.name} [${g.id}]` }))
        : [],
    recent_senders: ({ eventType }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      return (data.recent[eventType] ?? []).map((r) => ({ handle: r.handle, name: nameOf(r.handle), count: r.count, last: r.last, allowed: allows(t.allow, r.handle) }));
    },
    set_names: ({ eventType, on }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      t.names = Boolean(on);
      return settingsChanged();
    },
    set_categories: ({ eventType, categories }) => {
      const t = typeOf(eventType);
      if (!t) return fail(`unknown event type \`${eventType}\``);
      const bad = categories.find((c) => !t.offeredCategories.includes(c));
      if (bad !== undefined) return fail(`unknown category \`${bad}\`; use ${t.offeredCategories.join(", ")}`);
      t.categories = t.offeredCategories.filter((c) => categories.includes(c));
      return settingsChanged();
    },
    finish_first_run: () => {
      data.settings.firstRun = false;
      settingsChanged();
      return null;
    },
  };

  async function invoke(cmd, args = {}) {
    calls.push({ cmd, args: clone(args) });
    const fn = handlers[cmd];
    if (!fn) {
      unknown.push(cmd);
      return fail(`command ${cmd} not found`);
    }
    return clone(await fn(args));
  }
  async function listen(name, cb) {
    if (!listeners.has(name)) listeners.set(name, []);
    listeners.get(name).push(cb);
    return () => listeners.set(name, listeners.get(name).filter((x) => x !== cb));
  }

  window.__TAURI__ = { core: { invoke }, event: { listen } };
  window.__fake = { calls, unknown, data, emit, commands: Object.keys(handlers) };
}
