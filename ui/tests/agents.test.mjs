// The Clients section as agents and the question row: a program asking is answered Allow or
// Don't Allow from the row above every section (by keyboard too), an agent's grant is edited
// per type, an agent is denied and forgotten, what new programs get is chosen, and the names
// agents announce stay text.

import { test } from "node:test";
import assert from "node:assert/strict";
import { CLAUDE, DENIED, SCRIPT, agentsSeed } from "./agents.mjs";
import { fixtures } from "./harness.mjs";
import { browserSuite, calls } from "./suite.mjs";

const withUi = browserSuite();
const card = (page, id) => page.locator(`[data-agent-id='${id}']`);

test("a question shows above every section; Allow answers it and the row goes", async () => {
  await withUi({ seed: agentsSeed(), hash: "status" }, async (page) => {
    const row = page.locator(`[data-ask-id='${SCRIPT}']`);
    assert.equal(await row.isVisible(), true, "shown over Status, not only in Clients");
    assert.match(await row.innerText(), /python3 host_a\.py wants new mail from example\.com/);
    // Keyboard: from the last sidebar tab, Tab reaches Don't Allow then Allow.
    await page.locator("#tab-advanced").focus();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Don't allow python3 host_a.py");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Allow python3 host_a.py");
    await page.keyboard.press("Enter");
    assert.deepEqual(await calls(page, "answer_agent"), [{ id: SCRIPT, allow: true }]);
    await page.waitForFunction(() => document.querySelector("[data-testid=asks]").hidden);
    assert.equal(await page.evaluate(() => document.activeElement.id), "tab-status", "focus goes back to the selected tab");
    await page.locator("#tab-clients").click();
    assert.match(await card(page, SCRIPT).innerText(), /Allowed/);
    // Allowed now, its grant is in settings.toml and can be edited.
    assert.equal(await card(page, SCRIPT).getByTestId("agent-grant-edit").isVisible(), true);
  });
});

test("Don't Allow denies the asking program; a failed answer says why", async () => {
  await withUi({ seed: agentsSeed(), hash: "clients" }, async (page) => {
    await page.getByRole("button", { name: "Don't allow python3 host_a.py" }).click();
    assert.deepEqual(await calls(page, "answer_agent"), [{ id: SCRIPT, allow: false }]);
    await page.waitForFunction(() => document.querySelector("[data-testid=asks]").hidden);
    assert.match(await card(page, SCRIPT).innerText(), /Denied/);
    assert.match(await card(page, SCRIPT).innerText(), /Nothing: it is denied/);
  });
  const gone = agentsSeed();
  await withUi({ seed: gone }, async (page) => {
    // The program left and Tidings forgot it: the app refuses, the row says so.
    await page.evaluate((id) => { window.__fake.data.state.agents = window.__fake.data.state.agents.filter((a) => a.id !== id); window.__fake.data.settings.asks = []; }, SCRIPT);
    await page.getByTestId("asks").getByRole("button", { name: "Allow python3 host_a.py", exact: true }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=ask-error]").textContent !== "");
    assert.match(await page.getByTestId("ask-error").innerText(), /Could not answer python3 host_a\.py: no agent/);
  });
});

