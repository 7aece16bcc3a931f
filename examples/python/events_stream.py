"""Consume Tidings' events from an agent built on the official Python MCP SDK (`mcp` 2.3).

The SDK has no Events API (SEP-3415) yet, so this shows the glue an agent needs:

- on 2026-07-28 (`mode="auto"` negotiates it with Tidings): advertise the events extension,
  bind the `notifications/events/*` methods the SDK does not know (a `NotificationBinding`
  per method), and send `events/stream` as a raw request stamped with the session's
  per-request `_meta`. The request stays open while the stream lives; each event arrives as
  a notification tagged with the request id.
- on 2025-11-25 (`mode="legacy"`, what most hosts speak): call the pull tools
  `tidings_check` (from now) and `tidings_wait` (the next events).

It prints `READY` once it is listening, then one `EVENT <name> <eventId>` line per event
(never a subject or an address: agents should treat those as untrusted data), and exits
after `--count` events.

    python -m venv .venv && .venv/bin/pip install 'mcp==2.3.0'
    .venv/bin/python events_stream.py --shim /path/to/tidings-mcp --domains example.com
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client import ClientExtension, NotificationBinding
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict

EVENTS_EXTENSION = "io.modelcontextprotocol/events"


class EventParams(BaseModel):
    """`notifications/events/event`: one occurrence (`data` holds the envelope)."""

    model_config = ConfigDict(extra="allow")
    eventId: str
    name: str
    timestamp: str
    data: dict[str, Any]
    cursor: str | None = None


class ActiveParams(BaseModel):
    """`notifications/events/active`: the stream is open, from `cursor`."""

    model_config = ConfigDict(extra="allow")
    cursor: str | None = None
    truncated: bool = False


class EventsExtension(ClientExtension):
    """The notification binding: routes the Events notifications to two memory streams."""

    identifier = EVENTS_EXTENSION

    def __init__(self) -> None:
        self.active_send, self.active = anyio.create_memory_object_stream[ActiveParams](16)
        self.events_send, self.events = anyio.create_memory_object_stream[EventParams](1024)

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/events/active",
                params_type=ActiveParams,
                handler=self.active_send.send,
            ),
            NotificationBinding(
                method="notifications/events/event",
                params_type=EventParams,
                handler=self.events_send.send,
            ),
        ]


def say(line: str) -> None:
    print(line, flush=True)


async def stream_events(args: argparse.Namespace, server: StdioServerParameters) -> None:
    """2026-07-28: `events/stream`, with its notifications through the binding."""
    ext = EventsExtension()
    async with Client(server, mode="auto", extensions=[ext]) as client:
        if client.protocol_version != "2026-07-28":
            raise SystemExit(f"expected 2026-07-28, negotiated {client.protocol_version}")
        session = client.session
        request = {
            "method": "events/stream",
            "params": {"name": args.type, "arguments": filters(args), "cursor": None},
        }
        opts: dict[str, Any] = {}
        # The session's stamp adds the 2026-07-28 `_meta` every request must carry.
        session._stamp(request, opts)  # noqa: SLF001 (no public raw-request API in mcp 2.3)

        async def hold_stream() -> None:
            # Resolves only when the server ends the stream; cancelled when we are done.
            await session._dispatcher.send_raw_request(  # noqa: SLF001
                request["method"], request["params"], opts
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold_stream)
            await ext.active.receive()
            say("READY")
            for _ in range(args.count):
                event = await ext.events.receive()
                say(f"EVENT {event.name} {event.eventId}")
            tg.cancel_scope.cancel()


async def pull_tools(args: argparse.Namespace, server: StdioServerParameters) -> None:
    """2025-11-25: the pull tools. The per-connection cursor means no cursor is passed."""
    async with Client(server, mode="legacy") as client:
        try:
            tools = {tool.name for tool in (await client.list_tools()).tools}
        except MCPError as error:
            # A daemon without the pull tools answers tools/list with -32601.
            tools = set()
            if error.code != -32601:
                raise
        if "tidings_check" not in tools:
            say("SKIP the daemon lists no tidings_check tool")
            return
        await client.call_tool("tidings_check", {"events": [args.type], **filters(args)})
        say("READY")
        seen = 0
        while seen < args.count:
            result = await client.call_tool(
                "tidings_wait", {"events": [args.type], "timeout_s": 30, **filters(args)}
            )
            for event in (result.structuredContent or {}).get("events", []):
                say(f"EVENT {event['name']} {event['event_id']}")
                seen += 1


def filters(args: argparse.Namespace) -> dict[str, list[str]]:
    out = {}
    if args.from_:
        out["from"] = args.from_.split(",")
    if args.domains:
        out["domains"] = args.domains.split(",")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", default="tidings-mcp", help="the tidings-mcp binary")
    parser.add_argument("--socket", help="the daemon's socket (default: the shim's own)")
    parser.add_argument("--era", choices=["2026-07-28", "2025-11-25"], default="2026-07-28")
    parser.add_argument("--type", default="mail.received")
    parser.add_argument("--from", dest="from_", help="sender addresses, comma-separated")
    parser.add_argument("--domains", help="sender domains, comma-separated")
    parser.add_argument("--count", type=int, default=1, help="exit after this many events")
    args = parser.parse_args()
    server = StdioServerParameters(
        command=args.shim, args=["--socket", args.socket] if args.socket else []
    )
    run = stream_events if args.era == "2026-07-28" else pull_tools
    anyio.run(run, args, server)


if __name__ == "__main__":
    sys.exit(main())
