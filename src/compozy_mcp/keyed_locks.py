"""One lock per key (a session id, say), held by the tasks of one event loop: what must not
interleave for one session does not, and sessions never wait for each other. A key's lock is
forgotten when its last holder or waiter leaves, so the map stays as small as the work under
way."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio


class KeyedLocks:
    def __init__(self) -> None:
        #: each key's lock and how many tasks hold it or wait for it
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        # the bookkeeping is synchronous, on the loop: no other task runs between its steps
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = anyio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            _, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        """Keys held or waited for now."""
        return len(self._locks)
