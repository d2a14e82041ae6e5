"""MCP clients on stdio proxies, kept open across tests.

A ``compozy proxy`` on stdio lives as long as the one client that started it, and costs ~0.8 s
of CPU to start (the MCP SDK and compozy's modules): one per test, mode and transport was the
process tier's biggest cost (issue 29). A test that depends neither on a fresh process nor on
its connection's own start borrows a client kept open for its flags instead
(:meth:`SharedClients.client`); the processes end when the test session does.

Each test runs on an event loop of its own (the anyio plugin's, per test), and a client cannot
move between loops: the shared clients live on one loop, in a thread of their own, and a test
holds a :class:`Borrowed` client, which runs each call on that loop and awaits it on the test's
(a progress callback runs back on the test's loop). A failure that leaves a test's ``async
with`` closes the client it borrowed, so that the next test starts a fresh one and a failing
test cannot leave a broken client to the others. A proxy's stderr is checked for a traceback
after each test that used it, and when it ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Hashable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from mcp.client import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.types import CallToolResult, ListToolsResult, RequestParamsMeta

T = TypeVar("T")

#: how long closing a client may take: the SDK's stdio client closes the proxy's stdin, waits
#: 2 s, then terminates and kills it
CLOSE_DEADLINE = 30.0


class McpClient(Protocol):
    """What the tests of the ``proxy`` fixture use of an MCP client: an SDK ``Client`` on the
    test's loop, or a :class:`Borrowed` one."""

    @property
    def protocol_version(self) -> str: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        meta: RequestParamsMeta | None = None,
    ) -> CallToolResult: ...

    async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult: ...


class Borrowed:
    """A client living on another thread's loop, called from the test's loop."""

    def __init__(self, client: Client, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._loop = loop

    @property
    def protocol_version(self) -> str:
        return self._client.protocol_version

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        meta: RequestParamsMeta | None = None,
    ) -> CallToolResult:
        report = None if progress_callback is None else _called_back_here(progress_callback)
        call = self._client.call_tool(name, arguments, read_timeout_seconds, report, meta=meta)
        return await _run_on(self._loop, call)

    async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult:
        return await _run_on(self._loop, self._client.list_tools(cursor=cursor))


async def _run_on(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """``coro`` run on ``loop``, awaited on this one (cancelling the wait cancels the run)."""
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def _called_back_here(callback: ProgressFnT) -> ProgressFnT:
    """``callback``, run on the calling loop whichever loop calls it."""
    here = asyncio.get_running_loop()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        await _run_on(here, callback(progress, total, message))

    return report


@dataclass
class _Held:
    """A client kept open by a task of the shared loop until ``closing`` is set."""

    client: Client
    log: Path
    closing: asyncio.Event
    task: asyncio.Task[None]


@dataclass
class SharedClients:
    """Clients kept open per key for the whole test session, on a loop of their own."""

    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    #: touched on the shared loop only
    _held: dict[Hashable, _Held] = field(default_factory=dict)
    _closing: set[asyncio.Task[None]] = field(default_factory=set)
    _errors: list[BaseException] = field(default_factory=list)

    def _started(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="shared MCP clients", daemon=True
            )
            self._thread.start()
        return self._loop

    @asynccontextmanager
    async def client(
        self, key: Hashable, opener: Callable[[], AbstractAsyncContextManager[Client]], log: Path
    ) -> AsyncIterator[McpClient]:
        """The client kept open for ``key``, opened with ``opener`` (whose process writes its
        stderr to ``log``) when there is none yet or the last one was closed."""
        loop = self._started()
        held = await _run_on(loop, self._get(key, opener, log))
        try:
            yield Borrowed(held.client, loop)
        except BaseException:
            loop.call_soon_threadsafe(self._drop, key, held)
            raise
        stderr = held.log.read_text()
        if "Traceback" in stderr:
            loop.call_soon_threadsafe(self._drop, key, held)
            raise AssertionError(stderr)

    async def _get(
        self, key: Hashable, opener: Callable[[], AbstractAsyncContextManager[Client]], log: Path
    ) -> _Held:
        held = self._held.get(key)
        if held is not None and not held.task.done():
            return held
        if held is not None:  # its task ended without being asked to: its error is kept
            self._drop(key, held)
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        closing = asyncio.Event()
        task = asyncio.create_task(self._hold(opener, ready, closing))
        try:
            client = await ready
        except asyncio.CancelledError:  # the test was cancelled: no one will use this one
            self._close(closing, task)
            raise
        self._held[key] = held = _Held(client, log, closing, task)
        return held

    @staticmethod
    async def _hold(
        opener: Callable[[], AbstractAsyncContextManager[Client]],
        ready: asyncio.Future[Client],
        closing: asyncio.Event,
    ) -> None:
        # the client is entered and left in this one task, as its task group requires
        try:
            async with opener() as client:
                if not ready.done():
                    ready.set_result(client)
                await closing.wait()
        except BaseException as exc:
            if ready.done():
                raise
            ready.set_exception(exc)  # it never opened: the test that asked for it fails

    def _drop(self, key: Hashable, held: _Held) -> None:
        """Forget ``held`` (the next test opens a new client) and close it."""
        if self._held.get(key) is held:
            del self._held[key]
        self._close(held.closing, held.task)

    def _close(self, closing: asyncio.Event, task: asyncio.Task[None]) -> None:
        """Ask ``task`` to close its client; a failure to close cleanly is kept for the end."""
        closing.set()
        closed = asyncio.get_running_loop().create_task(self._closed(task))
        self._closing.add(closed)
        closed.add_done_callback(self._closing.discard)

    async def _closed(self, task: asyncio.Task[None]) -> None:
        try:
            async with asyncio.timeout(CLOSE_DEADLINE):
                await task
        except BaseException as exc:  # every failure is reported when the session ends
            self._errors.append(exc)

    async def _close_all(self) -> None:
        for key, held in list(self._held.items()):
            self._drop(key, held)
        await asyncio.gather(*self._closing)

    def close(self) -> None:
        """Close every client (each stdio client ends its process) and the loop; fails with
        the first error any of them met (a traceback on a proxy's stderr, a client that did
        not close)."""
        if self._loop is None or self._thread is None:
            return
        try:
            closing = asyncio.run_coroutine_threadsafe(self._close_all(), self._loop)
            closing.result(2 * CLOSE_DEADLINE)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()
            self._loop = self._thread = None
        if self._errors:
            met = "\n".join(f"{type(error).__name__}: {error}" for error in self._errors)
            raise AssertionError(f"shared clients did not close cleanly:\n{met}")
