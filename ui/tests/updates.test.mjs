// The update check in Advanced: the daily switch (off in the demo) saved through
// set_update_check with the note on what the check sends, this copy's version, the last
// check's line and time, Check Now asking the app and showing the answer when it arrives, a
// refused switch put back with the reason, and a feed's words shown as text.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fixtures } from "./harness.mjs";
import { browserSuite, calls } from "./suite.mjs";

const withUi = browserSuite();
const emit = (page, name, payload) => page.evaluate(([n, p]) => window.__fake.emit(n, p), [name, payload]);
const text = (page, id) => page.getByTestId(id).innerText();

test("the daily check is a switch, off in the demo, saved with set_update_check", async () => {
  await withUi({ hash: "advanced" }, async (page) => {
    const daily = page.getByRole("switch", { name: "Check for updates daily" });
    assert.equal(await daily.isChecked(), false, "the demo never calls out");
    assert.equal(
      await daily.getAttribute("aria-describedby").then((id) => page.locator(`#${id}`).innerText()),
      "The check fetches the release feed and sends nothing about you.",
    );
    assert.equal(await text(page, "update-version"), `This is Tidings ${fixtures().settings.updates.current}.`);
    assert.equal(await text(page, "update-last"), "Not checked yet.");
    await daily.click();
    assert.deepEqual(await calls(page, "set_update_check"), [{ on: true }]);
    await page.waitForFunction(() => window.__fake.data.settings.updates.check === true);
    assert.equal(await daily.isChecked(), true);
    await daily.click();
    await page.waitForFunction(() => window.__fake.data.settings.updates.check === false);
    assert.deepEqual(await calls(page, "set_update_check"), [{ on: true }, { on: false }]);
  });
});

test("Check Now asks the app and shows the outcome, with its time, when it arrives", async () => {
  await withUi({ hash: "advanced" }, async (page) => {
    await page.evaluate(() => { window.__fake.nextCheck = "Tidings 0.2.0 is ready to install."; });
    await page.getByRole("button", { name: "Check Now" }).click();
    assert.deepEqual(await calls(page, "check_for_updates"), [{}]);
    await page.waitForFunction(() => document.querySelector("[data-testid=update-last]").textContent.includes("0.2.0"));
    assert.match(await text(page, "update-last"), /^Last checked \d{1,2}[:.]\d{2}.*: Tidings 0\.2\.0 is ready to install\.$/);
    assert.equal(await text(page, "update-msg"), "", "Checking… is cleared by the answer");
    assert.equal(await page.getByTestId("update-check").isChecked(), false, "checking once leaves the daily switch alone");
  });
});

test("a check recorded elsewhere (the menu, the daily timer) shows as it arrives", async () => {
  await withUi({ hash: "advanced" }, async (page) => {
    const s = structuredClone(fixtures().settings);
    // A day before the window's day: the date goes with the time.
    s.updates = { check: true, current: "0.1.0", last: "Could not check for updates: the feed did not answer within 30 seconds.", checkedAtMs: Date.now() - 2 * 86_400_000 };
    await emit(page, "settings-changed", s);
    assert.equal(await page.getByTestId("update-check").isChecked(), true);
    assert.match(await text(page, "update-last"), /^Last checked \S+ \S+, \d{1,2}[:.]\d{2}.*: Could not check for updates: the feed did not answer within 30 seconds\.$/);
  });
});

test("a refused switch goes back and says why; a hostile line is shown as text", async () => {
  const seed = fixtures();
  seed.settings.updates.last = "<img src=x onerror=window.__pwned=1> is ready to install.";
  seed.settings.updates.checkedAtMs = Date.now();
  await withUi({ seed, hash: "advanced" }, async (page) => {
    assert.equal(await page.locator("img").count(), 0);
    assert.match(await text(page, "update-last"), /<img src=x onerror=window\.__pwned=1> is ready to install\./);
    const why = "settings file /Users/you/Library/Application Support/Tidings/settings.toml: permission denied (os error 13)";
    await page.evaluate((m) => { window.__fake.data.saveError = m; }, why);
    await page.getByTestId("update-check").click();
    await page.waitForFunction(() => document.querySelector("[data-testid=update-msg]").textContent !== "");
    assert.equal(await text(page, "update-msg"), why);
    assert.equal(await page.getByTestId("update-check").isChecked(), false, "put back");
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  });
});
