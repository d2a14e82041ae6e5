"""A delivery from a session that works in a git worktree (issue 27, item 2): the completed run
carries the worktree's branch and what the session changed, as it is when the run completes
(mid-turn included), not as the last turn left it. Git is the real one (process tier)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Caller
from tests.worktrees.gitrepo import make_repo

from compozy_mcp.calls import CallScope

pytestmark = [pytest.mark.anyio, pytest.mark.process]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The default workspace is a git repository."""
    return make_repo(tmp_path / "repo", {"README.md": "hello\n"})


async def test_a_completed_run_delivers_the_worktrees_branch_and_its_changes(
    call: Caller,
) -> None:
    session = await call.session(
        "compozy__session_create", {"agent_name": "echo", "worktree": True, "name": "notes"}
    )
    checkout = Path((await call.full(session["id"]))["worktree"]["path"])
    task = (await call.structured("compozy__task_create", {"title": "write notes"}))["task"]
    claimed = await call.structured("compozy__task_run_claim_next", {"session_id": session["id"]})
    run_id = claimed["task"]["current_run"]["run_id"]
    # the session's work so far: no turn has ended since it was written
    (checkout / "notes.md").write_text("one\ntwo\n", encoding="utf-8")
    (checkout / "README.md").write_text("hello, world\n", encoding="utf-8")
    done = await call.structured(
        "compozy__task_run_complete",
        {"run_id": run_id, "summary": "notes written", "result_view": "full"},
        scope=CallScope(session["id"]),
    )
    run = done["task"]["current_run"]
    assert run["branch"] == session["branch"]
    assert run["diff_stat"] == {"files": 2, "added": 3, "removed": 1}
    assert done["task"]["task_id"] == task["task_id"]
