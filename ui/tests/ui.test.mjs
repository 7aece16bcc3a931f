// The settings window in headless chromium against the fake bridge: every section renders
// real-shaped data, validation messages, live updates, revoke, keyboard reachability and
// accessible names, the first run, the hidden menu-bar icon's notice, and the fake's command
// table against the Rust list.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { declaredCommands, fixtures, rustCommands } from "./harness.mjs";
import { browserSuite, calls } from "./suite.mjs";

const withUi = browserSuite();
const emit = (page, name, payload) => page.evaluate(([n, p]) => window.__fake.emit(n, p), [name, payload]);
const text = (page, sel) => page.locator(sel).innerText();
/** Where an element sits in the scrolled content (not the viewport): moves only with layout. */
const place = (locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const pane = document.querySelector(".pane");
    return { x: r.x, y: r.y + pane.scrollTop, width: r.width, height: r.height };
  });

test("the fake implements exactly the command list (src-tauri/commands.json when present)", async () => {
  await withUi({}, async (page) => {
    const fake = (await page.evaluate(() => window.__fake.commands)).sort();
    const declared = declaredCommands().sort();
    assert.ok(declared.length >= 15, "ui/src/commands.ts lists the contract's commands");
    assert.deepEqual(fake, declared, "the fake bridge and ui/src/commands.ts differ");
    const rust = rustCommands();
    if (rust) {
      assert.deepEqual(fake, [...rust].sort(), "the fake bridge and src-tauri/commands.json differ: a command was renamed, added or removed");
    }
  });
});

test("status shows each store, the socket, the endpoint and the settings file", async () => {
  const seed = fixtures();
  await withUi({ seed }, async (page) => {
    assert.equal(await text(page, "[data-testid=headline]"), "3 clients connected, 2 streams open.");
    const stores = await text(page, "[data-testid=stores]");
    assert.match(stores, /The Mail store was found and is readable\./);
    assert.match(stores, /The Messages store was found and is readable\./);
    assert.ok(stores.includes(seed.state.types[0].store.path), "the store path is shown");
    assert.equal(await text(page, "[data-testid=socket]"), seed.state.socket);
    assert.match(await text(page, "[data-testid=http-state]"), /^Off\./);
    assert.equal(await text(page, "[data-testid=settings-file]"), "settings.toml is in force.");

    // Problems, live: each in one sentence with its fix.
    const state = structuredClone(seed.state);
    state.types[0].store.access = "permission_denied";
    state.types[1].store.access = "missing";
    state.settings = { state: "rejected", line: 3, reason: "settings.toml line 3: unknown field `alow`" };
    state.http = { state: "serving", url: "http://127.0.0.1:3917/mcp", no_auth: false };
    await emit(page, "state-changed", state);
    const after = await text(page, "[data-testid=stores]");
    assert.match(after, /Full Disk Access in System Settings/);
    assert.match(after, /No Messages store was found\. Open Messages once/);
    assert.match(await text(page, "[data-testid=settings-file]"), /line 3: unknown field `alow`.*last good settings/);
    assert.equal(await text(page, "[data-testid=http-state]"), "Serving at http://127.0.0.1:3917/mcp.");

    await page.getByRole("button", { name: "Pause all for 1 hour" }).click();
    assert.deepEqual(await calls(page, "pause_all"), [{ minutes: 60 }]);
    await page.getByRole("button", { name: "Resume" }).click();
    assert.equal((await calls(page, "resume_all")).length, 1);
  });
});

