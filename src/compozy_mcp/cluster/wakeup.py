"""How a daemon hears that another daemon left it work or stored events: the engine-specific
part of several daemons on one store, behind one small interface.

SQLite has no notifications between processes: :class:`PollingWakeup` looks again after a short
sleep (a read of a few indexed rows). A PostgreSQL store provides a wakeup that returns as soon
as a ``NOTIFY`` arrives (the writer of a queued turn, a signal or an event notifies), with the
same poll as a fallback after a lost connection.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import anyio

#: how long a daemon on SQLite waits before it looks at the store again
POLL_SECONDS = 0.25


class Wakeup(Protocol):
    async def wait(self) -> None:
        """Return once the store may hold news for this daemon (or after the poll interval)."""

    async def close(self) -> None:
        """Let go of what it holds (the daemon stops)."""


class PollingWakeup:
    def __init__(self, seconds: float = POLL_SECONDS) -> None:
        self.seconds = seconds

    async def wait(self) -> None:
        await anyio.sleep(self.seconds)

    async def close(self) -> None:
        return None


class NotifyWakeup:
    """A PostgreSQL store's wakeup: ``LISTEN`` on the store's news channel on a connection of
    its own; :meth:`wait` returns at the first ``NOTIFY`` (a queued turn, a signal or events
    stored by another daemon: :attr:`~compozy_mcp.store.sql.Dialect.news`), or after the poll
    interval when none comes, and after a lost connection it polls until it listens again."""

    def __init__(self, url: str, seconds: float = POLL_SECONDS) -> None:
        self._url = url
        self.seconds = seconds
        self._conn: Any = None

    async def listen(self) -> Any:
        """The connection that listens, opened (and ``LISTEN`` sent) unless it is already."""
        if self._conn is None or self._conn.closed:
            import psycopg

            from compozy_mcp.store.sql import NEWS_CHANNEL

            conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
            await conn.execute(f"LISTEN {NEWS_CHANNEL}")
            self._conn = conn
        return self._conn

    async def wait(self) -> None:
        try:
            conn = await self.listen()
            async for _ in conn.notifies(timeout=self.seconds, stop_after=1):
                break
        except Exception:  # the server went away: poll, listen again next time
            await self.close()
            await anyio.sleep(self.seconds)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()


def wakeup_for(store: object) -> Wakeup:
    """The wakeup a daemon on ``store`` waits on: NOTIFY on a PostgreSQL store, a poll on
    SQLite's."""
    url = getattr(store, "url", None)
    if isinstance(url, str) and url.startswith(("postgresql://", "postgres://")):
        return NotifyWakeup(url)
    return PollingWakeup()
