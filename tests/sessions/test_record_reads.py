"""Reading a session's record again: what changed around the session since the last read (a
child stopped, its worktree's changes looked at) shows in the next read, though the session's
own row did not change; what did not change is the record read before."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.runtime.inprocess import InProcessLauncher

from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import OPERATOR, CallInfo
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.sessions.ledger import SessionLedger, session_row
from compozy_mcp.store import SQLiteStore
from compozy_mcp.store.worktrees import WorktreeRow

pytestmark = pytest.mark.anyio

TS = "2026-11-10T14:02:11Z"


async def _status(call: Caller, session_id: str, **extra: Any) -> dict[str, Any]:
    return await call.session("compozy__session_status", {"session_id": session_id, **extra})


async def test_a_child_stopped_after_a_read_shows_stopped_in_the_next_read(call: Caller) -> None:
    parent = (await call.create())["id"]
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"parent_session_id": parent, "agent_name": "general", "ttl_seconds": 3600},
        )
    )["session_id"]
    before = await call.full(parent)
    assert [c["state"] for c in before["children"]] == ["active"]
    assert before["subagent_summary"] == {"total": 1, "active": 1, "stopped": 0, "failed": 0}

    await call("compozy__session_stop", {"session_id": child})

    after = await call.full(parent)
    assert after["updated_at"] == before["updated_at"]  # the parent's own row is as it was
    assert [c["state"] for c in after["children"]] == ["stopped"]
    assert after["subagent_summary"] == {"total": 1, "active": 0, "stopped": 1, "failed": 0}


async def test_a_worktree_row_changed_after_a_read_shows_in_the_next_read(
    call: Caller, app: App
) -> None:
    session = (await call.create())["id"]
    row = WorktreeRow(
        id="wt-1",
        session_id=session,
        workspace_id="ws_default",
        path="/tmp/wt-1",
        repository="/tmp/repo",
        prefix="",
        branch="compozy/one",
        base_ref="main",
        base_commit="0" * 40,
        state="active",
        created_at=TS,
        updated_at=TS,
    )
    ledger, info = app.sessions.ledger, CallInfo("test", OPERATOR)
    with app.store.write() as writer:
        found = writer.session(session)
        assert found is not None
        state = ledger.state(found)
        ledger.attach_worktree(writer, info, state, row)
        ledger.save(writer, info, found, state)
    first = await _status(call, session, result_view="full")
    assert first["badge"] == "idle"
    assert "changes" not in first["worktree"]

    changed = replace(row, changed_files=2, lines_added=5, lines_removed=1, changes_checked_at=TS)
    with app.store.write() as writer:
        writer.put_worktree(changed)

    second = await _status(call, session, result_view="full")
    assert second["worktree"]["changes"] == {
        "files": 2,
        "added": 5,
        "removed": 1,
        "checked_at": TS,
    }
    assert (second["badge"], second["board_column"]) == ("review", "review")


async def test_a_record_read_twice_without_a_change_is_the_same(call: Caller) -> None:
    session = (await call.create(name="twice"))["id"]
    assert await _status(call, session) == await _status(call, session)
    assert await call.full(session) == await call.full(session)


@pytest.fixture
def file_app(
    settings: Settings, clock: FixedClock, launcher: InProcessLauncher, tmp_path: Path
) -> Iterator[App]:
    """An app on a store file that another store (another process) may write too."""
    store = SQLiteStore(tmp_path / "state.db")
    with open_app(settings, store=store, clock=clock, launcher=launcher) as opened:
        yield opened


async def test_a_change_another_process_commits_shows_in_the_next_read(
    file_app: App, tmp_path: Path
) -> None:
    call = Caller(file_app)
    session = (await call.create(name="before"))["id"]
    assert (await _status(call, session))["name"] == "before"
    other = SQLiteStore(tmp_path / "state.db")  # what another process sees and writes
    try:
        with other.write() as writer:
            row = writer.session(session)
            assert row is not None
            state = SessionLedger.state(row)
            state.name = "after"
            writer.update_session(session_row(state, seq=row.seq, version=row.version))
    finally:
        other.close()
    assert (await _status(call, session))["name"] == "after"
    await file_app.shutdown()


async def test_a_ttl_that_passes_with_nothing_committed_stops_the_session_at_the_next_read(
    file_app: App, clock: FixedClock
) -> None:
    call = Caller(file_app)
    parent = (await call.create())["id"]
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"parent_session_id": parent, "agent_name": "general", "ttl_seconds": 60},
        )
    )["session_id"]
    assert (await _status(call, child))["state"] == "active"
    assert (await _status(call, child))["state"] == "active"  # read again: nothing changed
    clock.advance(61)
    assert (await _status(call, child))["state"] == "stopped"
    await file_app.shutdown()