test("event types: toggle, allowlist validated as you type, backfill limits, reach", async () => {
  await withUi({ hash: "types" }, async (page) => {
    const mail = "mail.received";
    const toggle = page.getByTestId(`toggle-${mail}`);
    assert.equal(await toggle.isChecked(), true);
    assert.match(await page.getByTestId(`reach-${mail}`).innerText(), /Never the body\./);
    const list = page.getByRole("list", { name: "Mail allowlist" });
    assert.deepEqual(await list.locator(".entry").allInnerTexts(), ["example.com", "example.org", "example.net", "+120255501*", "Family"]);

    await toggle.click();
    assert.deepEqual(await calls(page, "set_type_enabled"), [{ eventType: mail, enabled: false }]);
    assert.equal(await toggle.isChecked(), false);
    assert.match(await page.getByTestId(`reach-${mail}`).innerText(), /Agents receive no mail\./);

    const input = page.getByTestId(`allow-input-${mail}`);
    const msg = page.getByTestId(`allow-msg-${mail}`);
    const add = page.getByRole("button", { name: "Add to the Mail allowlist" });
    await input.fill("not a pattern");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-mail.received']").textContent !== "");
    assert.equal(await msg.innerText(), "`not a pattern` is not an address, a phone number, a domain or a prefix ending in `*`");
    assert.equal(await input.getAttribute("aria-invalid"), "true");
    assert.equal(await add.isDisabled(), true);
    await input.fill("+*");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-mail.received']").textContent.includes("prefix"));
    assert.match(await msg.innerText(), /is not a prefix/);
    // Every kind core can return has its own words, never its raw name.
    await input.fill("noreply*");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-mail.received']").textContent === "Email addresses starting with this text.");

    await input.fill("ana@example.org");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-mail.received']").textContent === "An email address.");
    assert.equal(await add.isDisabled(), false);
    await input.press("Enter");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-mail.received']").textContent === "Added ana@example.org.");
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1), {
      eventType: mail,
      entries: ["example.com", "example.org", "example.net", "+120255501*", "group: Family [5D1E0A11-0000-4000-8000-00000000FA11:ABGroup]", "ana@example.org"],
    });
    assert.equal(await input.inputValue(), "");
    assert.equal(await list.locator(".entry").count(), 6);

    await page.getByRole("button", { name: "Remove example.net from the Mail allowlist" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-type='mail.received'] .entry").length === 5);
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1).entries, ["example.com", "example.org", "+120255501*", "group: Family [5D1E0A11-0000-4000-8000-00000000FA11:ABGroup]", "ana@example.org"]);
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), `allow-input-${mail}`, "focus stays in the editor");

    // The backfill window: the limit is named before anything is sent.
    const backfill = page.getByTestId(`backfill-${mail}`);
    await backfill.fill("400");
    assert.equal(await backfill.getAttribute("aria-invalid"), "true");
    assert.match(await page.locator(`[data-type='${mail}'] p[aria-live]`).last().innerText(), /Backfill window: a whole number of days from 0 to 365\./);
    await backfill.press("Tab");
    assert.deepEqual(await calls(page, "set_backfill_days"), []);
    await backfill.fill("30");
    await backfill.press("Enter");
    await page.waitForFunction(() => window.__fake.calls.some((c) => c.cmd === "set_backfill_days"));
    assert.deepEqual(await calls(page, "set_backfill_days"), [{ eventType: mail, days: 30 }]);
  });
});

