"""The embedded SQLite store: file layout, migrations, transactions, CAS, queries, artifacts,
and several processes writing to one database at once."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.store.rows import NOW, session, workspace

from compozy_mcp import jsonutil
from compozy_mcp.errors import StoreError
from compozy_mcp.store import SQLiteStore, Store
from compozy_mcp.store._migrations import LATEST_VERSION, MIGRATIONS
from compozy_mcp.store.base import (
    ArtifactRow,
    SessionQuery,
    SessionRow,
    StaleWrite,
)

COMPOZY = Path(sys.executable).parent / "compozy"


def _ids(rows: list[SessionRow]) -> list[str]:
    return [row.id for row in rows]


# --- the file ---------------------------------------------------------------------------------


def test_file_store_is_created_with_parents_in_wal_mode_at_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "compozy.db"
    with closing(SQLiteStore(path)) as store:
        assert path.is_file()
        assert store.journal_mode() == "wal"
        assert store.schema_version() == LATEST_VERSION


def test_reopening_a_file_store_keeps_data_and_does_not_rerun_migrations(tmp_path: Path) -> None:
    path = tmp_path / "compozy.db"
    with SQLiteStore(path) as store, store.write() as writer:
        writer.insert_workspace(workspace("ws_kept"))
    before = _migration_rows(path)

    with closing(SQLiteStore(path)) as reopened:
        assert reopened.schema_version() == LATEST_VERSION
        with reopened.read() as reader:
            assert reader.workspace("ws_kept") == workspace("ws_kept")
    assert _migration_rows(path) == before
    assert [version for version, _ in before] == [m.version for m in MIGRATIONS]


def _migration_rows(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT version, applied_at FROM schema_migrations ORDER BY version")
        return [(int(version), str(applied)) for version, applied in rows]
    finally:
        conn.close()


def test_store_newer_than_this_code_refuses_to_open_with_store_too_new(tmp_path: Path) -> None:
    path = tmp_path / "compozy.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'x', ?)",
                (NOW,),
            )
    finally:
        conn.close()

    with pytest.raises(StoreError) as raised:
        SQLiteStore(path)
    assert raised.value.reason == "store_too_new"
    assert raised.value.code == "store_unavailable"
    assert "999" in raised.value.message


def test_memory_store_works_without_creating_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with closing(SQLiteStore.memory()) as store:
        assert store.schema_version() == LATEST_VERSION
        with store.write() as writer:
            writer.insert_workspace(workspace("ws_mem"))
        with store.read() as reader:
            assert [row.id for row in reader.workspaces()] == ["ws_mem"]
    assert list(tmp_path.iterdir()) == []


def _schema_of(store: SQLiteStore) -> list[tuple[str, str, str]]:
    conn = store._writer
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
    return [(str(kind), str(name), str(sql)) for kind, name, sql in rows]


def test_a_memory_store_copied_from_the_image_has_the_migrated_schema_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each in-memory store after the first of the process starts from the image the first one
    kept: the schema a file store migrates to, none of another store's rows, its own
    connection's settings."""
    monkeypatch.setattr(SQLiteStore, "_memory_image", None)
    with closing(SQLiteStore.memory()) as first:
        assert SQLiteStore._memory_image is not None
        with first.write() as writer:
            writer.insert_workspace(workspace("ws_first"))
        with closing(SQLiteStore.memory()) as copied, closing(SQLiteStore(tmp_path / "f.db")) as f:
            assert _schema_of(copied) == _schema_of(first) == _schema_of(f)
            assert copied.schema_version() == LATEST_VERSION
            with copied.read() as reader:
                assert reader.workspaces() == []
            assert copied._writer.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            with copied.write() as writer:
                writer.insert_workspace(workspace("ws_copied"))
        with first.read() as reader:
            assert [row.id for row in reader.workspaces()] == ["ws_first"]


# --- transactions -----------------------------------------------------------------------------


def test_write_commits_when_the_block_ends(tmp_path: Path) -> None:
    path = tmp_path / "compozy.db"
    with SQLiteStore(path) as store:
        with store.write() as writer:
            writer.insert_workspace(workspace("ws_committed"))
        # A second connection sees it: the transaction is committed, not merely pending.
        with SQLiteStore(path) as other, other.read() as reader:
            assert reader.workspace("ws_committed") is not None


