"""``compozy store migrate --to postgresql://…`` (typed as a user would, tests/clirun.py): a SQLite
home's store copied, every table and every row, into an empty PostgreSQL database with the
counts compared; a daemon served from that database then reads the migrated sessions, and
new rows get ids after the copied ones. A target that holds rows is refused, unchanged."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from tests.api.support import Home, compozy
from tests.store.daemons import daemon_on_store
from tests.store.rows import NOW

from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.store import SQLiteStore
from compozy_mcp.store.base import (
    ApprovalGrantRow,
    ApprovalTokenRow,
    ArtifactRow,
    HookRunQuery,
    HookRunRow,
    SessionEventRow,
    SessionQuery,
    TranscriptTurn,
)
from compozy_mcp.store.postgres import PostgresStore
from compozy_mcp.store.tasks import TaskRow, TaskRunRow

pytestmark = [pytest.mark.postgres, pytest.mark.process]

#: bytes no text column could hold: the artifact must come back exactly
BLOB = b"\x00\xffhead\xe2\x82\xactail\x00"
EVERY_SESSION = SessionQuery(limit=1000)
#: the tables :func:`_populate` writes to
POPULATED = {
    "workspaces", "profiles", "sessions", "transcript_turns", "session_events", "artifacts",
    "artifact_refs", "hook_runs", "hook_stats", "approval_grants", "approval_tokens",
    "approval_modes", "tasks", "task_runs",
}  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


def _populate(home: Home) -> list[str]:
    """Sessions (one a child) made through the CLI, and rows in the other tables written
    through the store; the session ids."""
    ids = []
    for name in ("first", "second"):
        made = compozy(
            home, "session", "create", "--agent", "general", "--name", name, "-o", "json"
        )
        assert made.returncode == EXIT_OK, made.stderr
        ids.append(json.loads(made.stdout)["session"]["id"])
    with SQLiteStore(home.path / "compozy.db") as store, store.write() as writer:
        workspace = writer.workspaces()[0].id
        writer.append_turns(
            [TranscriptTurn(ids[0], n, 0, "user", f"turn {n}", NOW) for n in (1, 2, 3)]
        )
        writer.put_artifact(
            ArtifactRow("artifact://x", "sha", "application/octet-stream", len(BLOB), "t", NOW),
            BLOB,
            owner=ids[0],
        )
        writer.add_hook_run(
            HookRunRow(
                "audit",
                "tool.post_call",
                "t",
                "call-1",
                ids[1],
                NOW,
                1.5,
                "ok",
                "none",
                True,
                None,
                0,
                "",
                {"op": "x"},
            ),
            failed=False,
        )
        writer.put_approval_token(
            ApprovalTokenRow("hash", "token", "t", ids[0], workspace, "general", "d", NOW, NOW)
        )
        writer.put_task(
            TaskRow("task-1", workspace, "a task", "", "[]", '["x"]', 1, "todo", NOW, NOW)
        )
        writer.put_task_run(TaskRunRow("run-1", "task-1", ids[1], "active", NOW, NOW, NOW))
        writer.append_session_events([SessionEventRow(0, ids[0], None, "note", NOW, "{}")])
        writer.set_approval_mode(ids[1], "plan", NOW)
        writer.put_approval_grant(
            ApprovalGrantRow("grant-1", workspace, None, "t", None, "allow", None, "operator", NOW)
        )
    return ids


def _sqlite_counts(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'"
            )
        ]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def test_store_migrate_copies_every_table_and_a_daemon_serves_the_sessions_from_it(
    home: Home, postgres_url: str
) -> None:
    ids = _populate(home)
    before = _sqlite_counts(home.path / "compozy.db")

    done = compozy(home, "store", "migrate", "--to", postgres_url, "-o", "json")
    assert done.returncode == EXIT_OK, done.stderr
    report = json.loads(done.stdout)
    assert report["tables"] == before
    assert {table for table, rows in before.items() if rows} >= POPULATED

    with PostgresStore(postgres_url) as store, store.read() as reader:
        assert reader.artifact_bytes("artifact://x", 0, 100) == BLOB
        assert [t.text for t in reader.transcript(ids[0])] == ["turn 1", "turn 2", "turn 3"]
        (run,) = reader.hook_runs(HookRunQuery())
        assert (run.patch_applied, run.patch) == (True, {"op": "x"})
        migrated_seq = max(s.seq for s in reader.sessions(EVERY_SESSION))

    with daemon_on_store(home, postgres_url) as (_, http):
        answer = http.get("/api/sessions")
        assert answer.status_code == 200, answer.text
        listed = answer.json()["sessions"]
        assert set(ids) <= {s["id"] for s in listed}
        shown = http.get(f"/api/sessions/{ids[0]}").json()["session"]
        assert shown["name"] == "first"
        made = http.post("/api/sessions", json={"agent_name": "general"})
        assert made.status_code == 201, made.text
        new_id = made.json()["session"]["id"]

    with PostgresStore(postgres_url) as store, store.read() as reader:
        new = reader.session(new_id)
    assert new is not None
    assert new.seq > migrated_seq  # ids continue after the copied ones


def test_a_target_that_holds_rows_is_refused_and_left_as_it_was(
    home: Home, postgres_url: str
) -> None:
    _populate(home)
    assert compozy(home, "store", "migrate", "--to", postgres_url).returncode == EXIT_OK
    with PostgresStore(postgres_url) as store, store.read() as reader:
        before = len(reader.sessions(EVERY_SESSION))

    again = compozy(home, "store", "migrate", "--to", postgres_url)
    assert again.returncode != EXIT_OK
    assert "not empty" in again.stderr
    assert "Traceback" not in again.stderr
    with PostgresStore(postgres_url) as store, store.read() as reader:
        assert len(reader.sessions(EVERY_SESSION)) == before


def test_migrate_needs_a_postgresql_url_and_a_sqlite_store(home: Home, postgres_url: str) -> None:
    wrong = compozy(home, "store", "migrate", "--to", "mysql://db/x")
    assert wrong.returncode != EXIT_OK
    assert "postgresql://" in wrong.stderr
    missing = compozy(home, "store", "migrate", "--to", postgres_url)
    assert missing.returncode != EXIT_OK
    assert "no SQLite store" in missing.stderr