test("clients: name, transport, subscriptions and revoke; untrusted names stay text", async () => {
  const seed = fixtures();
  const evil = '<img src=x onerror="window.__pwned=1">';
  seed.state.clients.push({
    id: 9, name: evil, version: "1.2.3", transport: "http", connectedSinceMs: seed.state.clients[0].connectedSinceMs,
    pid: null, revoked: false,
    subscriptions: [{ eventType: "messages.received", filter: { chats: 2 }, mode: "tools", delivered: 1, lastDeliveryMs: null }],
  });
  await withUi({ seed, hash: "clients" }, async (page) => {
    assert.equal(await text(page, "[data-testid=clients-count]"), "4 clients connected.");
    const first = page.locator("[data-client-id='3']");
    assert.match(await first.innerText(), /tidings v0\.1\.0/);
    // The fake connection is from a fixed time: "14:36" on its own day, "30 Nov, 14:36" after.
    assert.match(await first.innerText(), /Socket · connected since (\d{1,2} \w+, )?\d\d:\d\d · pid \d+/);
    assert.match(await first.innerText(), /Mail · push · 1 domain, 1 sender · 2 events delivered/);
    assert.match(await page.locator("[data-client-id='4']").innerText(), /Messages · push · no filter · 3 events delivered/);
    const hostile = page.locator("[data-client-id='9']");
    assert.ok((await hostile.innerText()).includes(evil), "the announced name is shown as typed");
    assert.match(await hostile.innerText(), /HTTP · connected since/);
    assert.match(await hostile.innerText(), /Messages · tools · 2 chats · 1 event delivered/);
    assert.equal(await page.locator("main img").count(), 0, "no markup from a client name");
    assert.equal(await page.evaluate(() => window.__pwned), undefined);

    await page.getByRole("button", { name: "Revoke tidings" }).first().click();
    assert.deepEqual(await calls(page, "revoke_client"), [{ id: 3 }]);
    await page.waitForFunction(() => document.querySelector("[data-client-id='3'] button").disabled);
    assert.match(await first.innerText(), /Revoked/);

    // A client that left: the app rejects, the window says so.
    await page.evaluate(() => { window.__fake.data.state.clients = window.__fake.data.state.clients.filter((c) => c.id !== 4); });
    await page.locator("[data-client-id='4'] button").click();
    await page.waitForFunction(() => document.querySelector("[role=alert]:not(:empty)"));
    assert.match(await page.locator("section [role=alert]:not(:empty)").innerText(), /Could not revoke tidings: client 4 has left/);
  });
});

