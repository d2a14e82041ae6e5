"""The client of one MCP request, asked on that request's own stream: how a question of an
upstream server (sampling, elicitation) reaches the person or model behind the call that is
waiting on it (:class:`compozy_mcp.upstream.asking.Asker`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from mcp import types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

R = TypeVar("R")


class RequestAsker:
    """Asks the client of the request ``ctx`` serves; ``asked`` once a question went out (the
    answer is then an event stream)."""

    def __init__(self, ctx: ServerRequestContext[Any], roots: Sequence[Path] = ()) -> None:
        self._ctx = ctx
        self.capabilities = ctx.session.client_capabilities
        self.roots = tuple(roots)
        self.asked = False

    @property
    def identity(self) -> object:
        # The client's connection (the SDK offers no public way to it; ToolsChanged reads it
        # too): two calls of one client are one asker.
        return getattr(self._ctx.session, "_connection", None) or self._ctx.session

    async def ask(self, request: types.ServerRequest, result: type[R]) -> R:
        session = self._ctx.session
        if not session.can_send_request:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="the client of this call cannot be asked while it waits (MCP "
                "2026-07-28 has no requests to the client; a JSON-only HTTP answer neither)",
            )
        self.asked = True
        metadata = ServerMessageMetadata(related_request_id=self._ctx.request_id)
        answer: R = await session.send_request(request, result, metadata=metadata)  # type: ignore[type-var]
        return answer
