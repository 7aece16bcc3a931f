// A scripted stand-in for a model API on 127.0.0.1, for driving real host CLIs in tests.
//
// It serves Anthropic's Messages API (POST /v1/messages, what Claude Code calls), OpenAI's
// Responses API (POST /v1/responses, what Codex calls with `wire_api = "responses"`) and the
// Gemini API (POST /v1beta/models/M:streamGenerateContent, what Gemini CLI calls under
// GOOGLE_GEMINI_BASE_URL), streaming (SSE) or not, and plays one fixed script in every
// conversation that offers the Tidings tools:
//
//   1. call tidings_check (the first call returns nothing and starts from now);
//   2. call tidings_wait, which returns what arrived since;
//   3. answer with a final text.
//
// A tool the host keeps behind its tool search (Claude Code's deferred MCP tools) is looked up
// first with the search tool the host offers, query "mail". A request whose tools hold no
// Tidings tool gets the text NO_TIDINGS_TOOL, a sentinel the test can wait for. The step is
// read from the conversation the host sends (which calls it holds already), so side requests
// (titles, quota checks) never advance it; they get a short text.
//
// Nothing else: no model behind it, no reading of the tool results. Every request is appended
// to the record file as one JSON line {method, path, step, headers, body} (step: "anthropic
// check", "responses wait", "gemini final", …, or null), and every scripted answer is printed as
// `SERVED <api> <step>` on stdout, after `LISTENING <port>`.
//
// Usage: node scripted_model_api.mjs --record FILE [--args JSON] [--wait-timeout-s N]
//   --args            arguments for both tools, e.g. '{"domains":["example.com"]}'
//   --wait-timeout-s  tidings_wait's timeout_s (default 30)

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({
  options: {
    record: { type: "string" },
    args: { type: "string", default: "{}" },
    "wait-timeout-s": { type: "string", default: "30" },
  },
});
if (!opts.record) {
  console.error("usage: scripted_model_api.mjs --record FILE [--args JSON] [--wait-timeout-s N]");
  process.exit(2);
}
const toolArgs = JSON.parse(opts.args);
const waitArgs = { ...toolArgs, timeout_s: Number(opts["wait-timeout-s"]) };

const FINAL = "DONE: the script is over.";
const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const NO_TOOL = "NO_TIDINGS_TOOL";
const SIDE = "OK";

let ids = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++ids}`;

// The next step, from the tools offered and the calls already in the conversation (their
// names, in order). `tools` and `called` are names as the host spells them.
function nextStep(tools, called, searchTool) {
  const check = tools.find((n) => n.endsWith("tidings_check"));
  const wait = tools.find((n) => n.endsWith("tidings_wait"));
  const calledCheck = called.some((n) => n.endsWith("tidings_check"));
  const calledWait = called.some((n) => n.endsWith("tidings_wait"));
  if (calledWait) return { step: "final", text: FINAL };
  if (calledCheck && wait) return { step: "wait", tool: wait, input: waitArgs };
  if (!calledCheck && check) return { step: "check", tool: check, input: toolArgs };
  if (searchTool && !called.includes(searchTool.name)) {
    return { step: "search", tool: searchTool.name, input: searchTool.input };
  }
  return { step: "no-tool", text: NO_TOOL };
}

// ---- Anthropic Messages API -------------------------------------------------------------

// Claude Code sends MCP tools it defers with `defer_loading: true` and offers a search tool
// that loads them; a deferred tool is callable only once a search found it, so it counts
// as offered only after the search ran.
function anthropicPlan(body) {
  const tools = body.tools ?? [];
  const messages = body.messages ?? [];
  const called = [];
  const found = new Set();
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (m.role === "assistant" && block.type === "tool_use") called.push(block.name);
      if (m.role === "user" && block.type === "tool_result" && Array.isArray(block.content)) {
        for (const c of block.content) {
          if (c.type === "tool_reference" && c.tool_name) found.add(c.tool_name);
        }
      }
    }
  }
  const offered = tools
    .filter((t) => t.name && (!t.defer_loading || found.has(t.name)))
    .map((t) => t.name);
  const search = tools.find(
    (t) => t.name && /tool.?search/i.test(t.name) && t.input_schema?.properties?.query,
  );
  const searchTool = search ? { name: search.name, input: { query: "mail" } } : null;
  if (tools.length === 0) return { step: "side", text: SIDE };
  return nextStep(offered, called, searchTool);
}

function anthropicMessage(body, plan) {
  const content = plan.tool
    ? [{ type: "tool_use", id: nextId("toolu"), name: plan.tool, input: plan.input }]
    : [{ type: "text", text: plan.text }];
  return {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model: body.model ?? "scripted",
    content,
    stop_reason: plan.tool ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function anthropicStream(res, message) {
  const send = (event, data) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  res.writeHead(200, SSE);
  send("message_start", { message: { ...message, content: [], stop_reason: null } });
  message.content.forEach((block, index) => {
    if (block.type === "tool_use") {
      send("content_block_start", { index, content_block: { ...block, input: {} } });
      send("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    } else {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    }
    send("content_block_stop", { index });
  });
  send("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: 1 },
  });
  send("message_stop", {});
  res.end();
}

// ---- OpenAI Responses API ---------------------------------------------------------------

// Codex sends the conversation as `input` items. It offers an MCP server's tools inside one
// tool of type `namespace` (`mcp__tidings`) and expects calls to name both, as
// {namespace, name}; here a tool is known by the two joined.
function responsesPlan(body) {
  const qualified = (ns, name) => (ns ? `${ns}.${name}` : name);
  const offered = new Map();
  for (const t of body.tools ?? []) {
    if (t.type === "namespace" && Array.isArray(t.tools)) {
      for (const inner of t.tools) {
        offered.set(qualified(t.name, inner.name), { namespace: t.name, name: inner.name });
      }
    } else if (t.name) {
      offered.set(t.name, { name: t.name });
    }
  }
  const called = (body.input ?? [])
    .filter((i) => i.type === "function_call")
    .map((i) => qualified(i.namespace, i.name));
  if (offered.size === 0) return { step: "side", text: SIDE };
  const plan = nextStep([...offered.keys()], called, null);
  if (plan.tool) plan.call = offered.get(plan.tool);
  return plan;
}

function responsesOutput(plan) {
  if (plan.tool) {
    return {
      type: "function_call",
      id: nextId("fc"),
      call_id: nextId("call"),
      ...plan.call,
      arguments: JSON.stringify(plan.input),
      status: "completed",
    };
  }
  return {
    type: "message",
    id: nextId("msg"),
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: plan.text, annotations: [] }],
  };
}

function responsesBody(body, item) {
  return {
    id: nextId("resp"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model: body.model ?? "scripted",
    output: [item],
    usage: {
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2,
    },
  };
}

function responsesStream(res, response) {
  let seq = 0;
  const send = (type, data) =>
    res.write(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`,
    );
  res.writeHead(200, SSE);
  send("response.created", { response: { ...response, status: "in_progress", output: [] } });
  response.output.forEach((item, output_index) => {
    send("response.output_item.added", { output_index, item });
    if (item.type === "message") {
      const text = item.content[0].text;
      const at = { output_index, item_id: item.id, content_index: 0 };
      send("response.output_text.delta", { ...at, delta: text });
      send("response.output_text.done", { ...at, text });
    }
    send("response.output_item.done", { output_index, item });
  });
  send("response.completed", { response });
  res.end();
}