test("activity lists deliveries and Clear empties it", async () => {
  await withUi({ hash: "activity" }, async (page) => {
    const rows = page.locator("[data-testid=activity-rows] tr");
    assert.equal(await rows.count(), 3);
    assert.match(await rows.nth(1).innerText(), /Mail\s+tidings\s+alice@example\.com/);
    await page.getByRole("button", { name: "Clear activity" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=activity-rows]").innerText.includes("Nothing delivered yet."));
    assert.equal((await calls(page, "clear_activity")).length, 1);
    await emit(page, "activity-changed", [{ atMs: Date.now(), eventType: "mail.received", clientId: 3, clientName: null, sender: "x@example.com" }]);
    assert.match(await rows.first().innerText(), /Mail\s+Client 3\s+x@example\.com/);
  });
});

test("advanced: endpoint, port limits, token show/copy/rotate, notifications", async () => {
  await withUi({ hash: "advanced" }, async (page) => {
    const token = page.getByTestId("http-token");
    assert.equal(await token.getAttribute("type"), "password");
    await page.getByRole("button", { name: "Show token" }).click();
    assert.equal(await token.getAttribute("type"), "text");
    assert.equal(await token.inputValue(), fixtures().settings.http.token);
    assert.match(await token.inputValue(), /^[A-Za-z0-9_-]{43}$/, "a token as the engine makes them");
    assert.equal(await page.getByRole("button", { name: "Show token" }).getAttribute("aria-pressed"), "true");

    await page.getByRole("button", { name: "Copy token" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=token-msg]").textContent !== "");

    await page.getByRole("button", { name: "Rotate token" }).click();
    assert.deepEqual(await calls(page, "rotate_http_token"), [], "rotating asks first");
    await page.getByRole("button", { name: "Rotate token" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=http-token]").value.startsWith("tdg_rotated"));
    assert.equal((await calls(page, "rotate_http_token")).length, 1);

    const port = page.getByTestId("http-port");
    await port.fill("80");
    assert.match(await page.locator("#panel-advanced").innerText(), /Port: a whole number from 1024 to 65535\./);
    await port.press("Enter");
    assert.deepEqual(await calls(page, "set_http"), []);
    await port.fill("4000");
    await port.press("Enter");
    await page.getByTestId("http-enabled").click();
    await page.waitForFunction(() => window.__fake.calls.filter((c) => c.cmd === "set_http").length === 2);
    assert.deepEqual(await calls(page, "set_http"), [{ enabled: false, port: 4000 }, { enabled: true, port: 4000 }]);

    await page.getByTestId("notifications").click();
    assert.deepEqual(await calls(page, "set_notifications"), [{ enabled: false }]);

    assert.equal(await text(page, "[data-testid=start-at-login-text]"), "Tidings does not start at login.");
    await page.getByTestId("start-at-login").click();
    assert.deepEqual(await calls(page, "set_start_at_login"), [{ enabled: true }]);
    await page.waitForFunction(() => document.querySelector("[data-testid=start-at-login-text]").textContent.startsWith("Tidings starts"));
    assert.equal(await page.getByTestId("start-at-login").isChecked(), true);
  });
});

test("advanced: start at login waiting for approval says so", async () => {
  const seed = fixtures();
  seed.settings.startAtLogin = { state: "requiresApproval", text: "macOS is waiting for your approval: open System Settings > General > Login Items and allow Tidings." };
  await withUi({ seed, hash: "advanced" }, async (page) => {
    assert.match(await text(page, "[data-testid=start-at-login-text]"), /waiting for your approval/);
    assert.equal(await page.getByTestId("start-at-login").isChecked(), false);
    await page.getByTestId("advanced-open-login-items").click();
    assert.deepEqual(await calls(page, "open_login_items"), [{}]);
  });
  // Status says so too, with the same button; hidden once there is nothing to approve.
  await withUi({ seed }, async (page) => {
    assert.match(await text(page, "[data-testid=login-approval]"), /waiting for your approval/);
    await page.getByTestId("open-login-items").click();
    assert.deepEqual(await calls(page, "open_login_items"), [{}]);
    const s = structuredClone(seed.settings);
    s.startAtLogin = { state: "enabled", text: "Tidings starts when you log in." };
    await emit(page, "settings-changed", s);
    assert.equal(await page.getByTestId("open-login-items").isVisible(), false);
  });
  await withUi({ hash: "advanced" }, async (page) => {
    assert.equal(await page.getByTestId("advanced-open-login-items").isVisible(), false);
  });
});

test("advanced: each kind of notification has its own switch, greyed out under the master", async () => {
  await withUi({ hash: "advanced" }, async (page) => {
    const rebuilt = page.getByTestId("notify-store_rebuilt");
    assert.equal(await rebuilt.isChecked(), true);
    assert.equal(await page.getByRole("switch", { name: "A Mail or Messages store is rebuilt" }).count(), 1, "named by its label");
    await rebuilt.click();
    assert.deepEqual(await calls(page, "set_notification_kind"), [{ kind: "store_rebuilt", enabled: false }]);
    // Re-rendered from the SettingsView the command returned, and the others untouched.
    await page.waitForFunction(() => !document.querySelector("[data-testid=notify-store_rebuilt]").checked);
    const kinds = await page.evaluate(() => window.__fake.data.settings.notificationKinds);
    assert.deepEqual(kinds.map((k) => k.enabled), [true, true, false, true, true]);
    assert.equal(await page.getByRole("switch", { name: "A new program asks for your mail or messages" }).isChecked(), true, "agent_asks has its switch");
    assert.equal(await page.getByTestId("notify-first_subscription").isChecked(), true);
    // A settings-changed from elsewhere (a hand edit) turns it back on in the window.
    const s = structuredClone(await page.evaluate(() => window.__fake.data.settings));
    s.notificationKinds[2].enabled = true;
    s.notifications = false;
    await emit(page, "settings-changed", s);
    assert.equal(await rebuilt.isChecked(), true);
    assert.equal(await rebuilt.isDisabled(), true, "greyed out while notifications are off");
  });
});

test("status: Full Disk Access granted, missing (pane, restart), stale; the sentences match the engine's", async () => {
  const seed = fixtures();
  await withUi({ seed }, async (page) => {
    assert.equal(await text(page, "[data-testid=fda-state]"), "Tidings has Full Disk Access.");
    assert.equal(await page.getByTestId("open-fda").isVisible(), false, "nothing to do while granted");
    assert.match(await text(page, "[data-testid=fda]"), /belongs to Tidings\.app itself/);

    const state = structuredClone(seed.state);
    state.types[0].store.access = "permission_denied";
    state.fullDiskAccess = { state: "missing" };
    await emit(page, "state-changed", state);
    assert.match(await text(page, "[data-testid=fda-state]"), /does not have Full Disk Access\. Open System Settings/);
    await page.getByRole("button", { name: "Open Full Disk Access Settings" }).click();
    assert.deepEqual(await calls(page, "open_full_disk_access"), [{}]);
    assert.match(await text(page, "[data-testid=fda-msg]"), /press Restart Tidings/);
    await page.getByRole("button", { name: "Restart Tidings" }).click();
    assert.deepEqual(await calls(page, "restart_app"), [{}]);

    state.fullDiskAccess = { state: "stale", last_granted: "0.0.9" };
    await emit(page, "state-changed", state);
    assert.match(await text(page, "[data-testid=fda-state]"), /remove Tidings with the minus button/);
    assert.equal(await page.getByTestId("restart").isVisible(), true);
  });
  // The window's copies of the engine's sentences are the engine's (crates/server/src).
  const rust = (file, name) => {
    const src = readFileSync(new URL(`../../crates/server/src/${file}`, import.meta.url), "utf8");
    const m = src.match(new RegExp(`${name}: &str =\\s*"((?:[^"\\\\]|\\\\[\\s\\S])*)"`));
    assert.ok(m, `${name} in ${file}`);
    return m[1].replace(/\\\n\s*/g, "");
  };
  const ui = readFileSync(new URL("../src/format.ts", import.meta.url), "utf8");
  for (const name of ["FULL_DISK_ACCESS_OWNER", "STALE_GRANT_FIX"]) {
    const m = ui.match(new RegExp(`export const ${name} =\\s*"([^"]*)"`));
    assert.ok(m, `${name} in ui/src/format.ts`);
    assert.equal(m[1], rust("notices.rs", name), `${name}: the window and the engine differ`);
  }
});

test("a hidden menu-bar icon: a notice above every section says where to allow it, until shown", async () => {
  // The app's sentence for macOS (crates/platform/src/menu_bar.rs), as the app sends it.
  const src = readFileSync(new URL("../../crates/platform/src/menu_bar.rs", import.meta.url), "utf8");
  const m = src.match(/MACOS_WHERE_TO_ALLOW: &str =\s*"((?:[^"\\]|\\[\s\S])*)"/);
  assert.ok(m, "MACOS_WHERE_TO_ALLOW in menu_bar.rs");
  const fix = m[1].replace(/\\\n\s*/g, "");
  const seed = fixtures();
  seed.state.menuBar = { state: "hidden", fix };
  await withUi({ seed }, async (page) => {
    const notice = page.getByTestId("menu-bar-hidden");
    assert.equal(await notice.isVisible(), true);
    const said = await notice.innerText();
    assert.match(said, /The Tidings icon is hidden from the menu bar\./);
    assert.ok(said.includes("System Settings › Menu Bar, turn on Tidings under Allow in the Menu Bar."), said);
    assert.match(said, /open Tidings again to come back to this window/);
    // Above every section, not only Status.
    await page.getByRole("tab", { name: "Advanced" }).click();
    assert.equal(await notice.isVisible(), true);
    // Allowed since: the app finds it shown and says so; the notice goes.
    const state = structuredClone(seed.state);
    state.menuBar = { state: "shown" };
    await emit(page, "state-changed", state);
    assert.equal(await notice.isVisible(), false);
  });
  // Nothing to say while the app checks, when it cannot tell, or from a State without the field.
  for (const menuBar of [{ state: "checking" }, { state: "unknown" }, undefined]) {
    const quiet = fixtures();
    quiet.state.menuBar = menuBar;
    await withUi({ seed: quiet }, async (page) => {
      assert.equal(await page.getByTestId("menu-bar-hidden").isVisible(), false, JSON.stringify(menuBar));
    });
  }
});

test("live: a new client appears and a tray toggle updates the window, nothing moves", async () => {
  const seed = fixtures();
  await withUi({ seed, hash: "clients" }, async (page) => {
    const revoke3 = page.locator("[data-client-id='3'] button");
    await revoke3.focus();
    const before = await place(revoke3);
    const state = structuredClone(seed.state);
    state.clients.push({ id: 12, name: "Claude Code", version: "2.1.0", transport: "socket", connectedSinceMs: Date.now(), pid: 4242, revoked: false, subscriptions: [] });
    state.clients[0].subscriptions[0].delivered = 9;
    await emit(page, "state-changed", state);
    assert.match(await page.locator("[data-client-id='12']").innerText(), /Claude Code v2\.1\.0/);
    assert.match(await page.locator("[data-client-id='3']").innerText(), /9 events delivered/);
    assert.equal(await page.evaluate(() => document.activeElement.closest("[data-client-id]")?.dataset.clientId), "3", "focus survives the update");
    assert.deepEqual(await place(revoke3), before, "an existing row does not move when a client joins below it");
  });

  await withUi({ hash: "types" }, async (page) => {
    const toggle = page.getByTestId("toggle-messages.received");
    assert.equal(await toggle.isChecked(), true);
    const box = await place(page.getByRole("button", { name: "Add to the Messages allowlist" }));
    // The tray turned Messages off: the app emits settings-changed.
    await page.evaluate(() => {
      const s = structuredClone(window.__fake.data.settings);
      s.types[1].enabled = false;
      window.__fake.emit("settings-changed", s);
    });
    assert.equal(await toggle.isChecked(), false);
    // Typing a bad entry shows a message in its reserved line: nothing below it moves.
    const backfill = await place(page.getByTestId("backfill-messages.received"));
    await page.getByTestId("allow-input-messages.received").fill("nope");
    await page.waitForFunction(() => document.querySelector("[data-testid='allow-msg-messages.received']").textContent !== "");
    assert.deepEqual(await place(page.getByTestId("backfill-messages.received")), backfill);
    assert.deepEqual(await place(page.getByRole("button", { name: "Add to the Messages allowlist" })), box);
  });
});

test("keyboard: arrow keys move through sections, Tab reaches every control, all are named", async () => {
  const seed = fixtures();
  seed.settings.http.enabled = true;
  await withUi({ seed }, async (page) => {
    const cdp = await page.context().newCDPSession(page);
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.id), "tab-status");
    const ids = ["status", "types", "clients", "connect", "webhooks", "activity", "advanced"];
    for (let i = 0; i < ids.length; i++) {
      if (i > 0) await page.keyboard.press("ArrowDown");
      const id = ids[i];
      assert.equal(await page.evaluate(() => document.activeElement.id), `tab-${id}`);
      assert.equal(await page.locator(`#tab-${id}`).getAttribute("aria-selected"), "true");
      assert.equal(await page.locator(`#panel-${id}`).isVisible(), true);

      // Every focusable control in the panel is reached by Tab, with a visible focus ring.
      const expected = await page.evaluate((pid) => {
        const panel = document.getElementById(pid);
        const sel = "button:not(:disabled), input:not(:disabled), select:not(:disabled), [tabindex='0']";
        return [...panel.querySelectorAll(sel)].filter((el) => el.checkVisibility()).map((el) => el.id || el.dataset.testid || el.getAttribute("aria-label") || el.textContent.trim());
      }, `panel-${id}`);
      const reached = [];
      for (let n = 0; n < expected.length; n++) {
        await page.keyboard.press("Tab");
        const info = await page.evaluate(() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          return { key: el.id || el.dataset.testid || el.getAttribute("aria-label") || el.textContent.trim(), outline: style.outlineStyle, inPanel: !!el.closest("[role=tabpanel]") };
        });
        assert.ok(info.inPanel, `Tab left the ${id} panel early`);
        assert.notEqual(info.outline, "none", `${info.key} shows no focus ring`);
        reached.push(info.key);
      }
      assert.deepEqual(reached, expected, `tab order in ${id}`);

      // Chromium's accessibility tree: every focusable node has a name.
      const { nodes } = await cdp.send("Accessibility.getFullAXTree");
      const unnamed = nodes.filter((n) => !n.ignored && n.properties?.some((p) => p.name === "focusable" && p.value.value) && n.role?.value !== "RootWebArea" && !n.name?.value?.trim());
      assert.deepEqual(unnamed.map((n) => n.role?.value), [], `unnamed controls in ${id}`);
      await page.locator(`#tab-${id}`).focus();
    }
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.evaluate(() => document.activeElement.id), "tab-status", "the list wraps");
  });
});

