"""What only the PostgreSQL store has: migrations raced by several processes starting at once on
an empty database, the bounded wait for the writers of other daemons, the schema as rendered
for it, and URLs kept out of what users read."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import psycopg
import pytest
from tests.store.rows import seed, workspace

from compozy_mcp.errors import StoreBusy, StoreError
from compozy_mcp.store._migrations import LATEST_VERSION, MIGRATIONS
from compozy_mcp.store.postgres import WRITE_LOCK, PostgresStore, redact
from compozy_mcp.store.sql import POSTGRES, SQLITE, render_schema

pytestmark = pytest.mark.postgres

OPEN_STORE = textwrap.dedent(
    """
    import sys, time
    from compozy_mcp.store.postgres import PostgresStore

    start = float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))  # all three open the store at the same moment
    store = PostgresStore(sys.argv[1])
    print(store.schema_version())
    store.close()
    """
)


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(postgres_url, busy_timeout_ms=300)
    with opened.write() as writer:
        seed(writer)
    yield opened
    opened.close()


def test_three_processes_starting_on_an_empty_database_come_up_with_one_schema(
    postgres_url: str,
) -> None:
    start = time.time() + 1.5
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_STORE, postgres_url, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes = [racer.communicate(timeout=120) for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0, 0], [err for _, err in outcomes]
    assert [out.strip() for out, _ in outcomes] == [str(LATEST_VERSION)] * 3
    with psycopg.connect(postgres_url) as conn:
        applied = conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        assert [row[0] for row in applied] == [m.version for m in MIGRATIONS]


def test_a_write_waits_for_another_daemons_writer_then_fails_as_store_busy(
    store: PostgresStore, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as other, other.transaction():
        other.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        with pytest.raises(StoreBusy) as busy, store.write() as writer:
            writer.insert_workspace(workspace("ws_blocked"))
        assert "retry" in busy.value.message
        assert store.write_failure is not None
        with store.read() as reader:  # a reader never waits for a writer
            assert reader.workspace("ws_a") is not None
    with store.write() as writer:  # the lock given back, writes go on
        writer.insert_workspace(workspace("ws_after"))
    assert store.write_failure is None
    with store.read() as reader:
        assert reader.workspace("ws_blocked") is None
        assert reader.workspace("ws_after") is not None


def test_a_reader_sees_one_snapshot_while_another_daemon_writes(
    store: PostgresStore, postgres_url: str
) -> None:
    with store.read() as reader:
        before = [row.id for row in reader.workspaces()]
        with PostgresStore(postgres_url) as other, other.write() as writer:
            writer.insert_workspace(workspace("ws_new"))
        assert [row.id for row in reader.workspaces()] == before
    with store.read() as reader:
        assert "ws_new" in [row.id for row in reader.workspaces()]


def test_the_schema_is_rendered_per_engine_from_one_source() -> None:
    sqlite = [s for m in MIGRATIONS for s in render_schema(m.sql, SQLITE)]
    postgres = [s for m in MIGRATIONS for s in render_schema(m.sql, POSTGRES)]
    assert not any("@" in statement for statement in sqlite + postgres)
    assert any("AUTOINCREMENT" in statement for statement in sqlite)
    assert not any("AUTOINCREMENT" in s or "BLOB" in s for s in postgres)
    # the back-fills of rows only a SQLite store can hold are SQLite's alone
    assert len(sqlite) - len(postgres) == 3


def test_a_url_is_shown_without_its_password() -> None:
    shown = redact("postgresql://compozy:s3cret@db.internal:5432/compozy")
    assert "s3cret" not in shown
    assert shown == "postgresql://compozy@db.internal/compozy"


def test_size_vacuum_and_checkpoint_work_on_the_database_and_close_twice_is_fine(
    store: PostgresStore,
) -> None:
    size = store.size()
    assert size.database > 0
    assert size.wal == 0  # the server's write-ahead log is shared by its databases
    store.vacuum()
    store.checkpoint()
    with store.read() as reader:  # usable after a vacuum
        assert reader.workspace("ws_a") is not None
    store.close()
    store.close()


def test_text_postgresql_cannot_hold_fails_as_a_store_error_and_changes_nothing(
    store: PostgresStore,
) -> None:
    with pytest.raises(StoreError) as failed, store.write() as writer:
        writer.insert_workspace(workspace("ws_nul\x00"))
    assert "NUL" in failed.value.message
    with store.read() as reader:
        assert [row.id for row in reader.workspaces()] == ["ws_a", "ws_b"]
