// The fake app bridge the UI tests inject before the page loads (page.addInitScript): it
// keeps a State, a SettingsView and the activity in memory, answers the contract's commands
// the way the app does (each settings change also emits settings-changed), records every
// call, and lets a test emit events as the app or the tray would.
//
// Self-contained on purpose: Playwright serialises `installFakeBridge` into the page.

export function installFakeBridge(seed) {
  const clone = (v) => JSON.parse(JSON.stringify(v));
  const data = { state: clone(seed.state), settings: clone(seed.settings), activity: clone(seed.activity), hosts: clone(seed.hosts ?? defaultHosts()) };
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
  // The derived lines, as the app words them (roughly): kept true to the seed's lists.
  function derive() {
    for (const t of data.settings.types) {
      t.summary = t.allow.length ? `from ${t.allow[0]}${t.allow.length > 1 ? ` and ${t.allow.length - 1} more` : ""}` : "from nobody";
      t.reach = t.enabled && t.allow.length
        ? `Agents can receive ${t.name === "mail.received" ? "mail" : "messages"} from ${t.allow.join(", ")}; nothing else. Never the body.`
        : `Agents receive no ${t.name === "mail.received" ? "mail" : "messages"}.`;
    }
  }
  function settingsChanged() {
    derive();
    emit("settings-changed", data.settings);
    return clone(data.settings);
  }

  // A small model of core's SenderPattern::parse_allow, enough to exercise the UI.
  function check(eventType, raw) {
    const s = String(raw).trim();
    const no = (reason) => ({ ok: false, kind: null, reason });
    if (!typeOf(eventType)) return no(`unknown event type \`${eventType}\``);
    if (!s) return no("empty entry: write an address, a phone number, a domain or a prefix ending in `*`");
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

  derive();

  const handlers = {
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
    get_settings: () => clone(data.settings),
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
