"""Issue 22's runtime items with the echo agent as a real process: an agent that crashes while
another prompt waits keeps what its turn streamed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.conftest import Caller

from compozy_mcp.runtime.process import SubprocessLauncher

pytestmark = [pytest.mark.anyio, pytest.mark.process]


@pytest.fixture
def launcher() -> SubprocessLauncher:  # the app of these tests starts real processes
    return SubprocessLauncher()


async def _prompt(call: Caller, sid: str, text: str, **extra: Any) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "timeout_seconds": 60, **extra}
    turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def test_a_crash_keeps_the_running_turns_output_while_another_waits_queued(
    call: Caller,
) -> None:
    sid = (await call.create(provider="echo"))["id"]
    first = await _prompt(call, sid, "crash now", wait=False)
    second = await _prompt(call, sid, "hello", wait=False)
    with anyio.fail_after(20):
        crashed = await call.structured(
            "compozy__session_wait",
            {"session_id": sid, "turn_id": first["turn_id"], "result_view": "full"},
        )
    turn = crashed["turn"]
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_crashed")
    assert turn["chunks"] == ["about to crash"]
    assert turn["final_message"] == "about to crash"
    assert "exited with status 3" in turn["failure"]["summary"]
    # the queued one fails with it (nobody waits on a gone agent); the next prompt starts
    # a new one
    history = await call.structured("compozy__session_history", {"session_id": sid})
    queued = next(t for t in history["turns"] if t["turn_id"] == second["turn_id"])
    assert (queued["status"], queued["stop_reason"]) == ("failed", "agent_crashed")
    third = await _prompt(call, sid, "and more", wait=True)
    assert third["status"] == "completed"
