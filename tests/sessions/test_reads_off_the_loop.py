"""A store whose reads wait on a server (PostgreSQL) is read off the event loop for status and
list, so that its round trips never hold the loop; an embedded store (SQLite) is read on it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from tests.conftest import Caller

from compozy_mcp.store import SQLiteStore, Store, StoreReader

pytestmark = pytest.mark.anyio


class _Watched(SQLiteStore):
    """An in-memory store that says where each read ran."""

    readers: list[int]

    @contextmanager
    def read(self) -> Iterator[StoreReader]:
        self.readers.append(threading.get_ident())
        with super().read() as reader:
            yield reader


class _OnAServer(_Watched):
    reads_wait_on_a_server = True


@pytest.fixture(params=[_Watched, _OnAServer], ids=["embedded", "on-a-server"])
def app_store(request: pytest.FixtureRequest) -> Iterator[Store]:
    store = request.param(":memory:")
    store.readers = []
    yield store
    store.close()


async def test_status_and_list_read_on_the_loop_only_for_an_embedded_store(
    call: Caller, app_store: _Watched
) -> None:
    made = await call.create()
    loop_thread = threading.get_ident()
    app_store.readers.clear()
    status = await call.session("compozy__session_status", {"session_id": made["id"]})
    listed = await call.structured("compozy__session_list")
    assert status["id"] == made["id"]
    assert made["id"] in [s["id"] for s in listed["sessions"]]
    off_loop = sum(ident != loop_thread for ident in app_store.readers)
    # status and list: one read each (a hook registry's periodic reload may add one on it)
    assert off_loop == (2 if app_store.reads_wait_on_a_server else 0)