test("each agent: what it is, kind, program, announced names, grant, what it holds", async () => {
  await withUi({ seed: agentsSeed(), hash: "clients" }, async (page) => {
    assert.equal(await page.getByTestId("agents-count").innerText(), "3 agents known.");
    const claude = card(page, CLAUDE);
    const text = await claude.innerText();
    assert.match(text, /claude \(signed by Anthropic PBC\)/);
    assert.match(text, /Signed app/);
    assert.match(text, /\/Applications\/Claude Code\.app\/Contents\/MacOS\/claude/);
    assert.match(text, /Announces itself as “Claude Code” \(what it says, not checked\)/);
    assert.match(text, /3 connections · 2 streams · 5 events delivered · last seen/);
    // Its three connections are inside it, with their Revoke buttons.
    assert.equal(await claude.locator("[data-client-id]").count(), 3);
    assert.equal(await claude.getByTestId("grant-mail.received").isChecked(), true);
    assert.equal(await claude.getByTestId("grant-scope-mail.received").inputValue(), "every");
    assert.equal(await claude.getByTestId("grant-scope-messages.received").inputValue(), "senders");
    const senders = claude.getByTestId("grant-senders-messages.received").locator("input[type=checkbox]");
    const allow = await page.evaluate(() => window.__fake.data.settings.types[1].allow);
    assert.equal(await senders.count(), allow.length, "one box per entry of the Messages allowlist");
    assert.equal(await senders.nth(0).isChecked(), true);
    assert.equal(await senders.nth(0).isDisabled(), true, "the last sender stays: none is the switch's off");
    assert.equal(await senders.nth(1).isChecked(), false);
    const denied = await card(page, DENIED).innerText();
    assert.match(denied, /mcp-bridge/);
    assert.match(denied, /Denied/);
    assert.match(denied, /0 connections · 0 streams · 12 events delivered/);
    assert.match(await card(page, DENIED).getByTestId("agent-access").innerText(), /Allow/);
  });
});

test("grant edits: a type off and on, only some senders, a sender added, every sender again", async () => {
  await withUi({ seed: agentsSeed(), hash: "clients" }, async (page) => {
    const claude = card(page, CLAUDE);
    await claude.getByTestId("grant-mail.received").click();
    await page.waitForFunction((id) => !document.querySelector(`[data-agent-id='${id}'] [data-testid='grant-mail.received']`).checked, CLAUDE);
    assert.equal(await claude.getByTestId("grant-scope-mail.received").isDisabled(), true);
    await claude.getByTestId("grant-mail.received").click();
    await claude.getByTestId("grant-scope-mail.received").selectOption("senders");
    const mailEntries = (await page.evaluate(() => window.__fake.data.settings.types[0].allow));
    await claude.getByTestId("grant-senders-mail.received").locator("input").nth(1).uncheck();
    const messages = claude.getByTestId("grant-senders-messages.received").locator("input");
    await messages.nth(1).check();
    await claude.getByTestId("grant-scope-messages.received").selectOption("every");
    const sent = await calls(page, "set_agent_type");
    assert.deepEqual(sent, [
      { id: CLAUDE, eventType: "mail.received", grant: "none" },
      { id: CLAUDE, eventType: "mail.received", grant: "every" },
      { id: CLAUDE, eventType: "mail.received", grant: { senders: mailEntries } },
      { id: CLAUDE, eventType: "mail.received", grant: { senders: mailEntries.filter((_, i) => i !== 1) } },
      { id: CLAUDE, eventType: "messages.received", grant: { senders: (await page.evaluate(() => window.__fake.data.settings.types[1].allow)).slice(0, 2) } },
      { id: CLAUDE, eventType: "messages.received", grant: "every" },
    ]);
    assert.equal(await claude.getByTestId("grant-senders-messages.received").isVisible(), false);
    // The app refuses a sender that is not on the allowlist: the reason is shown.
    await page.evaluate(() => { window.__fake.data.settings.types[0].allow = ["example.org"]; });
    await claude.getByTestId("grant-senders-mail.received").locator("input").nth(1).check();
    await page.waitForFunction(() => document.querySelector("section [role=alert]:not(:empty)"));
    assert.match(await page.locator("section [role=alert]:not(:empty)").innerText(), /Could not change Mail: .* is not on the mail\.received allowlist/);
  });
});

