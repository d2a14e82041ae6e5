"""How a daemon hears that another daemon left it work or stored events: the engine-specific
part of several daemons on one store, behind one small interface.

SQLite has no notifications between processes: :class:`PollingWakeup` looks again after a short
sleep (a read of a few indexed rows). A PostgreSQL store provides a wakeup that returns as soon
as a ``NOTIFY`` arrives (the writer of a queued turn, a signal or an event notifies), with the
same poll as a fallback after a lost connection.
"""

from __future__ import annotations

from typing import Protocol

import anyio

#: how long a daemon on SQLite waits before it looks at the store again
POLL_SECONDS = 0.25


class Wakeup(Protocol):
    async def wait(self) -> None:
        """Return once the store may hold news for this daemon (or after the poll interval)."""


class PollingWakeup:
    def __init__(self, seconds: float = POLL_SECONDS) -> None:
        self.seconds = seconds

    async def wait(self) -> None:
        await anyio.sleep(self.seconds)
