"""Work that outlives the call that starts it (an agent's turn runner, a Loop run, the start of
an agent for a prompt that did not wait), run in one anyio task group per app.

The group belongs to the app's life in its process (:meth:`compozy_mcp.assembly.App.running`:
the daemon's lifespan, an in-process command or proxy): every such task ends with it. An app
used without that block (a test's app, a request served on an event loop of its own) gets a
group hosted by one task of its own on that event loop, ended by
:meth:`~compozy_mcp.assembly.App.shutdown`. Each task is a :class:`Job` its starter can cancel
and wait for; what a task raises is logged, never lost and never taken as the group's own
failure (one broken run must not end every other).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

Work = Callable[[], Awaitable[None]]

log = logging.getLogger(__name__)


class AlreadyHosted(RuntimeError):
    """An app's tasks were hosted twice at once (a programming error, not an input's)."""


class Job:
    """One task of a :class:`TaskOwner`: cancel it, wait for it, ask whether it ended."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._scope = anyio.CancelScope()
        self._ended = anyio.Event()
        self._task: int | None = None

    def cancel(self) -> None:
        self._scope.cancel()

    def done(self) -> bool:
        return self._ended.is_set()

    def is_current(self) -> bool:
        """Whether the caller runs in this job (a job must not wait for itself)."""
        return self._task is not None and self._task == anyio.get_current_task().id

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until it ended, at most ``timeout`` seconds; whether it ended."""
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            await self._ended.wait()
        return self._ended.is_set()

    async def _run(self, work: Work) -> None:
        self._task = anyio.get_current_task().id
        try:
            with self._scope:
                await work()
        except Exception:
            log.exception("background task %s failed", self.name)
        finally:
            self._ended.set()


class _OwnHost:
    """The group of an app no block hosts, on one event loop: one task of its own runs it and
    starts the jobs handed to it, until :meth:`close`."""

    def __init__(self) -> None:
        self._waiting: collections.deque[tuple[Job, Work]] = collections.deque()
        self._handed = asyncio.Event()
        self._group: TaskGroup | None = None
        # the one task not in a group: it is the group's host, ended by close()
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        async with anyio.create_task_group() as group:
            self._group = group
            while True:
                while self._waiting:
                    job, work = self._waiting.popleft()
                    group.start_soon(job._run, work, name=job.name)
                self._handed.clear()
                await self._handed.wait()

    def start(self, job: Job, work: Work) -> None:
        self._waiting.append((job, work))
        self._handed.set()

    async def close(self) -> None:
        self._task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(self._task, return_exceptions=True)


class TaskOwner:
    """The task group an app's services start their long-lived tasks in."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._own: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _OwnHost] = (
            weakref.WeakKeyDictionary()
        )
        self._jobs: set[Job] = set()

    @contextlib.asynccontextmanager
    async def hosting(self) -> AsyncIterator[None]:
        """Run the tasks started from now until the block ends; those still running then are
        cancelled (their owners stop them first, as they see fit)."""
        if self._group is not None:
            raise AlreadyHosted("this app's tasks are already hosted")
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    def start(self, work: Work, name: str) -> Job:
        """Start ``work`` in the group; its :class:`Job`."""
        job = Job(name)
        self._jobs.add(job)

        async def run() -> None:
            try:
                await work()
            finally:
                self._jobs.discard(job)

        if self._group is not None:
            self._group.start_soon(job._run, run, name=name)
        else:
            loop = asyncio.get_running_loop()
            own = self._own.get(loop)
            if own is None:
                own = self._own[loop] = _OwnHost()
            own.start(job, run)
        return job

    def jobs(self, prefix: str = "") -> list[Job]:
        """The tasks running now whose name starts with ``prefix``."""
        return [job for job in self._jobs if job.name.startswith(prefix)]

    async def close_own(self) -> None:
        """End the group of this event loop hosted without a block (the app shuts down)."""
        own = self._own.pop(asyncio.get_running_loop(), None)
        if own is not None:
            await own.close()
