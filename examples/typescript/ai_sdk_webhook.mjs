// Tidings' new mail delivered by webhook to a client built on the AI SDK's MCP client
// (@ai-sdk/mcp 2.0), whose events API subscribes with webhook delivery only.
//
// A small receiver listens on 127.0.0.1 (node:http), then `client.experimental_events
// .subscribe` asks Tidings, through the stdio shim, to POST each `mail.received` to
// http://127.0.0.1:PORT/hooks/tidings. The SDK makes the signing secret (`whsec_` and 32
// random bytes) and keeps it in the store we hand it; Tidings signs every POST with it
// (Standard Webhooks). Before the first event Tidings POSTs a signed challenge, which the
// receiver must echo, so the subscribe succeeds only once the receiver is reachable.
//
// Every POST is checked twice: by the `standardwebhooks` package (the reference
// implementation: a bad signature gets 401 and `REFUSED bad signature` on stderr), then by
// the SDK's own receiver (`experimental_createMCPEventWebhook`), which also checks the
// routing key, the subscription id, the envelope, and answers the challenge.
//
// The destination must be on the user's list first: `tidings webhooks allow
// http://127.0.0.1:8787` (or the window's Webhooks section); otherwise the daemon refuses and
// this prints `ERROR <code> <message>` and exits 1.
//
// It prints `READY <callback url>` once subscribed, then `EVENT mail.received <eventId>
// from=<domain>` per event (never a subject, nor an address beyond its domain: agents should
// treat those as untrusted data), and after `--count` events unsubscribes and exits 0.
//
//     npm ci && node ai_sdk_webhook.mjs --shim /path/to/tidings-mcp --port 8787 \
//         --domains example.com --count 1

import http from "node:http";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";
import { createMCPClient, experimental_createMCPEventWebhook } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const HOOK_PATH = "/hooks/tidings";
// The SDK adds this query parameter to the callback URL: it names the stored subscription.
const KEY_PARAM = "mcp_event_subscription";
// Tidings never sends a body larger than this; neither does any SEP server.
const MAX_BODY = 256 * 1024;

const { values: args } = parseArgs({
  options: {
    shim: { type: "string", default: "tidings-mcp" },
    socket: { type: "string" },
    port: { type: "string", default: "0" },
    from: { type: "string" },
    domains: { type: "string" },
    count: { type: "string", default: "1" },
  },
});

const filters = {};
if (args.from) filters.from = args.from.split(",");
if (args.domains) filters.domains = args.domains.split(",");
const want = Number.parseInt(args.count, 10);
const port = Number.parseInt(args.port, 10);
if (!(want >= 1) || !(port >= 0 && port <= 65535)) {
  console.error("--count must be at least 1 and --port a port number (0: any)");
  process.exit(2);
}

// The SDK's subscription store. It holds the signing secret, so a real agent keeps it in
// private durable storage; one process's memory is enough for an example.
const saved = new Map();
const store = {
  async get(key) {
    return saved.get(key);
  },
  async getById(id) {
    return [...saved.values()].find((s) => s.id === id);
  },
  async set(subscription) {
    saved.set(subscription.key, structuredClone(subscription));
  },
  async update(key, patch) {
    const s = saved.get(key);
    if (s) Object.assign(s, structuredClone(patch));
  },
  async delete(key) {
    saved.delete(key);
  },
};

// Deliveries may repeat (a retry after a lost answer): count each eventId once.
const seen = new Set();
let finishing = false;

const sdkReceiver = experimental_createMCPEventWebhook({
  store,
  async onEvent({ event }) {
    if (seen.has(event.eventId)) return;
    seen.add(event.eventId);
    const address = event.data?.from?.address;
    const at = typeof address === "string" ? address.lastIndexOf("@") : -1;
    const domain = at >= 0 ? address.slice(at + 1).toLowerCase() : "?";
    console.log(`EVENT ${event.name} ${event.eventId} from=${domain}`);
  },
  async onTerminated({ termination }) {
    const { code, message } = termination.error;
    console.log(`TERMINATED ${code} ${message}`);
    setImmediate(() => shutDown(1));
  },
  onError(error) {
    console.error(`receiver: ${error?.message ?? error}`);
  },
});

async function readBody(req) {
  const chunks = [];
  let length = 0;
  for await (const chunk of req) {
    length += chunk.length;
    if (length > MAX_BODY) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function handle(req, res) {
  const url = new URL(req.url, `http://${req.headers.host ?? "127.0.0.1"}`);
  if (url.pathname !== HOOK_PATH) return res.writeHead(404).end();
  if (req.method !== "POST") return res.writeHead(405, { Allow: "POST" }).end();
  const body = await readBody(req);
  if (body === null) return res.writeHead(413).end();

  // The reference check, before anything else reads the body.
  const subscription = await store.get(url.searchParams.get(KEY_PARAM) ?? "");
  if (!subscription) {
    console.error("REFUSED unknown subscription");
    return res.writeHead(401).end();
  }
  try {
    new Webhook(subscription.delivery.secret).verify(body, req.headers);
  } catch {
    console.error("REFUSED bad signature");
    return res.writeHead(401).end();
  }

  // Then the SDK's receiver, on a Web Request made of the same bytes.
  const answer = await sdkReceiver(
    new Request(url, { method: "POST", headers: req.headers, body }),
  );
  const text = Buffer.from(await answer.arrayBuffer());
  if (answer.status >= 300) {
    // Only the status: the body holds a sender and a subject.
    console.error(`REFUSED by the SDK's receiver: HTTP ${answer.status}`);
  }
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  // Once the last event's answer is out, so the daemon counts it delivered.
  res.end(text, () => {
    if (seen.size >= want && !finishing) {
      finishing = true;
      finish();
    }
  });
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error) => {
    console.error(`receiver: ${error.message}`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
await new Promise((resolve) => {
  server.once("error", (error) => {
    console.log(`ERROR cannot listen on 127.0.0.1:${port}: ${error.message}`);
    process.exit(1);
  });
  server.listen(port, "127.0.0.1", resolve);
});
const callback = `http://127.0.0.1:${server.address().port}${HOOK_PATH}`;

let client;
let subscriptionId;

async function shutDown(code) {
  server.close();
  server.closeAllConnections();
  await client?.close().catch(() => {});
  process.exit(code);
}

// The daemon's refusal (its code and message, which says what to do), or the SDK's own.
function printError(error) {
  const code = error.code == null ? "" : `${error.code} `;
  console.log(`ERROR ${code}${error.message}`);
}

async function finish() {
  try {
    await client.experimental_events.unsubscribe({ id: subscriptionId });
  } catch (error) {
    printError(error);
    return shutDown(1);
  }
  return shutDown(0);
}

try {
  // Like a host, the transport passes the shim only a few environment variables, so a
  // socket other than the default goes on the command line.
  client = await createMCPClient({
    transport: new Experimental_StdioMCPTransport({
      command: args.shim,
      args: args.socket ? ["--socket", args.socket] : [],
    }),
    experimental_events: { store },
  });
  const result = await client.experimental_events.subscribe({
    name: "mail.received",
    arguments: filters,
    // Plain http is for a loopback receiver only; the SDK insists on https elsewhere.
    delivery: { mode: "webhook", url: callback, allowInsecureLocalhost: true },
  });
  subscriptionId = result.id;
  const { delivery } = await store.getById(result.id);
  console.log(`READY ${delivery.url}`);
} catch (error) {
  printError(error);
  await shutDown(1);
}
