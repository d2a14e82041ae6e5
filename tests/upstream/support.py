"""Serving upstream MCP servers through the proxy in tests: definitions with short timeouts, a
proxy whose upstream servers are connected for the length of a block, and calls that keep a
result exactly as it came (the SDK client's ``call_tool`` checks it against the tool's
``outputSchema``; a pass-through must not, and neither may the test that proves it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.client import Client

from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.upstream.config import Restart, Scope, ServerDefinition, Timeouts, Transport
from compozy_mcp.upstream.supervisor import Upstreams

NOTES = "tests.upstream.servers.notes:build"
FLAKY = "tests.upstream.servers.flaky:build"
#: short enough that a test of a failure takes a moment, long enough for a loaded machine
FAST = Timeouts(startup=20.0, call=20.0, ping_interval=0.2, ping_timeout=5.0)
QUICK_RESTART = Restart(initial_delay=0.05, max_delay=0.4)


def extension(
    name: str = "notes",
    entry_point: str = NOTES,
    *,
    timeouts: Timeouts = FAST,
    restart: Restart = QUICK_RESTART,
) -> ServerDefinition:
    """An upstream server connected in-process (no process: the unit tier may use it)."""
    return ServerDefinition(
        name,
        Transport.EXTENSION,
        Scope.EXTENSION,
        entry_point=entry_point,
        timeouts=timeouts,
        restart=restart,
    )


@asynccontextmanager
async def serving(
    app: App,
    definitions: Sequence[ServerDefinition],
    *,
    scope: CallScope = OPERATOR,
    discovery: Discovery = Discovery.FULL,
) -> AsyncIterator[ProxyServer]:
    """A proxy over ``app`` with ``definitions`` connected (their first attempts settled)."""
    home = app.settings.home
    upstreams = Upstreams(definitions, home=home, env={}, publish_status=False)
    proxy = ProxyServer(app, scope=scope, upstreams=upstreams, discovery=discovery)
    async with upstreams.running():
        yield proxy


async def raw_call(
    client: Client, name: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    """``tools/call`` with the result kept as it came (no ``outputSchema`` check)."""
    params = types.CallToolRequestParams(name=name, arguments=arguments or {})
    return await client.session.send_request(
        types.CallToolRequest(params=params), types.CallToolResult
    )


async def own_listing(server: Any) -> list[types.Tool]:
    """What an upstream server lists when a client talks to it directly."""
    async with Client(server, mode="legacy", cache=None) as client:
        return list((await client.list_tools()).tools)
