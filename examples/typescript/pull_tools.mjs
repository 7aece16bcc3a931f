// Tidings' pull tools from a client built on the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32), the SDK Claude Code, Cursor and VS Code speak MCP with.
//
// The SDK negotiates 2025-11-25 and knows no Events extension, which is how today's hosts
// meet Tidings: through `tidings_check` (from now) and `tidings_wait` (the next events), with
// the connection's own cursor, so no cursor is passed.
//
// It prints `READY` once it is listening, then one `EVENT <name> <eventId>` line per event
// (never a subject or an address: agents should treat those as untrusted data), and exits
// after `--count` events.
//
//     npm ci && node pull_tools.mjs --shim /path/to/tidings-mcp --domains example.com

import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

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

// Like a host, the SDK passes the shim only a few environment variables (HOME, PATH, …), not
// TIDINGS_SOCKET: a socket other than the default goes on the command line.
const transport = new StdioClientTransport({
  command: args.shim,
  args: args.socket ? ["--socket", args.socket] : [],
  stderr: "inherit",
});
const client = new Client({ name: "tidings-typescript-example", version: "0.1.0" });
try {
  await client.connect(transport);
} catch (error) {
  // The shim has said why on stderr (no daemon, wrong socket); one line here, no stack.
  console.error(`could not start a session through ${args.shim}: ${error.message}`);
  process.exit(1);
}

const { tools } = await client.listTools();
if (!tools.some((tool) => tool.name === "tidings_check")) {
  console.log("SKIP the daemon lists no tidings_check tool");
  await client.close();
  process.exit(0);
}

await client.callTool({ name: "tidings_check", arguments: { events: [args.type], ...filters } });
console.log("READY");
let seen = 0;
while (seen < want) {
  // tidings_wait holds the call up to timeout_s; the SDK's own request timeout must be longer.
  const result = await client.callTool(
    { name: "tidings_wait", arguments: { events: [args.type], timeout_s: 30, ...filters } },
    undefined,
    { timeout: 60_000 },
  );
  if (result.isError) {
    console.error(`tidings_wait failed: ${JSON.stringify(result.content)}`);
    process.exit(1);
  }
  for (const event of result.structuredContent?.events ?? []) {
    console.log(`EVENT ${event.name} ${event.event_id}`);
    seen += 1;
  }
}
await client.close();
