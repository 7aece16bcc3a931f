// The Webhooks section: destinations listed, one added (a refusal shown inline, the field
// kept), one removed with its subscriptions; each subscription by destination with its state,
// last error and count, and End; the question row above every section answered Allow or
// Don't Allow; and an agent's hostile name or origin shown as text.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ACTIVE, ASKED, SUSPENDED, webhooksSeed } from "./webhooks.mjs";
import { browserSuite, calls } from "./suite.mjs";

const withUi = browserSuite();

test("destinations and subscriptions are listed by origin, with state, error and count", async () => {
  await withUi({ seed: webhooksSeed(), hash: "webhooks" }, async (page) => {
    const dests = page.getByTestId("destinations");
    assert.equal(await dests.locator("li").count(), 2);
    assert.match(await dests.locator("[data-destination='https://hooks.example.com']").innerText(), /1 subscription/);
    assert.equal(await page.getByTestId("webhooks-count").innerText(), "2 subscriptions, 1 suspended.");
    const active = await page.locator(`[data-webhook-id='${ACTIVE}']`).innerText();
    assert.match(active, /https:\/\/hooks\.example\.com/);
    assert.match(active, /Active/);
    assert.match(active, /42 events delivered · last delivery/);
    const suspended = await page.locator(`[data-webhook-id='${SUSPENDED}']`).innerText();
    assert.match(suspended, /Suspended/);
    assert.match(suspended, /last error: http_5xx · failing since/);
    assert.doesNotMatch(await page.locator("body").innerText(), /sub_|whsec_/, "ids and secrets are not shown");
  });
});

test("a destination is added normalised; a refused one says why inline and keeps the text", async () => {
  await withUi({ seed: webhooksSeed(), hash: "webhooks" }, async (page) => {
    const input = page.getByTestId("destination-input");
    await input.fill("http://hooks.example.net");
    await page.getByTestId("destination-add").click();
    await page.waitForFunction(() => document.querySelector("[data-testid=destination-error]").textContent !== "");
    assert.match(await page.getByTestId("destination-error").innerText(), /http:\/\/ is allowed only for this machine.*write https:\/\/hooks\.example\.net/);
    assert.equal(await input.inputValue(), "http://hooks.example.net", "the text stays to fix");
    await input.fill("HTTPS://Hooks.Example.NET:443");
    await input.press("Enter");
    await page.locator("[data-destination='https://hooks.example.net']").waitFor();
    assert.equal(await input.inputValue(), "");
    assert.equal(await page.getByTestId("destination-error").innerText(), "");
    assert.deepEqual(await calls(page, "allow_destination"), [{ origin: "http://hooks.example.net" }, { origin: "HTTPS://Hooks.Example.NET:443" }]);
  });
});

test("Remove takes a destination and its subscriptions off; End ends one subscription", async () => {
  await withUi({ seed: webhooksSeed(), hash: "webhooks" }, async (page) => {
    await page.getByRole("button", { name: "Remove http://127.0.0.1:8787" }).click();
    await page.locator(`[data-webhook-id='${SUSPENDED}']`).waitFor({ state: "detached" });
    assert.deepEqual(await calls(page, "remove_destination"), [{ origin: "http://127.0.0.1:8787" }]);
    await page.getByRole("button", { name: /^End .*subscription to https:\/\/hooks\.example\.com$/ }).click();
    await page.locator(`[data-webhook-id='${ACTIVE}']`).waitFor({ state: "detached" });
    assert.deepEqual(await calls(page, "end_webhook"), [{ id: ACTIVE }]);
    assert.equal(await page.getByTestId("webhooks-count").innerText(), "0 subscriptions.");
    assert.equal(await page.getByText("No agent has a webhook subscription.").isVisible(), true);
  });
});

test("an agent's question shows above every section; Allow adds it, Don't Allow closes it", async () => {
  await withUi({ seed: webhooksSeed(), hash: "status" }, async (page) => {
    const row = page.locator(`[data-destination-ask='${ASKED}']`);
    assert.equal(await row.isVisible(), true);
    assert.match(await row.innerText(), /python3 events_stream\.py wants to post events to https:\/\/x\.example/);
    await page.getByRole("button", { name: `Allow posting to ${ASKED}`, exact: true }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=destination-asks]").hidden);
    assert.deepEqual(await calls(page, "answer_destination"), [{ origin: ASKED, allow: true }]);
    await page.locator("#tab-webhooks").click();
    await page.locator(`[data-destination='${ASKED}']`).waitFor();
  });
  await withUi({ seed: webhooksSeed(), hash: "webhooks" }, async (page) => {
    await page.getByRole("button", { name: `Don't allow posting to ${ASKED}` }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=destination-asks]").hidden);
    assert.deepEqual(await calls(page, "answer_destination"), [{ origin: ASKED, allow: false }]);
    assert.equal(await page.locator(`[data-destination='${ASKED}']`).count(), 0, "the list is unchanged");
  });
});

test("hostile agent names and origins are shown as text", async () => {
  const seed = webhooksSeed();
  const evil = "<img src=x onerror=window.__pwned=1>";
  seed.state.webhooks.asks[0].agent = evil;
  seed.state.webhooks.subscriptions[0].agentName = evil;
  seed.state.webhooks.destinations.push("https://<b>bold</b>.example");
  await withUi({ seed, hash: "webhooks" }, async (page) => {
    assert.equal(await page.locator("img").count(), 0);
    assert.equal(await page.locator("b").count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.match(await page.getByTestId("destination-asks").innerText(), /<img src=x onerror=window\.__pwned=1> wants to post events/);
    assert.match(await page.getByTestId("destinations").innerText(), /https:\/\/<b>bold<\/b>\.example/);
  });
});