def test_write_rolls_back_everything_when_the_block_raises(store: Store) -> None:
    class Boom(Exception):
        pass

    def insert_then_fail() -> None:
        with store.write() as writer:
            writer.insert_workspace(workspace("ws_doomed"))
            writer.insert_session(session("sess-doomed"))
            assert writer.workspace("ws_doomed") is not None  # visible inside the transaction
            raise Boom

    with pytest.raises(Boom):
        insert_then_fail()
    with store.read() as reader:
        assert reader.workspace("ws_doomed") is None
        assert reader.session("sess-doomed") is None
    # The store is usable afterwards: the failed transaction did not leave one open.
    with store.write() as writer:
        writer.insert_workspace(workspace("ws_after"))


# --- sessions ---------------------------------------------------------------------------------


def test_update_session_is_compare_and_swap_on_version(store: Store) -> None:
    with store.write() as writer:
        inserted = writer.insert_session(session("sess-cas"))
    assert inserted.version == 1
    stale = dataclasses.replace(
        inserted, state="stopped", doc_json=jsonutil.dumps({"id": "sess-cas", "lost": True})
    )

    fresh = dataclasses.replace(inserted, doc_json=jsonutil.dumps({"id": "sess-cas", "won": True}))
    with store.write() as writer:
        assert writer.update_session(fresh).version == 2

    with pytest.raises(StaleWrite), store.write() as writer:
        writer.update_session(stale)
    with store.read() as reader:
        stored = reader.session("sess-cas")
    assert stored is not None
    assert (stored.version, stored.state, stored.doc) == (
        2,
        "active",
        {"id": "sess-cas", "won": True},
    )


def test_update_session_of_a_missing_row_is_a_stale_write(store: Store) -> None:
    with pytest.raises(StaleWrite), store.write() as writer:
        writer.update_session(dataclasses.replace(session("sess-ghost"), version=1))


def _populate_sessions(store: Store) -> None:
    with store.write() as writer:
        for row in (
            session("s1"),
            session("s2", workspace_id="ws_b"),
            session("s3", state="stopped"),
            session("s4", archived=True),
            session("s5", parent="s1", agent="reviewer"),
            session("s6", parent="s1"),
            session("s7", agent="reviewer"),
        ):
            writer.insert_session(row)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (SessionQuery(), ["s7", "s6", "s5", "s3", "s2", "s1"]),
        (SessionQuery(workspace_id="ws_b"), ["s2"]),
        (SessionQuery(state="stopped"), ["s3"]),
        (SessionQuery(archived=True), ["s4"]),
        (SessionQuery(parent_session_id="s1"), ["s6", "s5"]),
        (SessionQuery(agent_name="reviewer"), ["s7", "s5"]),
        (SessionQuery(workspace_id="ws_a", agent_name="reviewer", parent_session_id="s1"), ["s5"]),
        (SessionQuery(limit=2), ["s7", "s6"]),
        (SessionQuery(subtree_of="s1"), ["s6", "s5", "s1"]),
        (SessionQuery(subtree_of="s-missing"), []),
    ],
    ids=[
        "default",
        "workspace",
        "state",
        "archived",
        "parent",
        "agent",
        "combined",
        "limit",
        "subtree",
        "subtree-of-none",
    ],
)
def test_sessions_query_filters_newest_first(
    store: Store, query: SessionQuery, expected: list[str]
) -> None:
    _populate_sessions(store)
    with store.read() as reader:
        assert _ids(reader.sessions(query)) == expected


def test_sessions_query_paginates_newest_first_with_before_seq(store: Store) -> None:
    _populate_sessions(store)
    pages: list[list[str]] = []
    before: int | None = None
    with store.read() as reader:
        while True:
            rows = reader.sessions(SessionQuery(workspace_id="ws_a", before_seq=before, limit=2))
            if not rows:
                break
            pages.append(_ids(rows))
            before = rows[-1].seq
    assert pages == [["s7", "s6"], ["s5", "s3"], ["s1"]]


# --- artifacts --------------------------------------------------------------------------------

PAYLOAD = b"\x00\xffhead\xe2\x82\xactail\x00"


def _artifact(uri: str, data: bytes, tool_id: str) -> ArtifactRow:
    return ArtifactRow(
        uri=uri,
        sha256="0" * 64,
        mime_type="application/octet-stream",
        bytes=len(data),
        tool_id=tool_id,
        created_at=NOW,
        meta={"tool": tool_id},
    )


