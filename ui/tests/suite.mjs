// What the browser test files share: ui/dist served and chromium launched once per file, a
// page per test that fails on any page error or a call the fake bridge lacks, and the calls
// the page made.

import { after, before } from "node:test";
import assert from "node:assert/strict";
import { launch, openUi, serveDist } from "./harness.mjs";

/** Serve the UI and launch chromium for this file's tests; returns `withUi(opts, fn)`. */
export function browserSuite() {
  let server;
  let browser;
  before(async () => {
    server = await serveDist();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  /** Open the UI, run `fn`, and fail on any page error or a call to an unknown command. */
  return async function withUi(opts, fn) {
    const { page, context, errors } = await openUi(browser, server.url, opts);
    try {
      await fn(page);
      assert.deepEqual(await page.evaluate(() => window.__fake.unknown), [], "the UI called a command the fake lacks");
      assert.deepEqual(errors, [], "page errors");
    } finally {
      await context.close();
    }
  };
}

/** The arguments of every call of `cmd` the page made, in order. */
export const calls = (page, cmd) => page.evaluate((c) => window.__fake.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