// ---- Gemini API --------------------------------------------------------------------------

// Gemini CLI sends the conversation as `contents` (roles user and model) and its tools as
// `functionDeclarations`.
function geminiPlan(body) {
  const offered = (body.tools ?? [])
    .flatMap((t) => t.functionDeclarations ?? [])
    .map((d) => d.name);
  const called = (body.contents ?? [])
    .filter((c) => c.role === "model")
    .flatMap((c) => c.parts ?? [])
    .filter((p) => p.functionCall)
    .map((p) => p.functionCall.name);
  if (offered.length === 0) return { step: "side", text: SIDE };
  return nextStep(offered, called, null);
}

function geminiResponse(plan) {
  const part = plan.tool
    ? { functionCall: { name: plan.tool, args: plan.input } }
    : { text: plan.text };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
  };
}

// ---- the server -------------------------------------------------------------------------

function json(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = { unparsed: text };
    }
    const path = req.url.split("?")[0];
    // The scripted step this request gets (null: not a model turn), and the reply.
    let step = null;
    let reply;
    if (req.method === "POST" && path.endsWith("/messages/count_tokens")) {
      reply = () => json(res, 200, { input_tokens: 1 });
    } else if (req.method === "POST" && path.endsWith("/messages")) {
      const plan = anthropicPlan(body ?? {});
      const message = anthropicMessage(body ?? {}, plan);
      step = `anthropic ${plan.step}`;
      reply = () => (body?.stream ? anthropicStream(res, message) : json(res, 200, message));
    } else if (req.method === "POST" && path.endsWith("/responses")) {
      const plan = responsesPlan(body ?? {});
      const response = responsesBody(body ?? {}, responsesOutput(plan));
      step = `responses ${plan.step}`;
      reply = () =>
        body?.stream === false ? json(res, 200, response) : responsesStream(res, response);
    } else if (req.method === "POST" && path.endsWith(":countTokens")) {
      reply = () => json(res, 200, { totalTokens: 1 });
    } else if (req.method === "POST" && /:(stream)?[gG]enerateContent$/.test(path)) {
      const plan = geminiPlan(body ?? {});
      const response = geminiResponse(plan);
      step = `gemini ${plan.step}`;
      reply = path.endsWith(":streamGenerateContent")
        ? () => {
            res.writeHead(200, SSE);
            res.end(`data: ${JSON.stringify(response)}\r\n\r\n`);
          }
        : () => json(res, 200, response);
    } else if (req.method === "GET" && path.endsWith("/models")) {
      reply = () => json(res, 200, { object: "list", data: [], models: [] });
    } else {
      // Anything else is not part of the script: say so, in the shape of an API error.
      const message = `scripted model API: no ${req.method} ${path}`;
      reply = () => json(res, 404, { type: "error", error: { type: "not_found_error", message } });
    }
    // Recorded and announced before the reply, so whoever reads them sees the step before
    // the host can act on it.
    appendFileSync(
      opts.record,
      `${JSON.stringify({ method: req.method, path, step, headers: req.headers, body })}\n`,
    );
    if (step) console.log(`SERVED ${step}`);
    reply();
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING ${server.address().port}`);
});
