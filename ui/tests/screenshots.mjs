// Writes docs/screenshots/<section>-light.png and -dark.png of each section of the settings
// window (and the first-run sheet, Status with Full Disk Access missing, and Status with the
// menu-bar icon hidden, and the sender picker: Contacts searched, and recent senders), from
// the fake bridge seeded with the captured demo State, a few realistic clients and the
// fake's demo Contacts (people and groups in the allowlists, one card since deleted), three
// agents in Clients (tests/agents.mjs) and, as agents-ask, a program's question above it;
// webhooks (tests/webhooks.mjs) and, as webhooks-ask, an agent's question about a destination;
// and, as advanced-updates, Advanced scrolled to the update check with an update ready. Run
// by `make screenshots`; the PNGs are committed.
// SCREENSHOTS_DIR=DIR writes them there instead (to compare with the committed ones).

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SCRIPT, agentsSeed } from "./agents.mjs";
import { fixtures, launch, openUi, serveDist, uiDir } from "./harness.mjs";
import { webhooksSeed } from "./webhooks.mjs";

const out = process.env.SCREENSHOTS_DIR ?? join(uiDir, "..", "docs", "screenshots");
mkdirSync(out, { recursive: true });

/** The sentence the app sends on macOS when its icon is hidden (crates/platform/src/menu_bar.rs). */
function macosWhereToAllow() {
  const src = readFileSync(join(uiDir, "..", "crates", "platform", "src", "menu_bar.rs"), "utf8");
  const m = src.match(/MACOS_WHERE_TO_ALLOW: &str =\s*"((?:[^"\\]|\\[\s\S])*)"/);
  if (!m) throw new Error("MACOS_WHERE_TO_ALLOW is missing from crates/platform/src/menu_bar.rs");
  return m[1].replace(/\\\n\s*/g, "");
}

/** The captured demo State, with clients named as real hosts announce themselves. */
function seed() {
  // Three agents (a signed Claude Code allowed, a script not yet decided, a program denied);
  // the question of the script is its own shot (agents-ask).
  const s = fixtures();
  const [a, b, c] = s.state.clients;
  a.name = "claude-code";
  a.version = "2.1.0";
  b.name = "Tidings channel";
  c.name = "codex-mcp-client";
  c.transport = "http";
  c.pid = null;
  c.subscriptions = [{ eventType: "mail.received", filter: { from: 1 }, mode: "tools", delivered: 4, lastDeliveryMs: c.connectedSinceMs }];
  b.subscriptions[0].mode = "channel";
  s.state.http = { state: "serving", url: "http://127.0.0.1:3917/mcp", no_auth: false };
  s.settings.http.enabled = true;
  s.hosts = connectHosts();
  // People and groups beside plain senders; one card that Contacts no longer has.
  s.settings.types[0].allow = ["example.com", "group: Family [9A2B4C6D-8E0F-4A1B-9C2D-3E4F5A6B7C80:ABGroup]", "person: Jo Marsh [DEAD0000-0000-4000-8000-000000000000:ABPerson]"];
  s.settings.types[0].categories = ["primary"];
  s.settings.types[1].allow = ["person: Ana Ruiz [4F1C2A7E-0D7B-4E55-9C3A-1B2D3E4F5A60:ABPerson]", "+120255501*"];
  s.settings.types[1].names = true;
  s.activity.forEach((d) => {
    d.clientName = d.clientId === 3 ? "claude-code" : "Tidings channel";
  });
  agentsSeed(s);
  webhooksSeed(s);
  s.state.webhooks.asks = [];
  s.settings.asks = [];
  // A real install checks daily (the demo never does); the last check found nothing newer.
  s.settings.updates = { check: true, current: "0.1.0", last: "Tidings 0.1.0 is up to date.", checkedAtMs: s.state.clients[0].connectedSinceMs - 3 * 3_600_000 };
  Object.assign(s.state.agents.find((a) => a.id === SCRIPT), { access: "new", asking: null });
  return s;
}

/** The Connect section's hosts: Claude Code connected as a channel, Cursor configured. */
function connectHosts() {
  const shim = "/Applications/Tidings.app/Contents/MacOS/tidings-mcp";
  const host = (id, name, path, modes, extra = {}) => ({
    id, name, path, modes, configured: null, command: null, problem: null, connected: 0, running: false,
    snippet: `{\n  "mcpServers": {\n    "tidings": {\n      "command": "${shim}",\n      "args": []\n    }\n  }\n}`,
    ...extra,
  });
  return [
    host("claude-code", "Claude Code", "~/.claude.json", ["tools", "channel", "events"], { configured: "channel", command: shim, connected: 1 }),
    host("claude-desktop", "Claude Desktop", "~/Library/Application Support/Claude/claude_desktop_config.json", ["tools", "events"]),
    host("cursor", "Cursor", "~/.cursor/mcp.json", ["tools", "events"], { configured: "tools", command: shim, running: true }),
    host("vscode", "VS Code", "~/Library/Application Support/Code/User/mcp.json", ["tools", "events"]),
    host("codex", "Codex", "~/.codex/config.toml", ["tools", "events"], { configured: "tools", command: shim, connected: 1 }),
    host("zed", "Zed", "~/.config/zed/settings.json", ["tools", "events"]),
    host("gemini", "Gemini CLI", "~/.gemini/settings.json", ["tools", "events"]),
    host("goose", "Goose", "~/.config/goose/config.yaml", ["tools", "events"], {
      snippet: `extensions:\n  tidings:\n    enabled: true\n    type: "stdio"\n    name: "tidings"\n    cmd: "${shim}"\n    args: []\n    envs: {}\n    timeout: 300`,
    }),
    host("windsurf", "Windsurf", "~/.codeium/windsurf/mcp_config.json", ["tools", "events"]),
    host("lm-studio", "LM Studio", "~/.lmstudio/mcp.json", ["tools", "events"]),
  ];
}

