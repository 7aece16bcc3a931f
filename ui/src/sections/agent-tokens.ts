// The agents' own HTTP tokens, under the endpoint's token in Advanced: each listed by name and
// date (never the token) with Revoke, and a name field that makes one. A new token is shown
// once, to copy: Tidings keeps only its hash.

import { call, messageOf } from "../bridge";
import type { Ctx } from "../context";
import { copyText } from "../copy";
import { h, replaceChildren, setText, uid } from "../dom";
import { timeLabel } from "../format";
import type { CreatedToken, SettingsView } from "../model";

/** Lower-case letters, digits and `-`, at most 32: what `tidings token create` takes. */
const NAME = /^[a-z0-9-]{1,32}$/;

export interface AgentTokens {
  el: HTMLElement;
  update(s: SettingsView): void;
}

export function agentTokens(ctx: Ctx): AgentTokens {
  const list = h("ul", { class: "entries", attrs: { "aria-label": "Agent tokens", "data-testid": "agent-tokens" } });
  const nameId = uid("agent-token-name");
  const name = h("input", {
    id: nameId,
    attrs: { type: "text", placeholder: "my-script", spellcheck: "false", autocomplete: "off", "data-testid": "agent-token-name" },
  });
  const create = h("button", { class: "btn", text: "Create token", attrs: { type: "button", "data-testid": "agent-token-create" } });
  const fresh = h("input", {
    class: "token",
    attrs: { type: "text", readonly: true, "aria-label": "New agent token", "data-testid": "agent-token-new", spellcheck: "false" },
  });
  const copy = h("button", { class: "btn", text: "Copy", attrs: { type: "button", "aria-label": "Copy the new agent token" } });
  const freshRow = h("div", { class: "row" }, fresh, copy);
  freshRow.hidden = true;
  const msg = h("p", { class: "msg", attrs: { "aria-live": "polite", "data-testid": "agent-token-msg" } });

  async function make(): Promise<void> {
    const wanted = name.value.trim();
    if (!NAME.test(wanted)) {
      setText(msg, "A name is lower-case letters, digits and -, at most 32 characters.");
      return;
    }
    try {
      const made = await call<CreatedToken>("create_agent_token", { name: wanted });
      ctx.applySettings(made.settings);
      fresh.value = made.token;
      freshRow.hidden = false;
      name.value = "";
      setText(msg, `Copy it now: Tidings keeps only its hash. Requests with it are the agent “${made.name}”.`);
    } catch (e) {
      setText(msg, messageOf(e));
    }
  }
  create.addEventListener("click", () => void make());
  name.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void make();
  });
  copy.addEventListener("click", async () => {
    setText(msg, (await copyText(fresh.value)) ? "Token copied." : "Could not copy; select the token and copy it.");
  });

  async function revoke(token: string): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("revoke_agent_token", { name: token }));
      freshRow.hidden = true;
      fresh.value = "";
      setText(msg, `“${token}”'s token no longer works; its streams ended.`);
    } catch (e) {
      setText(msg, messageOf(e));
    }
  }

  const el = h(
    "div",
    { class: "agent-tokens" },
    h("p", { class: "msg", text: "Tokens for agents: each is an agent of its own in Clients, with its own grant." }),
    list,
    h("div", { class: "row" }, h("label", { attrs: { for: nameId }, text: "New token for" }), name, create),
    freshRow,
    msg,
  );

  return {
    el,
    update(s: SettingsView) {
      replaceChildren(
        list,
        ...s.agentTokens.map((t) => {
          const button = h("button", {
            class: "btn",
            text: "Revoke",
            attrs: { type: "button", "aria-label": `Revoke the token of ${t.name}` },
            on: { click: () => void revoke(t.name) },
          });
          return h("li", { attrs: { "data-token": t.name } },
            h("span", { class: "entry", text: t.name }),
            h("span", { class: "msg quiet", text: `made ${timeLabel(t.createdMs)}` }),
            button);
        }),
      );
    },
  };
}
