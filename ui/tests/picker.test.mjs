// The sender picker and the people settings in headless chromium against the fake bridge:
// search by name and by a number typed as digits, a group, recent senders (counts, already
// allowed marked), keyboard-only use, person and group entries (a missing one marked), the
// names switch (and the first-run offer), categories, and Contacts that cannot be read.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fixtures } from "./harness.mjs";
import { browserSuite, calls } from "./suite.mjs";

const withUi = browserSuite();
const MAIL = "mail.received";
const MESSAGES = "messages.received";
const ANA = "person: Ana Ruiz [4F1C2A7E-0D7B-4E55-9C3A-1B2D3E4F5A60:ABPerson]";
const FAMILY = "group: Family [9A2B4C6D-8E0F-4A1B-9C2D-3E4F5A6B7C80:ABGroup]";

/** The fixtures with short allowlists, so the picker has someone left to add. */
function seed({ mail = ["example.net"], messages = ["+12025550101"] } = {}) {
  const s = fixtures();
  s.settings.types[0].allow = mail;
  s.settings.types[1].allow = messages;
  return s;
}

/** The names shown in a picker list, in order. */
const names = (list) => list.locator("[role=option] .hit-name").evaluateAll((els) => els.map((e) => e.firstChild.textContent));
/** Wait until a picker list holds exactly `want` names. */
async function waitNames(page, testid, want) {
  await page.waitForFunction(
    ([id, w]) => JSON.stringify([...document.querySelectorAll(`[data-testid='${id}'] [role=option] .hit-name`)].map((e) => e.firstChild.textContent)) === JSON.stringify(w),
    [testid, want],
  );
}

test("picker: search Contacts by name and by a number typed as digits, pick a person", async () => {
  await withUi({ seed: seed(), hash: "types" }, async (page) => {
    const opener = page.getByRole("button", { name: "Pick senders for Mail…" });
    assert.equal(await opener.getAttribute("aria-expanded"), "false");
    assert.equal(await page.getByTestId(`picker-${MAIL}`).isVisible(), false, "closed until asked");
    await opener.click();
    assert.equal(await opener.getAttribute("aria-expanded"), "true");
    const search = page.getByRole("combobox", { name: "Search Contacts for Mail senders" });
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("role")), "combobox", "focus lands in the search field");

    await search.fill("an");
    await waitNames(page, `picker-contacts-${MAIL}`, ["Ana Ruiz", "Anders Berg"]);
    const list = page.getByRole("listbox", { name: "Contacts (Mail)" });
    const ana = list.getByRole("option").first();
    assert.match(await ana.innerText(), /\(202\) 555-0101 · ana\.ruiz@example\.net/, "the card's numbers and addresses");
    assert.match(await page.getByTestId(`picker-msg-${MAIL}`).innerText(), /2 cards found\./);

    // A number typed as bare digits finds the card that writes it with punctuation.
    await search.fill("2025550101");
    await waitNames(page, `picker-contacts-${MAIL}`, ["Ana Ruiz"]);
    await search.fill("555 0188");
    await waitNames(page, `picker-contacts-${MAIL}`, ["Acme Couriers"]);
    assert.equal(await list.locator(".tag").innerText(), "Company", "a company card is marked");
    await search.fill("zzz");
    await page.waitForFunction((id) => document.querySelector(`[data-testid='${id}']`).innerText.includes("No one in Contacts matches “zzz”."), `picker-contacts-${MAIL}`);

    // Pick Ana: her entry goes through set_allowlist and shows as a person.
    await search.fill("ruiz");
    await waitNames(page, `picker-contacts-${MAIL}`, ["Ana Ruiz"]);
    await list.getByRole("option").first().click();
    await page.waitForFunction((e) => document.querySelector(`ul.entries li[data-entry='${e}']`), ANA);
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1), { eventType: MAIL, entries: ["example.net", ANA] });
    const row = page.locator(`ul.entries li[data-entry='${ANA}']`);
    assert.match(await row.innerText(), /Ana Ruiz\s+Person/);
    assert.equal(await row.locator("svg[aria-hidden=true]").count(), 1, "an icon beside the word");
    assert.equal(await page.getByRole("button", { name: "Remove Ana Ruiz from the Mail allowlist" }).count(), 1);
    assert.match(await page.getByTestId(`picker-msg-${MAIL}`).innerText(), /Added Ana Ruiz to the Mail allowlist\./);

    // Already allowed: marked, and picking again adds nothing.
    assert.equal(await list.getByRole("option").first().getAttribute("aria-disabled"), "true");
    assert.match(await list.getByRole("option").first().innerText(), /Allowed/);
    await list.getByRole("option").first().dispatchEvent("click");
    assert.match(await page.getByTestId(`picker-msg-${MAIL}`).innerText(), /Ana Ruiz is already allowed\./);
    assert.equal((await calls(page, "set_allowlist")).length, 1, "not added twice");
    assert.ok((await calls(page, "search_people")).some((a) => a.query === "2025550101"));
  });
});