/** Scroll the pane so `sel` ends at the bottom of the window, with its card's context above. */
async function scrollTo(page, sel) {
  await page.locator(sel).evaluate((el) => el.scrollIntoView({ block: "end" }));
  await page.evaluate(() => { document.querySelector(".pane").scrollTop += 16; });
  await page.mouse.move(1, 1); // no hover left on a row that scrolled under the pointer
}

const sections = ["status", "types", "clients", "connect", "webhooks", "activity", "advanced"];
const server = await serveDist();
const browser = await launch();
try {
  for (const colorScheme of ["light", "dark"]) {
    for (const section of sections) {
      const { page, context } = await openUi(browser, server.url, { seed: seed(), hash: section, colorScheme });
      const file = join(out, `${section}-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // Status before Full Disk Access is granted (docs/install-macos.md): both stores refused.
    const missing = seed();
    for (const t of missing.state.types) t.store.access = "permission_denied";
    missing.state.types[0].store.path = "/Users/you/Library/Mail/V10/MailData/Envelope Index";
    missing.state.types[1].store.path = "/Users/you/Library/Messages/chat.db";
    missing.state.fullDiskAccess = { state: "missing" };
    missing.state.clients = [];
    missing.state.streams = 0;
    {
      const { page, context } = await openUi(browser, server.url, { seed: missing, hash: "status", colorScheme });
      const file = join(out, `status-fda-missing-${colorScheme}.png`);
      await page.locator("[data-testid=fda]").scrollIntoViewIfNeeded();
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // macOS 26 hid the icon until Tidings is allowed in the menu bar (docs/install-macos.md):
    // the window opened by itself, with the app's macOS sentence.
    {
      const hidden = seed();
      hidden.state.menuBar = { state: "hidden", fix: macosWhereToAllow() };
      hidden.state.types[0].store.path = "/Users/you/Library/Mail/V10/MailData/Envelope Index";
      hidden.state.types[1].store.path = "/Users/you/Library/Messages/chat.db";
      const { page, context } = await openUi(browser, server.url, { seed: hidden, hash: "status", colorScheme });
      const file = join(out, `status-menubar-hidden-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // The sender picker: Contacts searched for "a", one card already allowed through a group.
    {
      const { page, context } = await openUi(browser, server.url, { seed: seed(), hash: "types", colorScheme });
      await page.getByTestId("picker-open-mail.received").click();
      await page.getByTestId("picker-search-mail.received").fill("a");
      await page.waitForSelector("[data-testid='picker-contacts-mail.received'] [role=option]");
      await page.getByTestId("picker-search-mail.received").press("ArrowDown");
      await page.getByTestId("picker-search-mail.received").press("ArrowDown");
      await scrollTo(page, "[data-testid='picker-mail.received']");
      const file = join(out, `picker-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // Recent senders of Messages: counts, last dates, names, the allowed ones marked.
    {
      const { page, context } = await openUi(browser, server.url, { seed: seed(), hash: "types", colorScheme });
      await page.getByTestId("picker-open-messages.received").click();
      await page.getByTestId("picker-messages.received").getByRole("tab", { name: "Recent senders" }).click();
      await page.waitForSelector("[data-testid='picker-recent-messages.received'] [role=option]");
      await scrollTo(page, "[data-testid='picker-messages.received']");
      const file = join(out, `picker-recent-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // A program with no grant asks: the row above every section, over Clients.
    {
      const asking = seed();
      asking.settings.asks = agentsSeed(fixtures()).settings.asks;
      Object.assign(asking.state.agents.find((a) => a.id === SCRIPT), { access: "asking", asking: "mail.received" });
      const { page, context } = await openUi(browser, server.url, { seed: asking, hash: "clients", colorScheme });
      const file = join(out, `agents-ask-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // Advanced at the update check: an update downloaded and checked, waiting to install.
    {
      const ready = seed();
      ready.settings.updates.last = "Tidings 0.2.0 is ready to install.";
      const { page, context } = await openUi(browser, server.url, { seed: ready, hash: "advanced", colorScheme });
      await scrollTo(page, "[data-testid=update-msg]");
      const file = join(out, `advanced-updates-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    // An agent asks to post events to a destination not on the list, over Webhooks.
    {
      const asking = seed();
      asking.state.webhooks.asks = webhooksSeed(fixtures()).state.webhooks.asks;
      const { page, context } = await openUi(browser, server.url, { seed: asking, hash: "webhooks", colorScheme });
      const file = join(out, `webhooks-ask-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await context.close();
    }
    const first = seed();
    first.settings.firstRun = true;
    const { page, context } = await openUi(browser, server.url, { seed: first, colorScheme });
    const file = join(out, `firstrun-${colorScheme}.png`);
    await page.screenshot({ path: file });
    console.log(file);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
