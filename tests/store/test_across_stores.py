"""Several stores on one database, as several daemons (or the CLI beside a daemon) open it: a
one-shot approval is used once whichever store takes it, and writers racing on one session
lose no update, each write landing on exactly the version it read. On each engine: SQLite
stores on one file, PostgreSQL stores each with its own pool on one database."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from tests import pg
from tests.store.rows import NOW, seed, session

from compozy_mcp import jsonutil
from compozy_mcp.errors import StoreBusy
from compozy_mcp.store import Store
from compozy_mcp.store.base import ApprovalTokenRow, StaleWrite

#: stores on one database: three daemons
STORES = 3
#: writers racing on one session, spread over the stores
WRITERS = 14
LATER = "2026-11-10T15:00:00Z"
T = TypeVar("T")


@pytest.fixture(params=pg.ENGINES)
def stores(request: pytest.FixtureRequest) -> Iterator[list[Store]]:
    with pg.stores_on(request.param, request, STORES) as opened:
        with opened[0].write() as writer:
            seed(writer)
            writer.insert_session(session("sess-raced"))
        yield opened


def _at_once(count: int, work: Callable[[int], T]) -> list[T]:
    """``work(n)`` for n in ``range(count)``, each in its own thread, released together."""
    start = threading.Barrier(count)

    def run(n: int) -> T:
        start.wait(timeout=30)
        return work(n)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def _token(token_hash: str, kind: str) -> ApprovalTokenRow:
    return ApprovalTokenRow(
        token_hash=token_hash,
        kind=kind,
        tool_id="compozy__session_rename",
        session_id="sess-raced",
        workspace_id="ws_a",
        agent_name="general",
        input_digest="digest",
        created_at=NOW,
        expires_at=LATER,
    )


def test_a_one_shot_token_sent_to_three_stores_at_once_is_used_exactly_once(
    stores: list[Store],
) -> None:
    with stores[1].write() as writer:
        writer.put_approval_token(_token("hash-once", "token"))

    def use(n: int) -> bool:
        with stores[n % STORES].write() as writer:
            return writer.use_approval_token("hash-once", NOW)

    assert sorted(_at_once(2 * STORES, use)) == [False] * (2 * STORES - 1) + [True]
    with stores[2].read() as reader:
        stored = reader.approval_token("hash-once")
    assert stored is not None
    assert stored.used_at == NOW


def test_an_allow_once_answer_taken_from_three_stores_at_once_counts_once(
    stores: list[Store],
) -> None:
    with stores[0].write() as writer:
        writer.put_approval_token(_token("answer-1", "allow_once"))
        writer.put_approval_token(_token("answer-2", "allow_once"))

    def take(n: int) -> str | None:
        with stores[n % STORES].write() as writer:
            taken = writer.take_approval_pass(
                "sess-raced", "compozy__session_rename", "digest", NOW
            )
        return taken.token_hash if taken else None

    taken = _at_once(2 * STORES, take)
    assert sorted(t for t in taken if t is not None) == ["answer-1", "answer-2"]
    assert taken.count(None) == 2 * STORES - 2


def test_fourteen_writers_on_three_stores_lose_no_update_and_each_lands_on_its_version(
    stores: list[Store],
) -> None:
    """Each writer reads the session in a snapshot of its own, then writes it back compared on
    the version it read, retrying from a fresh read when another writer got there first. The
    first reads all happen before any write: all but one of the first writes must be refused."""
    all_read = threading.Barrier(WRITERS)

    def bump(n: int) -> tuple[int, int]:
        store = stores[n % STORES]
        conflicts = 0
        while True:
            with store.read() as reader:
                row = reader.session("sess-raced")
            assert row is not None
            if conflicts == 0:
                all_read.wait(timeout=30)
            doc = row.doc
            doc["writers"] = [*doc.get("writers", []), n]
            try:
                with store.write() as writer:
                    written = writer.update_session(
                        dataclasses.replace(row, doc_json=jsonutil.dumps(doc))
                    )
            except (StaleWrite, StoreBusy):
                conflicts += 1
                continue
            assert written.version == row.version + 1
            return written.version, conflicts

    landed = _at_once(WRITERS, bump)
    # every write landed on a version of its own: 2..15, one each, none lost
    assert sorted(version for version, _ in landed) == list(range(2, WRITERS + 2))
    with stores[0].read() as reader:
        final = reader.session("sess-raced")
    assert final is not None
    assert final.version == WRITERS + 1
    assert sorted(final.doc["writers"]) == list(range(WRITERS))
    # the fence was exercised: the first write of all but one writer was refused
    assert sum(1 for _, conflicts in landed if conflicts == 0) == 1
