// Tidings' event types and tools from a client built on the AI SDK's MCP client
// (@ai-sdk/mcp 2.0), which reads only a top-level `capabilities.events` to decide whether a
// server offers Events; Tidings declares it beside the SEP-3415 extension key.
//
// It prints `EVENTS <type>,…` (or `ERROR <message>`), then `TOOLS <name>,…`, and exits.
// Subscribing through the AI SDK takes webhook delivery: ai_sdk_webhook.mjs does that.
//
//     npm ci && node ai_sdk_events.mjs --shim /path/to/tidings-mcp --socket SOCKET

import { parseArgs } from "node:util";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const { values: args } = parseArgs({
  options: {
    shim: { type: "string", default: "tidings-mcp" },
    socket: { type: "string" },
  },
});

// Like a host, the transport passes the shim only a few environment variables, so a socket
// other than the default goes on the command line.
const client = await createMCPClient({
  transport: new Experimental_StdioMCPTransport({
    command: args.shim,
    args: args.socket ? ["--socket", args.socket] : [],
  }),
});
try {
  const list = await client.experimental_events.list();
  console.log(`EVENTS ${list.events.map((e) => e.name).join(",")}`);
} catch (error) {
  console.log(`ERROR ${error.message}`);
}
const tools = await client.tools();
console.log(`TOOLS ${Object.keys(tools).join(",")}`);
await client.close();
