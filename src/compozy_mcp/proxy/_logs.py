"""MCP logging: the ``logging`` capability, ``logging/setLevel``, and the daemon's log lines
(:mod:`compozy_mcp.logfeed`) as ``notifications/message``.

- The 2025-11-25 era: a client that sets a level receives, on its connection, every line at or
  above it from then on (``logging/setLevel`` again changes the level).
- The 2026-07-28 era has no ``logging/setLevel``: a request that opts in with the reserved
  ``_meta`` key ``io.modelcontextprotocol/logLevel`` receives the lines logged while it runs, on
  its own stream.

The operator's connection receives every line; a managed session's only its own (its agent's
stderr). Sending never blocks the code that logs: each line is sent by a task of its own, and a
connection that cannot be written to any more stops following.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server import ServerRequestContext

from compozy_mcp.calls import CallScope
from compozy_mcp.logfeed import FEED, LEVELS, LogFeed, LogLine

LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"


def _connection(ctx: ServerRequestContext[Any]) -> object:
    """What identifies the client's connection: the SDK builds a ``ServerSession`` per request
    around the one connection (which it does not expose), so a level set again replaces the
    connection's follower instead of adding one."""
    return getattr(ctx.session, "_connection", ctx.session)


class McpLogs:
    def __init__(self, scope_of: Callable[[ServerRequestContext[Any]], CallScope]) -> None:
        self._scope_of = scope_of
        self._feed: LogFeed = FEED
        self._sending: set[asyncio.Task[None]] = set()

    def _deliver(
        self, key: object, session: Any, related_request_id: types.RequestId | None
    ) -> Callable[[LogLine], None]:
        loop = asyncio.get_running_loop()

        async def send(line: LogLine) -> None:
            note = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level=line.level,  # type: ignore[arg-type]  # one of LEVELS
                    logger=line.logger,
                    data=line.message,
                )
            )
            try:
                await session.send_notification(note, related_request_id=related_request_id)
            except Exception:  # the client went away: it follows no more
                self._feed.unfollow(key)

        def spawn(line: LogLine) -> None:
            task = loop.create_task(send(line))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

        def deliver(line: LogLine) -> None:
            if loop.is_closed():
                self._feed.unfollow(key)
                return
            loop.call_soon_threadsafe(spawn, line)  # a line may be logged on a worker thread

        return deliver

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel``: this connection receives the lines at ``params.level`` and
        above from now on."""
        key = _connection(ctx)
        scope = self._scope_of(ctx)
        self._feed.follow(
            key, self._deliver(key, ctx.session, None), params.level, scope.session_id
        )
        return types.EmptyResult()

    @staticmethod
    def opted_in(ctx: ServerRequestContext[Any]) -> bool:
        """Whether a 2026-07-28 request asked for the lines logged while it runs (a call that
        did not need not enter :meth:`for_request`)."""
        return (ctx.meta or {}).get(LOG_LEVEL_META_KEY) in LEVELS and ctx.request_id is not None

    @asynccontextmanager
    async def for_request(self, ctx: ServerRequestContext[Any]) -> AsyncIterator[None]:
        """While a 2026-07-28 request that opted in runs, the lines logged meanwhile ride its
        stream (nothing for a request that did not opt in)."""
        if not self.opted_in(ctx):
            yield
            return
        level = (ctx.meta or {}).get(LOG_LEVEL_META_KEY)
        key = (_connection(ctx), ctx.request_id)
        scope = self._scope_of(ctx)
        deliver = self._deliver(key, ctx.session, ctx.request_id)
        self._feed.follow(key, deliver, str(level), scope.session_id)
        try:
            yield
        finally:
            self._feed.unfollow(key)
            # the lines logged during the request go out before its response
            await asyncio.sleep(0)
            pending = [task for task in self._sending if not task.done()]
            if pending:
                await asyncio.wait(pending, timeout=1.0)

    async def close(self) -> None:
        """Wait for the lines being sent (a server that stops)."""
        if self._sending:
            await asyncio.wait(list(self._sending), timeout=1.0)