test("connect: each host's state, connect with the check inline, a failure, restart, disconnect, copy", async () => {
  const seed = fixtures();
  seed.hosts = undefined;
  await withUi({ seed, hash: "connect" }, async (page) => {
    await page.waitForSelector("[data-host-id=lm-studio]");
    const rows = await page.locator("[data-host-id]").evaluateAll((els) => els.map((e) => e.dataset.hostId));
    assert.deepEqual(rows, ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "zed", "gemini", "goose", "windsurf", "lm-studio"]);
    assert.equal(await text(page, "[data-testid=host-path-goose]"), "~/.config/goose/config.yaml");
    assert.equal(await page.locator("[data-host-id=lm-studio] .client-name").innerText(), "LM Studio");
    assert.equal(await text(page, "[data-testid=host-state-cursor]"), "Not configured · not connected now");
    assert.equal(await text(page, "[data-testid=host-path-codex]"), "~/.codex/config.toml");
    const modes = await page.getByTestId("host-mode-claude-code").locator("option").evaluateAll((o) => o.map((x) => x.value));
    assert.deepEqual(modes, ["tools", "channel", "events"], "Claude Code offers the channel");
    const cursorModes = await page.getByTestId("host-mode-cursor").locator("option").evaluateAll((o) => o.map((x) => x.value));
    assert.ok(!cursorModes.includes("channel"), "only Claude Code has a channel");

    // Connect Claude Code as a channel: the check's result inline, the row now configured.
    await page.getByTestId("host-mode-claude-code").selectOption("channel");
    await page.getByRole("button", { name: "Connect Claude Code", exact: true }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=host-result-claude-code]").textContent.startsWith("Connected ✓"));
    assert.equal(await text(page, "[data-testid=host-result-claude-code]"), "Connected ✓ (channel, tools: tidings_check, tidings_wait)");
    assert.deepEqual(await calls(page, "connect_host"), [{ id: "claude-code", mode: "channel" }]);
    await page.waitForFunction(() => document.querySelector("[data-testid=host-state-claude-code]").textContent.startsWith("Configured (channel)"));
    assert.match(await text(page, "[data-testid=host-warn-claude-code]"), /Backup: ~\/\.claude\.json\.tidings-backup-/);
    assert.equal(await page.getByRole("button", { name: "Disconnect Claude Code" }).isDisabled(), false);

    // A check that fails shows the failure, in the error tone; a running host says restart.
    await page.evaluate(() => {
      const cursor = window.__fake.data.hosts.find((x) => x.id === "cursor");
      cursor.failWith = "tidings-mcp exited with status 69 before answering initialize; it said: tidings-mcp: no daemon at /tmp/t.sock";
      cursor.running = true;
    });
    await page.getByRole("button", { name: "Connect Cursor", exact: true }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=host-result-cursor]").dataset.tone === "error");
    assert.match(await text(page, "[data-testid=host-result-cursor]"), /exited with status 69 before answering initialize/);
    assert.match(await text(page, "[data-testid=host-warn-cursor]"), /Cursor is running: restart it/);

    // Disconnect Claude Code: not configured again.
    await page.getByRole("button", { name: "Disconnect Claude Code" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=host-result-claude-code]").textContent === "Removed Tidings from Claude Code.");
    await page.waitForFunction(() => document.querySelector("[data-testid=host-state-claude-code]").textContent.startsWith("Not configured"));
    assert.deepEqual(await calls(page, "disconnect_host"), [{ id: "claude-code" }]);

    // A host added later works the same way: Goose, whose config is YAML.
    await page.getByRole("button", { name: "Connect Goose", exact: true }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=host-result-goose]").textContent.startsWith("Connected ✓"));
    await page.waitForFunction(() => document.querySelector("[data-testid=host-state-goose]").textContent.startsWith("Configured (tools)"));
    assert.deepEqual((await calls(page, "connect_host")).at(-1), { id: "goose", mode: "tools" });
    assert.match(await text(page, "[data-testid=host-warn-goose]"), /Backup: ~\/\.config\/goose\/config\.yaml\.tidings-backup-/);

    // Every row offers its snippet (headless chromium has no clipboard to check it against).
    assert.equal(await page.getByRole("button", { name: "Copy the Zed snippet" }).isEnabled(), true);
    assert.equal(await page.getByRole("button", { name: "Copy the Windsurf snippet" }).isEnabled(), true);
  });
});