test("picker: groups with member counts; picking one adds the group", async () => {
  await withUi({ seed: seed(), hash: "types" }, async (page) => {
    await page.getByRole("button", { name: "Pick senders for Mail…" }).click();
    await page.getByTestId(`picker-${MAIL}`).getByRole("tab", { name: "Groups" }).click();
    await waitNames(page, `picker-groups-${MAIL}`, ["Family", "Book club"]);
    const list = page.getByRole("listbox", { name: "Groups (Mail)" });
    assert.deepEqual(await list.locator(".hit-detail").allInnerTexts(), ["2 members", "3 members"]);
    await list.getByRole("option", { name: /Family/ }).click();
    await page.waitForFunction((e) => document.querySelector(`ul.entries li[data-entry='${e}']`), FAMILY);
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1), { eventType: MAIL, entries: ["example.net", FAMILY] });
    const row = page.locator(`ul.entries li[data-entry='${FAMILY}']`);
    assert.match(await row.innerText(), /Family\s+Group/);
    assert.equal(await row.getAttribute("data-state"), "ok");
    assert.doesNotMatch(await row.innerText(), /matches nobody/);
  });
});

test("picker: recent senders with counts and last date, names, the allowed ones marked", async () => {
  await withUi({ seed: seed(), hash: "types" }, async (page) => {
    await page.getByRole("button", { name: "Pick senders for Messages…" }).click();
    await page.getByTestId(`picker-${MESSAGES}`).getByRole("tab", { name: "Recent senders" }).click();
    await waitNames(page, `picker-recent-${MESSAGES}`, ["Ana Ruiz", "Acme Couriers", "+12025550143", "Anders Berg"]);
    assert.deepEqual(await calls(page, "recent_senders"), [{ eventType: MESSAGES }]);
    const options = page.getByRole("listbox", { name: "Recent senders (Messages)" }).getByRole("option");
    assert.match(await options.nth(0).innerText(), /\+12025550101 · 9 messages · last 30 Nov/);
    assert.match(await options.nth(1).innerText(), /56249 · 6 messages · last 28 Nov/);
    assert.match(await options.nth(2).innerText(), /2 messages · last 21 Nov/);
    assert.match(await options.nth(3).innerText(), /1 message · last 12 Nov/);
    // Ana's number is in the allowlist already: marked, not addable twice.
    assert.equal(await options.nth(0).getAttribute("aria-disabled"), "true");
    assert.match(await options.nth(0).innerText(), /Allowed/);
    assert.equal(await options.nth(2).getAttribute("aria-disabled"), "false");
    await options.nth(0).dispatchEvent("click");
    assert.match(await page.getByTestId(`picker-msg-${MESSAGES}`).innerText(), /Ana Ruiz is already allowed\./);
    assert.deepEqual(await calls(page, "set_allowlist"), []);
    // A sender without a card is added by its handle.
    await options.nth(2).click();
    await page.waitForFunction(() => document.querySelector("ul.entries li[data-entry='+12025550143']"));
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1), { eventType: MESSAGES, entries: ["+12025550101", "+12025550143"] });
    assert.equal(await options.nth(2).getAttribute("aria-disabled"), "true");
  });
  // Allowed through a domain, not an exact entry: still marked.
  await withUi({ seed: seed({ mail: ["example.com"] }), hash: "types" }, async (page) => {
    await page.getByRole("button", { name: "Pick senders for Mail…" }).click();
    await page.getByTestId(`picker-${MAIL}`).getByRole("tab", { name: "Recent senders" }).click();
    await waitNames(page, `picker-recent-${MAIL}`, ["news@shop.example", "Alice Park", "Acme Couriers", "Bob Stone"]);
    const allowed = await page.getByTestId(`picker-recent-${MAIL}`).getByRole("option").evaluateAll((els) => els.map((e) => e.getAttribute("aria-disabled")));
    assert.deepEqual(allowed, ["false", "true", "false", "false"]);
    assert.match(await page.getByTestId(`picker-recent-${MAIL}`).getByRole("option").first().innerText(), /22 messages · last 30 Nov/);
  });
});

