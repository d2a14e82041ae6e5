"""The clients the ``proxy`` fixture keeps open across tests (:mod:`tests.proxy.shared`): one
per key, calls run on their loop and awaited on the test's, progress reported on the test's
loop, a client a failure left closed and replaced, and a client that fails to close reported
at the end. In-process servers stand in for the proxies: no process is started."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.server.mcpserver import Context, MCPServer
from tests.proxy.shared import SharedClients

pytestmark = pytest.mark.anyio

server = MCPServer("shared-test")


@server.tool(description="Report two steps of progress, then answer.")
async def steps(ctx: Context) -> str:
    for step in (1, 2):
        await ctx.report_progress(step, 2, f"step {step}")
    return "done"


class Openings:
    """An opener of in-process clients that counts what it opened and closed."""

    def __init__(self, *, fail_at_close: bool = False) -> None:
        self.opened = 0
        self.closed = 0
        self.fail_at_close = fail_at_close

    def __call__(self) -> AbstractAsyncContextManager[Client]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[Client]:
            async with Client(server, cache=None) as client:
                self.opened += 1
                yield client
                self.closed += 1
            if self.fail_at_close:
                raise AssertionError("Traceback (most recent call last): as a proxy's stderr")

        return opened()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "stderr.log"
    path.write_text("")
    return path


@pytest.fixture
def shared() -> Iterator[SharedClients]:
    clients = SharedClients()
    yield clients
    clients.close()


async def test_a_key_keeps_its_client_across_borrows_and_another_key_gets_its_own(
    shared: SharedClients, log: Path
) -> None:
    openings = Openings()
    for _ in range(3):
        async with shared.client("a", openings, log) as client:
            assert (await client.list_tools()).tools
    async with shared.client("b", openings, log) as client:
        assert (await client.call_tool("steps", {})).is_error is not True
    assert (openings.opened, openings.closed) == (2, 0)
    await anyio.to_thread.run_sync(shared.close)
    assert openings.closed == 2


async def test_progress_is_reported_on_the_loop_of_the_test(
    shared: SharedClients, log: Path
) -> None:
    here = asyncio.get_running_loop()
    seen: list[tuple[float, str | None, bool]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message, asyncio.get_running_loop() is here))

    async with shared.client("a", Openings(), log) as client:
        result = await client.call_tool("steps", {}, progress_callback=report)
    assert result.is_error is not True
    assert seen == [(1.0, "step 1", True), (2.0, "step 2", True)]


async def test_a_failure_in_a_borrowing_test_closes_its_client_and_the_next_gets_a_new_one(
    shared: SharedClients, log: Path
) -> None:
    openings = Openings()
    with pytest.raises(RuntimeError, match="the test failed"):
        async with shared.client("a", openings, log):
            raise RuntimeError("the test failed")
    async with shared.client("a", openings, log) as client:
        assert (await client.list_tools()).tools
    assert openings.opened == 2
    await anyio.to_thread.run_sync(shared.close)
    assert openings.closed == 2


async def test_a_traceback_on_stderr_fails_the_test_that_saw_it_and_replaces_the_client(
    shared: SharedClients, log: Path
) -> None:
    openings = Openings()
    with pytest.raises(AssertionError, match="Traceback"):
        async with shared.client("a", openings, log):
            log.write_text("Traceback (most recent call last):\n")
    log.write_text("")
    async with shared.client("a", openings, log):
        pass
    assert openings.opened == 2


async def test_a_client_that_does_not_close_cleanly_fails_the_end_of_the_session(
    log: Path,
) -> None:
    shared = SharedClients()
    async with shared.client("a", Openings(fail_at_close=True), log):
        pass
    with pytest.raises(AssertionError, match="did not close cleanly"):
        await anyio.to_thread.run_sync(shared.close)


async def test_a_client_that_cannot_open_fails_the_test_that_asked_for_it(
    shared: SharedClients, log: Path
) -> None:
    @asynccontextmanager
    async def refused() -> AsyncIterator[Client]:
        raise ConnectionRefusedError("no proxy")
        yield  # pragma: no cover

    with pytest.raises(ConnectionRefusedError, match="no proxy"):
        async with shared.client("a", refused, log):
            pass
    openings = Openings()
    async with shared.client("a", openings, log):
        pass
    assert openings.opened == 1
