"""The Host API as its clients see it: in-process (:class:`~.local.LocalHost`) or over HTTP
(:class:`~.remote.RemoteHost`).

Every operation is declared once in :mod:`.operations`; a caller runs one with
``await host.call(SESSION_STATUS, {"session_id": ...})`` and gets the JSON payload its HTTP
route sends (typed by the declaration), or a :class:`~compozy_mcp.errors.CompozyError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol, Self

from compozy_mcp.hostapi.operation import Operation, R

Payload = dict[str, Any]


class HostClient(Protocol):
    async def call(
        self, operation: Operation[R], args: Mapping[str, Any], *, session: str | None = None
    ) -> R:
        """Run ``operation`` with ``args`` (its input fields, the path's ids included);
        ``session``: as that managed session (only operations that take the session header
        use it)."""
        ...

    def follow_events(self, session_id: str, cursor: int) -> AsyncIterator[Payload | None]:
        """The session's stored events after ``cursor``, then each new one as it is stored
        (woken by the runtime, never polled); ``None`` now and then while nothing happens (a
        stream's chance to keep its connection alive). Ends when the caller stops."""
        ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self:
        """Its use begins: an in-process host that owns its app runs the app's tasks until
        the block ends (:meth:`compozy_mcp.assembly.App.running`); leaving closes it."""
        ...

    async def __aexit__(self, *exc: object) -> None: ...


class McpServerListing(Protocol):
    """What a process that connects upstream MCP servers reports about them."""

    def listing(self) -> Payload: ...