test("first run: what Tidings does, the stores, a first type on, the snippet, Done", async () => {
  const seed = fixtures();
  seed.settings.firstRun = true;
  seed.settings.types.forEach((t) => { t.enabled = false; t.allow = []; });
  await withUi({ seed }, async (page) => {
    const sheet = page.getByRole("dialog", { name: "Welcome to Tidings" });
    assert.equal(await sheet.isVisible(), true);
    assert.match(await sheet.innerText(), /never the body/);
    assert.match(await page.getByTestId("firstrun-stores").innerText(), /The Mail store was found and is readable\./);
    assert.match(await page.getByTestId("connect-snippet").innerText(), /"mcpServers"/);

    await page.getByTestId("firstrun-type").selectOption("messages.received");
    assert.match(await page.getByTestId("firstrun-reach").innerText(), /Agents receive no messages\./);
    await page.getByTestId("firstrun-type").selectOption("mail.received");
    assert.match(await page.getByTestId("firstrun-reach").innerText(), /Agents receive no mail\./);
    const entry = page.getByTestId("firstrun-entry");
    await entry.fill("acme");
    await page.waitForFunction(() => document.querySelector("[data-testid=firstrun-msg]").textContent !== "");
    assert.match(await page.getByTestId("firstrun-msg").innerText(), /is not an address, a phone number, a domain/);
    assert.equal(await sheet.getByRole("button", { name: "Turn on" }).isDisabled(), true);
    await entry.fill("acme.com");
    await page.waitForFunction(() => document.querySelector("[data-testid=firstrun-msg]").textContent === "A domain and its subdomains.");
    await sheet.getByRole("button", { name: "Turn on" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=firstrun-msg]").textContent === "Mail is on for acme.com.");
    assert.deepEqual(await calls(page, "set_allowlist"), [{ eventType: "mail.received", entries: ["acme.com"] }]);
    assert.deepEqual(await calls(page, "set_type_enabled"), [{ eventType: "mail.received", enabled: true }]);
    assert.match(await page.getByTestId("firstrun-reach").innerText(), /from acme\.com/);

    await page.keyboard.press("Escape");
    assert.equal(await sheet.isVisible(), true, "Escape does not skip the walk-through");
    await sheet.getByRole("button", { name: "Done" }).click();
    await page.waitForFunction(() => !document.querySelector("dialog").open);
    assert.equal((await calls(page, "finish_first_run")).length, 1);
  });
});
