"""Issue 22's runtime items with the echo agent as a real process: an agent that crashes while
another prompt waits keeps what its turn streamed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.runtime.process import SubprocessLauncher

pytestmark = [pytest.mark.anyio, pytest.mark.process]


class _Recording(SubprocessLauncher):
    """Starts agents as processes and keeps each one's transport."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[Any] = []

    async def launch(self, *args: Any, **kwargs: Any) -> Any:
        transport = await super().launch(*args, **kwargs)
        self.started.append(transport)
        return transport


@pytest.fixture
def launcher() -> _Recording:  # the app of these tests starts real processes
    return _Recording()


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


async def test_a_start_under_way_when_the_app_stops_leaves_no_process(
    app: App, call: Caller, launcher: _Recording
) -> None:
    """A prompt that did not wait starts its agent in the background; the app stops while the
    agent has not answered its handshake: the start is cancelled and its process still ends."""
    app.settings.home.mkdir(parents=True, exist_ok=True)
    (app.settings.home / "agents.yaml").write_text(
        "agents:\n  mute:\n    command: sleep\n    args: ['300']\n", encoding="utf-8"
    )
    sid = (await call.create(provider="mute"))["id"]
    turn = await _prompt(call, sid, "hello", wait=False)
    with anyio.fail_after(20):
        while not launcher.started:
            await anyio.sleep(0.02)
    process = launcher.started[0].process
    assert process.returncode is None
    with anyio.fail_after(10):  # not the 60 s start timeout
        await app.shutdown()
    assert process.returncode is not None
    # given up, not failed: the prompt waits, queued, for the next process to start the agent
    history = await call.structured("compozy__session_history", {"session_id": sid})
    assert [(t["turn_id"], t["status"]) for t in history["turns"]] == [(turn["turn_id"], "queued")]
