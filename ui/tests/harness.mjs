// What the UI tests and the screenshot script share: ui/dist served by a tiny http server on
// 127.0.0.1:0, Debian's chromium driven by playwright-core, and a page with the fake bridge
// seeded from the fixtures (what a demo engine answers, written by a Rust test:
// crates/server/src/ui_contract/fixtures.rs).

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { extname, join, normalize, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { installFakeBridge } from "./fake-bridge.js";

const here = dirname(fileURLToPath(import.meta.url));
export const uiDir = join(here, "..");
export const distDir = join(uiDir, "dist");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** Serve ui/dist on 127.0.0.1 at a free port; resolves to { url, close }. */
export async function serveDist() {
  if (!existsSync(join(distDir, "index.html"))) {
    throw new Error(`ui/dist/index.html is missing: run \`npm run build\` in ui/ first`);
  }
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    const file = join(distDir, path === "/" ? "index.html" : path);
    if (!file.startsWith(distDir)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Debian's chromium (scripts/install-deps.sh installs it), or CHROMIUM when set. */
export const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** Launch headless chromium with flags for a machine like CI's: root, no GPU, no updates. */
export async function launch() {
  if (!existsSync(chromiumPath)) {
    throw new Error(`${chromiumPath} is missing: install Debian's chromium (scripts/install-deps.sh) or set CHROMIUM`);
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** The fixtures, fresh each call (tests change them). */
export function fixtures() {
  const read = (name) => JSON.parse(readFileSync(join(here, "fixtures", name), "utf8"));
  return { state: read("state.json"), settings: read("settings.json"), activity: read("activity.json") };
}

/**
 * A page on the served UI with the fake bridge; `seed` overrides the fixtures, `hash` picks
 * the section. Waits until the first data is rendered.
 */
export async function openUi(browser, url, { seed = fixtures(), hash = "", colorScheme = "light" } = {}) {
  const context = await browser.newContext({ viewport: { width: 760, height: 560 }, colorScheme, locale: "en-GB", timezoneId: "UTC" });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.addInitScript(installFakeBridge, seed);
  await page.goto(url + (hash ? `#${hash}` : ""));
  await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
  return { page, context, errors };
}

/** The command names the UI's own list declares (ui/src/commands.ts, an `as const` array). */
export function declaredCommands() {
  const src = readFileSync(join(uiDir, "src", "commands.ts"), "utf8");
  const body = src.match(/export const COMMANDS = \[([\s\S]*?)\] as const/);
  if (!body) throw new Error("ui/src/commands.ts: no `export const COMMANDS = [...] as const`");
  return [...body[1].matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
}

/** src-tauri/commands.json (the Rust side's list), or null until branch `tauri` adds it. */
export function rustCommands() {
  const file = join(uiDir, "..", "src-tauri", "commands.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
}