def test_put_artifact_twice_with_the_same_uri_keeps_the_first_copy(store: Store) -> None:
    uri = "compozy-artifact://one"
    with store.write() as writer:
        writer.put_artifact(_artifact(uri, PAYLOAD, "first"), PAYLOAD, owner="")
    with store.write() as writer:
        writer.put_artifact(_artifact(uri, b"second", "second"), b"second", owner="")
    with store.read() as reader:
        assert reader.artifact(uri) == _artifact(uri, PAYLOAD, "first")
        assert reader.artifact_bytes(uri, 0, 1000) == PAYLOAD


@pytest.mark.parametrize(
    ("offset", "limit"),
    [(0, 1), (0, len(PAYLOAD)), (1, 5), (6, 3), (len(PAYLOAD) - 2, 10), (len(PAYLOAD), 5), (99, 5)],
)
def test_artifact_bytes_slices_bytes_exactly(store: Store, offset: int, limit: int) -> None:
    uri = "compozy-artifact://slice"
    with store.write() as writer:
        writer.put_artifact(_artifact(uri, PAYLOAD, "t"), PAYLOAD, owner="")
    with store.read() as reader:
        assert reader.artifact_bytes(uri, offset, limit) == PAYLOAD[offset : offset + limit]


def test_artifact_bytes_of_an_unknown_uri_is_empty(store: Store) -> None:
    with store.read() as reader:
        assert reader.artifact("compozy-artifact://nope") is None
        assert reader.artifact_bytes("compozy-artifact://nope", 0, 10) == b""


# --- several processes ------------------------------------------------------------------------

WORKERS = 4
SESSIONS_PER_WORKER = 15

# Each worker opens the app afresh for every session, as a CLI invocation does, so that
# opening (migrations, default rows) races as well as the writes. It starts when the gate
# pipe reaches end of file, which the test causes for every worker at once.
WORKER = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from compozy_mcp.assembly import open_app

    os.read(int(sys.argv[1]), 1)
    created = []
    for _ in range({count}):
        with open_app() as app:
            result = asyncio.run(
                app.dispatcher.call("compozy__session_create", {{"agent_name": "general"}})
            )
        created.append(result.structured["session"]["id"])
    print(json.dumps(created))
    """
).format(count=SESSIONS_PER_WORKER)


def _env(home: Path, workspace: Path) -> dict[str, str]:
    return {**os.environ, "COMPOZY_HOME": str(home), "COMPOZY_WORKSPACE": str(workspace)}


def _run_workers(env: dict[str, str]) -> list[tuple[int, str, str]]:
    gate_read, gate_write = os.pipe()
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, str(gate_read)],
                env=env,
                pass_fds=(gate_read,),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(WORKERS)
        ]
    finally:
        os.close(gate_read)
        os.close(gate_write)  # end of file on the gate: every worker starts now
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        results.append((proc.returncode, out, err))
    return results


LIST_ARGS = ("tool", "invoke", "compozy__session_list", "--input", '{"limit":200}', "-o", "json")


def _listed_session_ids(env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [str(COMPOZY), *LIST_ARGS],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    sessions: list[dict[str, Any]] = json.loads(done.stdout)["result"]["structured"]["sessions"]
    return [session["id"] for session in sessions]


@pytest.mark.process
def test_several_processes_create_sessions_concurrently_without_losing_any(
    tmp_path: Path, workspace: Path
) -> None:
    env = _env(tmp_path / "home", workspace)
    results = _run_workers(env)

    created: list[str] = []
    for returncode, out, err in results:
        assert returncode == 0, err
        assert "Traceback" not in err
        ids: list[str] = json.loads(out)
        assert len(ids) == SESSIONS_PER_WORKER
        created.extend(ids)
    assert len(set(created)) == WORKERS * SESSIONS_PER_WORKER

    listed = _listed_session_ids(env)
    assert sorted(listed) == sorted(created)
    with closing(SQLiteStore(tmp_path / "home" / "compozy.db")) as store:
        assert store.schema_version() == LATEST_VERSION
        with store.read() as reader:
            assert [row.id for row in reader.workspaces()] == ["ws_default"]
            assert reader.profile("prof_default") is not None
