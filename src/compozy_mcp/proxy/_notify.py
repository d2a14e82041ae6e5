"""Telling clients ``notifications/tools/list_changed``, in both protocol eras.

- 2025-11-25 (handshake) clients get it on their connection's standalone channel: the proxy
  keeps (weakly) the connection of every client that has listed or called tools;
- 2026-07-28 clients get it on the ``subscriptions/listen`` streams they open: the server
  serves ``subscriptions/listen`` from a bus that this publishes to.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)


class ToolsChanged:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()

    def remember(self, ctx: ServerRequestContext[Any]) -> None:
        """Note the connection of a handshake-era client that made a request."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        # The request's session holds its connection; the SDK offers no public way to it.
        connection = getattr(ctx.session, "_connection", None)
        if isinstance(connection, Connection):
            self._connections.add(connection)

    async def announce(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for connection in list(self._connections):
            await connection.send_tool_list_changed()  # never raises: best effort
