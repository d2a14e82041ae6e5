"""Issue 28, item 2: on a PostgreSQL store a daemon is woken by NOTIFY when another daemon
leaves it news (a signal, a queued turn, stored events), not only by its poll; on SQLite it
polls."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.to_thread
import pytest
from tests import pg

from compozy_mcp.cluster.wakeup import NotifyWakeup, PollingWakeup, wakeup_for
from compozy_mcp.store.base import SessionEventRow
from compozy_mcp.store.leases import SignalRow

pytestmark = pytest.mark.anyio

#: longer than any test may take: a wait that returns was woken by a NOTIFY, not its poll
NEVER = 3600.0


def test_a_sqlite_store_is_polled(request: pytest.FixtureRequest) -> None:
    with pg.stores_on("sqlite", request) as [store]:
        assert isinstance(wakeup_for(store), PollingWakeup)


async def _woken_by(url: str, write: Callable[[], None]) -> None:
    wakeup = NotifyWakeup(url, seconds=NEVER)
    try:
        await wakeup.listen()  # listening before the other daemon writes
        with anyio.fail_after(60):  # a guard, not a measure: the poll would take an hour
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(wakeup.wait)
                await anyio.to_thread.run_sync(write)
    finally:
        await wakeup.close()


@pytest.mark.postgres
async def test_a_signal_left_by_another_daemon_wakes_the_owner_at_once(
    request: pytest.FixtureRequest,
) -> None:
    with pg.stores_on("postgres", request, 2) as [here, there]:
        assert isinstance(wakeup_for(here), NotifyWakeup)

        def send() -> None:
            with there.write() as writer:
                writer.send_signal(SignalRow("sig-1", "d-here", "sess-1", "cancel", "{}", 1))

        await _woken_by(here.url, send)  # type: ignore[attr-defined]


@pytest.mark.postgres
async def test_events_stored_by_another_daemon_wake_its_followers_at_once(
    request: pytest.FixtureRequest,
) -> None:
    with pg.stores_on("postgres", request, 2) as [here, there]:

        def store_events() -> None:
            with there.write() as writer:
                writer.append_session_events(
                    [SessionEventRow(0, "sess-1", None, "turn_started", "2026-12-04", "{}")]
                )

        await _woken_by(here.url, store_events)  # type: ignore[attr-defined]