test("picker: keyboard only, named and with roles", async () => {
  await withUi({ seed: seed(), hash: "types" }, async (page) => {
    const opener = page.getByTestId(`picker-open-${MAIL}`);
    await opener.focus();
    await page.keyboard.press("Enter");
    const active = () => page.evaluate(() => ({ role: document.activeElement.getAttribute("role"), name: document.activeElement.getAttribute("aria-label") ?? document.activeElement.textContent }));
    assert.deepEqual(await active(), { role: "combobox", name: "Search Contacts for Mail senders" });

    // Type, arrow down through the hits, Enter picks the active one.
    await page.keyboard.type("a");
    await waitNames(page, `picker-contacts-${MAIL}`, ["Ana Ruiz", "Alice Park", "Bob Stone", "Anders Berg", "Acme Couriers"]);
    const search = page.getByTestId(`picker-search-${MAIL}`);
    assert.equal(await search.getAttribute("aria-activedescendant"), null, "nothing active before an arrow");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    const activeId = await search.getAttribute("aria-activedescendant");
    assert.equal(await page.locator(`#${activeId} .hit-name`).evaluate((e) => e.firstChild.textContent), "Alice Park");
    assert.equal(await page.locator(`#${activeId}`).getAttribute("aria-selected"), "true");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("ul.entries li[data-entry^='person: Alice Park']"));
    assert.match((await calls(page, "set_allowlist")).at(-1).entries.at(-1), /^person: Alice Park \[7B9E0C41-/);
    assert.deepEqual((await active()).role, "combobox", "focus stays in the search field after a pick");

    // To the tabs and over to Groups, into its list, and pick with Enter.
    await page.keyboard.press("Shift+Tab");
    assert.deepEqual(await active(), { role: "tab", name: "Contacts" });
    await page.keyboard.press("ArrowRight");
    assert.deepEqual(await active(), { role: "tab", name: "Groups" });
    assert.equal(await page.getByTestId(`picker-${MAIL}`).getByRole("tab", { name: "Groups" }).getAttribute("aria-selected"), "true");
    await waitNames(page, `picker-groups-${MAIL}`, ["Family", "Book club"]);
    await page.keyboard.press("Tab");
    assert.equal((await active()).role, "listbox");
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("ul.entries li[data-entry^='group: Book club']"));

    // Every focusable thing in the open picker has a name (chromium's accessibility tree).
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = await cdp.send("Accessibility.getFullAXTree");
    const unnamed = nodes.filter((n) => !n.ignored && n.properties?.some((p) => p.name === "focusable" && p.value.value) && n.role?.value !== "RootWebArea" && !n.name?.value?.trim());
    assert.deepEqual(unnamed.map((n) => n.role?.value), [], "unnamed controls in the picker");
    assert.ok(nodes.some((n) => n.role?.value === "option" && /Book club/.test(n.name?.value ?? "")), "rows are options by name");

    // Escape closes it and gives focus back to the button; ArrowDown on the button opens it.
    await page.keyboard.press("Escape");
    assert.equal(await page.getByTestId(`picker-${MAIL}`).isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), `picker-open-${MAIL}`);
    assert.equal(await opener.getAttribute("aria-expanded"), "false");
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.getByTestId(`picker-${MAIL}`).isVisible(), true);
    assert.equal((await active()).role, "listbox", "reopens where it was left, in the Groups list");
  });
});

test("entries: a person or group Contacts no longer has is shown as missing", async () => {
  const gone = "person: Old Friend [DEAD0000-0000-4000-8000-000000000000:ABPerson]";
  await withUi({ seed: seed({ mail: ["example.net", gone, FAMILY] }), hash: "types" }, async (page) => {
    const row = page.locator(`ul.entries li[data-entry='${gone}']`);
    assert.equal(await row.getAttribute("data-state"), "missing");
    assert.match(await row.innerText(), /Old Friend\s+Person/);
    assert.match(await row.innerText(), /No longer in Contacts: matches nobody\./);
    assert.equal(await page.locator(`ul.entries li[data-entry='${FAMILY}']`).getAttribute("data-state"), "ok");
    assert.equal(await page.getByTestId("contacts-status").isVisible(), false, "Contacts is readable");
    // Removing it works like any entry.
    await page.getByRole("button", { name: "Remove Old Friend from the Mail allowlist" }).click();
    await page.waitForFunction((e) => !document.querySelector(`ul.entries li[data-entry='${e}']`), gone);
    assert.deepEqual((await calls(page, "set_allowlist")).at(-1).entries, ["example.net", FAMILY]);
  });
});