test("deny, allow again and forget an agent; what new programs get", async () => {
  await withUi({ seed: agentsSeed(), hash: "clients" }, async (page) => {
    await page.getByRole("button", { name: "Deny claude (signed by Anthropic PBC)" }).click();
    assert.deepEqual(await calls(page, "set_agent_access"), [{ id: CLAUDE, allow: false }]);
    await page.waitForFunction((id) => /Denied/.test(document.querySelector(`[data-agent-id='${id}']`).innerText), CLAUDE);
    await page.getByRole("button", { name: "Allow claude (signed by Anthropic PBC)" }).click();
    assert.deepEqual((await calls(page, "set_agent_access"))[1], { id: CLAUDE, allow: true });
    await page.getByRole("button", { name: "Forget mcp-bridge" }).click();
    assert.deepEqual(await calls(page, "forget_agent"), [{ id: DENIED }]);
    await page.waitForFunction((id) => /No decision/.test(document.querySelector(`[data-agent-id='${id}']`).innerText), DENIED);
    assert.equal(await card(page, DENIED).getByTestId("agent-forget").isVisible(), false, "nothing left to forget");
    assert.match(await card(page, DENIED).innerText(), /It will be asked about on its first request/);

    const select = page.getByTestId("new-agents");
    assert.equal(await select.inputValue(), "ask");
    await select.selectOption("deny");
    assert.deepEqual(await calls(page, "set_new_agents"), [{ new: "deny" }]);
    await page.waitForFunction((id) => /New programs are denied/.test(document.querySelector(`[data-agent-id='${id}']`).innerText), DENIED);
    await select.selectOption("allow");
    assert.deepEqual((await calls(page, "set_new_agents"))[1], { new: "allow" });
  });
});

test("announced names and program paths from outside stay text", async () => {
  const seed = fixtures();
  const evil = '<img src=x onerror="window.__pwned=1">';
  seed.state.agents[0].announced = [evil];
  seed.state.agents[0].name = `<b>${evil}</b>`;
  seed.settings.asks = [{ id: seed.state.agents[0].id, agent: evil, wants: `new mail from ${evil}`, eventType: "mail.received", sinceMs: 1 }];
  await withUi({ seed, hash: "clients" }, async (page) => {
    assert.ok((await card(page, seed.state.agents[0].id).innerText()).includes(`Announces itself as “${evil}”`));
    assert.ok((await page.getByTestId("asks").innerText()).includes(`${evil} wants new mail from ${evil}`));
    assert.equal(await page.locator(".pane img, .pane b").count(), 0, "no markup from an agent's words");
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  });
});

test("an agent token is made by name, shown once, listed by name and revoked", async () => {
  await withUi({ seed: fixtures(), hash: "advanced" }, async (page) => {
    const list = page.getByTestId("agent-tokens");
    assert.equal(await list.locator("li").count(), 0);
    // A name the engine would refuse is caught before any call.
    await page.getByTestId("agent-token-name").fill("My Script");
    await page.getByTestId("agent-token-create").click();
    assert.match(await page.getByTestId("agent-token-msg").innerText(), /lower-case letters, digits and -/);
    assert.deepEqual(await calls(page, "create_agent_token"), []);
    // Enter in the field makes it; the token is shown once, to copy.
    await page.getByTestId("agent-token-name").fill("my-script");
    await page.getByTestId("agent-token-name").press("Enter");
    assert.deepEqual(await calls(page, "create_agent_token"), [{ name: "my-script" }]);
    assert.equal(await page.getByTestId("agent-token-new").inputValue(), "fake-token-for-my-script");
    assert.match(await page.getByTestId("agent-token-msg").innerText(), /keeps only its hash/);
    await list.locator("[data-token='my-script']").waitFor();
    assert.ok(!(await list.innerText()).includes("fake-token-for"), "the list names, never shows, the token");
    // A second of the name: the engine's reason is shown.
    await page.getByTestId("agent-token-name").fill("my-script");
    await page.getByTestId("agent-token-create").click();
    await page.waitForFunction(() => document.querySelector("[data-testid=agent-token-msg]").textContent.includes("already has a token"));
    // Revoke: gone from the list, and the shown token with it.
    await list.getByRole("button", { name: "Revoke the token of my-script" }).click();
    assert.deepEqual(await calls(page, "revoke_agent_token"), [{ name: "my-script" }]);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=agent-tokens] li").length === 0);
    assert.equal(await page.getByTestId("agent-token-new").isVisible(), false);
  });
});
