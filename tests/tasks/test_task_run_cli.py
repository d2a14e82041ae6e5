"""``compozy task run ID --agent NAME`` (issue 27, item 2) as a user types it, on the echo agent:
a session of the agent is made for the task (in a worktree of its own when the workspace is a
git repository), the task is claimed for it and the session is prompted with the task."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Home, compozy
from tests.worktrees.gitrepo import make_repo

pytestmark = pytest.mark.process  # the echo agent runs as a process of its own


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path).with_env(COMPOZY_URL="none", NO_COLOR="1")


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def as_json(home: Home, *args: str) -> Any:
    return json.loads(ok(compozy(home, *args, "-o", "json")))


def _task(home: Home, *extra: str) -> str:
    created = as_json(
        home,
        "task",
        "create",
        "Say hello",
        "-d",
        "Greet the team.",
        "--criterion",
        "it greets",
        *extra,
    )
    task_id: str = created["task"]["task_id"]
    return task_id


def test_task_run_makes_a_session_claims_the_task_for_it_and_prompts_it(home: Home) -> None:
    task_id = _task(home)
    done = ok(compozy(home, "task", "run", task_id, "--agent", "echo"))
    first, *turn = done.splitlines()
    assert first.startswith(f"{task_id} claimed by sess-")
    session_id = first.split()[3]
    assert "in worktree" not in first  # the workspace is no git repository
    echoed = "\n".join(turn)
    assert f"echo: Task {task_id}: Say hello" in echoed  # the agent got the task
    assert "- it greets" in echoed
    task = as_json(home, "task", "show", task_id)["task"]
    run = task["current_run"]
    assert (task["state"], run["session_id"], run["state"]) == ("in_progress", session_id, "active")
    assert f'run "{run["run_id"]}"' in echoed  # the prompt names the run to deliver
    history = as_json(home, "session", "history", session_id)
    (only,) = history["turns"]
    assert only["status"] == "completed"
    session = as_json(home, "session", "status", session_id)["session"]
    assert (session["agent_name"], session["runtime"]["selected"]["provider"]) == ("echo", "echo")


def test_task_run_works_in_a_worktree_when_the_workspace_is_a_git_repository(
    home: Home, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    (workspace,) = [
        listed["id"]
        for listed in as_json(home, "workspace", "add", str(repo))["workspaces"]
        if listed["path"] == str(repo)
    ]
    task_id = _task(home, "--workspace", workspace)
    started = [
        json.loads(line)
        for line in ok(
            compozy(home, "task", "run", task_id, "--agent", "echo", "-o", "json")
        ).splitlines()
    ]
    claim = started[0]  # then the turn's updates, a line each
    worktree = claim["session"]["worktree"]
    assert Path(worktree["directory"]).is_dir()
    assert claim["task"]["current_run"]["session_id"] == claim["session"]["id"]
    assert started[-1]["kind"] == "turn_ended"
    queued = as_json(home, "task", "show", task_id)["task"]
    assert queued["current_run"]["run_id"] == claim["task"]["current_run"]["run_id"]


def test_task_run_refuses_a_task_that_is_not_todo_without_making_a_session(home: Home) -> None:
    task_id = _task(home)
    ok(compozy(home, "task", "cancel", task_id))
    refused = compozy(home, "task", "run", task_id, "--agent", "echo")
    assert refused.returncode != 0
    assert f'task "{task_id}" is cancelled; only a todo task can be claimed' in refused.stderr
    assert as_json(home, "session", "list")["sessions"] == []
