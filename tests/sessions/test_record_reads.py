"""Reading a session's record again: what changed around the session since the last read (a
child stopped, its worktree's changes looked at) shows in the next read, though the session's
own row did not change; what did not change is the record read before."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, CallInfo
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