test("contacts unreadable: one status line, entries marked, the picker says why", async () => {
  const s = seed({ mail: [FAMILY] });
  s.settings.contacts = { readable: false, problem: "AddressBook-v22.abcddb is locked" };
  await withUi({ seed: s, hash: "types" }, async (page) => {
    const line = page.getByTestId("contacts-status");
    assert.equal(await line.isVisible(), true);
    assert.equal(await line.innerText(), "Contacts cannot be read (AddressBook-v22.abcddb is locked): names are left out, and person and group entries match nobody.");
    const row = page.locator(`ul.entries li[data-entry='${FAMILY}']`);
    assert.equal(await row.getAttribute("data-state"), "unreadable");
    assert.match(await row.innerText(), /Contacts cannot be read: matches nobody until it can\./);
    await page.getByRole("button", { name: "Pick senders for Mail…" }).click();
    await page.getByTestId(`picker-search-${MAIL}`).fill("ana");
    await page.waitForFunction((id) => document.querySelector(`[data-testid='${id}']`).innerText.startsWith("Contacts cannot be read"), `picker-contacts-${MAIL}`);
    await page.getByRole("tab", { name: "Status" }).click();
    assert.equal(await page.getByTestId("status-contacts").innerText(), await line.innerText(), "the same line on Status");
    await page.getByRole("tab", { name: "Event types" }).click();
    // Readable again (the app pushes new settings): the line goes.
    const fixed = structuredClone(await page.evaluate(() => window.__fake.data.settings));
    fixed.contacts = { readable: true, problem: null };
    fixed.types[0].entries[0].state = "ok";
    await page.evaluate((v) => window.__fake.emit("settings-changed", v), fixed);
    assert.equal(await line.isVisible(), false);
    assert.equal(await row.getAttribute("data-state"), "ok");
    assert.equal(await page.getByTestId("status-contacts").isHidden(), true);
  });
});

test("names switch: off by default, per type; the first-run sheet offers it with an example", async () => {
  // The demo's settings turn names on; a user's start with them off.
  const off = seed();
  for (const t of off.settings.types) t.names = false;
  await withUi({ seed: off, hash: "types" }, async (page) => {
    const mail = page.getByRole("switch", { name: "Include names from Contacts" }).first();
    assert.equal(await mail.isChecked(), false);
    assert.equal(await page.getByTestId(`names-${MESSAGES}`).isChecked(), false);
    assert.match(await page.locator(`article[data-type='${MESSAGES}']`).innerText(), /New message from Ana Ruiz \(\+1 202 555 0101\)/);
    await page.getByTestId(`names-${MAIL}`).click();
    assert.deepEqual(await calls(page, "set_names"), [{ eventType: MAIL, on: true }]);
    await page.waitForFunction(() => window.__fake.data.settings.types[0].names === true);
    assert.equal(await page.getByTestId(`names-${MAIL}`).isChecked(), true);
    assert.equal(await page.getByTestId(`names-${MESSAGES}`).isChecked(), false, "only that type");
  });
  const first = seed({ mail: [], messages: [] });
  first.settings.firstRun = true;
  for (const t of first.settings.types) t.names = false;
  await withUi({ seed: first }, async (page) => {
    const sheet = page.getByRole("dialog", { name: "Welcome to Tidings" });
    assert.match(await page.getByTestId("firstrun-names-example").innerText(), /New message from Ana Ruiz \(\+1 202 555 0101\)/);
    const names = sheet.getByRole("switch", { name: "Include names from Contacts" });
    assert.equal(await names.isChecked(), false);
    await page.getByTestId("firstrun-type").selectOption(MESSAGES);
    await names.click();
    assert.deepEqual(await calls(page, "set_names"), [{ eventType: MESSAGES, on: true }]);
    await page.getByTestId("firstrun-type").selectOption(MAIL);
    assert.equal(await names.isChecked(), false, "follows the chosen type");
  });
});

test("categories: each type's offered ones, none ticked is all, hidden when none offered", async () => {
  const s = seed();
  s.settings.types[1].offeredCategories = [];
  await withUi({ seed: s, hash: "types" }, async (page) => {
    const set = page.getByTestId(`categories-${MAIL}`);
    assert.equal(await set.isVisible(), true);
    assert.deepEqual(await set.locator("label").allInnerTexts(), ["Primary", "Transactions", "Updates", "Promotions"]);
    assert.match(await set.innerText(), /None ticked: every category\./);
    assert.equal(await set.locator("input:checked").count(), 0);
    await page.getByRole("checkbox", { name: "Updates" }).check();
    await page.waitForFunction(() => window.__fake.data.settings.types[0].categories.length === 1);
    await page.getByRole("checkbox", { name: "Primary" }).check();
    await page.waitForFunction(() => window.__fake.data.settings.types[0].categories.length === 2);
    assert.deepEqual(await calls(page, "set_categories"), [
      { eventType: MAIL, categories: ["updates"] },
      { eventType: MAIL, categories: ["primary", "updates"] },
    ]);
    await page.getByRole("checkbox", { name: "Updates" }).uncheck();
    await page.waitForFunction(() => window.__fake.data.settings.types[0].categories.join() === "primary");
    assert.equal(await page.getByTestId(`categories-${MESSAGES}`).isVisible(), false, "a store without categories offers none");
  });
  // Messages: the SMS categories, as its store offers them.
  await withUi({ seed: seed(), hash: "types" }, async (page) => {
    assert.deepEqual(await page.getByTestId(`categories-${MESSAGES}`).locator("label").allInnerTexts(), ["Primary", "Transactions", "Promotions"]);
  });
});
