"""Blocking work off the event loop: store writes (which may wait for another process's write
lock) run in worker threads, a bounded number at once, so that one busy store never stalls the
other clients of a daemon.

Reads stay on the loop: in WAL mode a reader never waits for a writer, and a thread hop costs
tens of microseconds that a read does not need to pay.
"""

from __future__ import annotations

import asyncio
import os
import stat
import weakref
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")

#: worker threads running store writes at once, per event loop (writes serialize on the
#: store's write lock anyway; a few threads keep a queue of them from holding many threads)
DEFAULT_WRITE_THREADS = 4


def watchable(fd: int) -> bool:
    """Whether an event loop can watch ``fd`` for input: a pipe, a socket or a terminal.
    epoll refuses anything else (a regular file, ``/dev/null``): reading it needs a thread."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class Offload:
    """Runs a blocking function in a worker thread and awaits it.

    A call that is cancelled while its thread runs still waits for the thread: a write either
    commits or rolls back whole, never half-way.
    """

    def __init__(self, threads: int = DEFAULT_WRITE_THREADS) -> None:
        self._threads = threads
        # anyio's limiters belong to one event loop; a CLI or test may use several over time
        self._limiters: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, anyio.CapacityLimiter
        ] = weakref.WeakKeyDictionary()

    def _limiter(self) -> anyio.CapacityLimiter:
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(self._threads)
        return limiter

    async def __call__(self, function: Callable[..., T], *args: object) -> T:
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter())
