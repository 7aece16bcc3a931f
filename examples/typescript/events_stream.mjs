// Tidings' Events push from a client built on the TypeScript MCP client v2
// (@modelcontextprotocol/client 2.4), which speaks protocol 2026-07-28.
//
// The client has no Events API (SEP-3415) yet, so this shows the glue an agent needs, all
// through public API:
//
// - `versionNegotiation: { mode: 'auto' }`: probe with `server/discover`, take 2026-07-28;
// - advertise the `io.modelcontextprotocol/events` extension in the client's capabilities;
// - a notification handler (with a params schema) for `notifications/events/active` and
//   `notifications/events/event`, which the client does not know;
// - `events/stream` sent with `client.request` and a result schema, as a custom method. The
//   client adds the per-request `_meta` envelope 2026-07-28 requires. The request stays open
//   while the stream lives; each event arrives as a notification tagged with its id.
//
// It prints `READY` once it is listening, then one `EVENT <name> <eventId>` line per event
// (never a subject or an address: agents should treat those as untrusted data), and exits
// after `--count` events.
//
//     npm ci && node events_stream.mjs --shim /path/to/tidings-mcp --domains example.com

import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { z } from "zod";

const EVENTS_EXTENSION = "io.modelcontextprotocol/events";
const PROTOCOL = "2026-07-28";

const { values: args } = parseArgs({
  options: {
    shim: { type: "string", default: "tidings-mcp" },
    socket: { type: "string" },
    type: { type: "string", default: "mail.received" },
    from: { type: "string" },
    domains: { type: "string" },
    count: { type: "string", default: "1" },
  },
});

const filters = {};
if (args.from) filters.from = args.from.split(",");
if (args.domains) filters.domains = args.domains.split(",");
const want = Number.parseInt(args.count, 10);

// `notifications/events/active`: the stream is open, from `cursor`.
const ActiveParams = z.looseObject({
  cursor: z.string().nullable().optional(),
  truncated: z.boolean().optional(),
});
// `notifications/events/event`: one occurrence (`data` holds the envelope).
const EventParams = z.looseObject({
  eventId: z.string(),
  name: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
  cursor: z.string().nullable().optional(),
});
// The `events/stream` result, sent only if the server ends the stream.
const StreamResult = z.looseObject({});

// Like a host, the SDK passes the shim only a few environment variables (HOME, PATH, …), not
// TIDINGS_SOCKET: a socket other than the default goes on the command line.
const transport = new StdioClientTransport({
  command: args.shim,
  args: args.socket ? ["--socket", args.socket] : [],
  stderr: "inherit",
});
// `auto` rather than a pin: it is what an agent that also meets 2025-era servers would use,
// and the check below still fails loudly if it fell back to `initialize`.
const client = new Client(
  { name: "tidings-typescript-events-example", version: "0.1.0" },
  {
    capabilities: { extensions: { [EVENTS_EXTENSION]: {} } },
    versionNegotiation: { mode: "auto" },
  },
);

// The handlers print as the notifications arrive, so `READY` always comes before any event.
let ready = false;
client.setNotificationHandler("notifications/events/active", { params: ActiveParams }, () => {
  if (!ready) console.log("READY");
  ready = true;
});
let seen = 0;
let done;
const finished = new Promise((resolve) => {
  done = resolve;
});
client.setNotificationHandler("notifications/events/event", { params: EventParams }, (event) => {
  if (seen >= want) return;
  console.log(`EVENT ${event.name} ${event.eventId}`);
  seen += 1;
  if (seen === want) done();
});

try {
  await client.connect(transport);
} catch (error) {
  // The shim has said why on stderr (no daemon, wrong socket); one line here, no stack.
  console.error(`could not start a session through ${args.shim}: ${error.message}`);
  process.exit(1);
}
const version = client.getNegotiatedProtocolVersion();
if (version !== PROTOCOL) {
  console.error(`expected protocol ${PROTOCOL}, negotiated ${version}`);
  process.exit(1);
}

// The stream lives as long as this request, and the abort signal cancels it (the client then
// sends `notifications/cancelled`). The client's default 60 s request timeout would end it
// ("Request timed out"), so the timeout is node's longest timer, about 24.8 days; an agent
// that runs longer opens a new stream from the last event's `cursor`.
const stop = new AbortController();
const stream = client
  .request(
    { method: "events/stream", params: { name: args.type, arguments: filters, cursor: null } },
    StreamResult,
    { signal: stop.signal, timeout: 2 ** 31 - 1 },
  )
  .then(
    () => new Error("the server ended the stream"),
    (error) => error,
  );

const ended = await Promise.race([finished.then(() => undefined), stream]);
if (ended) {
  console.error(`events/stream failed: ${ended.message}`);
  process.exit(1);
}
stop.abort();
await client.close();
