"""Issue 14 with a real agent: a session on the ``echo`` agent, run by a daemon, calls a
mutating tool through the MCP endpoint compozy hands every agent (``compozy proxy --session``);
the call waits for the operator's approval whatever ``result_view`` it sent, and once allowed
the agent's retry runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.api.support import Daemon, Home, running_daemon, short_dir

pytestmark = pytest.mark.process


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    home = Home.make(tmp_path).with_env(COMPOZY_PERMISSION_MODE="default")
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as running,
    ):
        yield running


def _prompt(http: httpx2.Client, sid: str, text: str) -> dict[str, Any]:
    done = http.post(
        f"/api/sessions/{sid}/prompt",
        json={"prompt": text, "wait": True, "timeout_seconds": 120},
        timeout=180,
    )
    assert done.status_code == 200, done.text
    turn: dict[str, Any] = done.json()["turn"]
    assert turn["status"] == "completed", turn
    return turn


VIEWS: list[dict[str, str]] = [{}, {"result_view": "compact"}, {"result_view": "full"}]


def test_an_agents_mutating_call_waits_for_approval_and_its_retry_runs(daemon: Daemon) -> None:
    with daemon.client() as http:
        for view in VIEWS:
            _approve_and_retry(http, view)


def _approve_and_retry(http: httpx2.Client, view: dict[str, str]) -> None:
    """One session: the call is held, the operator allows it once, the agent's retry runs."""
    made = http.post("/api/sessions", json={"agent_name": "general", "provider": "echo"})
    sid = made.json()["session"]["id"]
    call = "call compozy__session_rename " + json.dumps(
        {"session_id": sid, "name": "renamed by echo", **view}
    )
    first = _prompt(http, sid, call)
    assert first["final_message"].startswith("tool error: ")
    assert "approval" in first["final_message"]
    session = http.get(f"/api/sessions/{sid}").json()["session"]
    (waiting,) = [i for i in session["pending_interactions"] if i["kind"] == "approval"]
    assert (session["badge"], session["board_column"]) == ("waiting-for-auth", "needs_you")
    assert "name" not in session  # the tool did not run
    answered = http.post(
        f"/api/sessions/{sid}/approve",
        json={"interaction_id": waiting["interaction_id"], "decision": "allow-once"},
    )
    assert answered.status_code == 200, answered.text
    second = _prompt(http, sid, call)
    assert second["final_message"].startswith("tool result: "), second["final_message"]
    assert http.get(f"/api/sessions/{sid}").json()["session"]["name"] == "renamed by echo"
    calls = second["tool_calls"]
    assert [c["status"] for c in calls] == ["completed"]
