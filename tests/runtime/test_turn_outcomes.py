"""Issue 21, items 4, 5 and 8 (and issue 30's failed-turn reason), with agents run in this
process: no prompt waits on a dead start, ``--no-wait`` returns when the turn is queued, an
agent that fails a turn fails its runtime with the reason, and a turn's summary keeps its
answer."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.conftest import Caller
from tests.runtime.inprocess import InProcessLauncher

from compozy_mcp.assembly import App
from compozy_mcp.runtime._turn import TurnRecorder
from compozy_mcp.sessions.turn_record import SUMMARY_CHARS, turn_record
from compozy_mcp.store.base import TranscriptTurn

pytestmark = pytest.mark.anyio


def _agents(app: App, text: str) -> None:
    app.settings.home.mkdir(parents=True, exist_ok=True)
    (app.settings.home / "agents.yaml").write_text(text, encoding="utf-8")


async def _prompt(call: Caller, sid: str, text: str, **extra: Any) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "timeout_seconds": 60, **extra}
    turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def _events(call: Caller, sid: str) -> list[dict[str, Any]]:
    page = await call.structured(
        "compozy__session_events", {"session_id": sid, "result_view": "full"}
    )
    events: list[dict[str, Any]] = page["events"]
    return events


# --- no prompt waits on a dead start ---------------------------------------------------------


async def test_a_prompt_to_an_agent_that_cannot_start_fails_its_turn_at_once(
    app: App, call: Caller
) -> None:
    _agents(app, "agents:\n  broken:\n    command: /nonexistent/agent\n")
    sid = (await call.create(provider="broken"))["id"]
    with anyio.fail_after(10):  # the wait is 60 s: the failure must not wait for it
        turn = await _prompt(call, sid, "hello", wait=True, result_view="full")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_start_failed")
    assert turn["failure"] == {
        "kind": "agent_start_failed",
        "summary": 'agent "broken": cannot start "/nonexistent/agent": No such file or directory',
    }
    compact = (await call.structured("compozy__session_history", {"session_id": sid}))["turns"]
    assert compact[0]["failure"] == turn["failure"]  # a failure compact keeps
    ended = [e for e in await _events(call, sid) if e["kind"] == "turn_ended"]
    assert ended[-1]["payload"]["stop_reason"] == "agent_start_failed"
    session = await call.session("compozy__session_status", {"session_id": sid})
    assert session["runtime"]["status"] == "failed"
    assert "queue" not in session


@pytest.mark.settings(agent_start_timeout_seconds=1)
async def test_an_agent_that_never_starts_fails_the_turn_at_its_start_timeout(
    app: App, call: Caller
) -> None:
    _agents(app, "agents:\n  silent:\n    command: silent\n")
    sid = (await call.create(provider="silent"))["id"]
    with anyio.fail_after(15):
        turn = await _prompt(call, sid, "hello", wait=True, result_view="full")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_start_failed")
    assert turn["failure"]["kind"] == "agent_start_timeout"
    assert "stderr: silent: waiting forever" in turn["failure"]["summary"]


async def test_no_wait_returns_as_soon_as_the_turn_is_queued(app: App, call: Caller) -> None:
    _agents(app, "agents:\n  silent:\n    command: silent\n")
    sid = (await call.create(provider="silent"))["id"]
    with anyio.fail_after(5):  # the start timeout is 60 s
        turn = await _prompt(call, sid, "hello", wait=False)
    assert turn["status"] == "queued"
    await app.shutdown()  # the start under way is given up with the process


async def test_no_wait_then_a_failed_start_fails_the_queued_turn_for_its_waiter(
    app: App, call: Caller
) -> None:
    _agents(app, "agents:\n  broken:\n    command: /nonexistent/agent\n")
    sid = (await call.create(provider="broken"))["id"]
    queued = await _prompt(call, sid, "hello", wait=False)
    assert queued["status"] == "queued"
    with anyio.fail_after(10):
        waited = await call.structured(
            "compozy__session_wait",
            {"session_id": sid, "turn_id": queued["turn_id"], "timeout_seconds": 60},
        )
    assert (waited["turn"]["status"], waited["turn"]["stop_reason"]) == (
        "failed",
        "agent_start_failed",
    )


# --- an agent that fails a turn -------------------------------------------------------------


async def test_an_agent_that_fails_a_turn_fails_its_runtime_and_says_why(
    call: Caller, launcher: InProcessLauncher
) -> None:
    sid = (await call.create(provider="echo"))["id"]
    turn = await _prompt(call, sid, "fail Authentication required", wait=True, result_view="full")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_error")
    assert "Authentication required" in turn["failure"]["summary"]
    session = await call.session("compozy__session_status", {"session_id": sid})
    assert session["runtime"]["status"] == "failed"  # not left "ready" to fail every turn
    assert "Authentication required" in session["runtime"]["failure"]["summary"]
    assert launcher.running() == []  # its process ended
    again = await _prompt(call, sid, "hello again", wait=True)
    assert again["status"] == "completed"  # the next prompt started a new agent


# --- a summary that keeps the answer ----------------------------------------------------------


class _Update:
    """An ACP session update, as the recorder folds it."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return dict(self.fields)


def _message(text: str) -> _Update:
    return _Update(session_update="agent_message_chunk", content={"type": "text", "text": text})


def _tool(call_id: str) -> _Update:
    return _Update(session_update="tool_call", tool_call_id=call_id, title=f"tool {call_id}")


def test_the_message_segments_are_joined_and_a_long_summary_keeps_the_answer() -> None:
    recorder = TurnRecorder(TranscriptTurn("s", 1, 0, "user", "go", "2026-11-10T14:02:11Z", "t1"))
    for index in range(12):
        recorder.fold(_message(f"Step {index}: I will now look at part {index} of the code. " * 2))
        recorder.fold(_tool(f"c{index}"))
    recorder.fold(_message("The answer: "))
    recorder.fold(_message("the flaky test waits on a timer."))
    outcome = recorder.outcome("completed", "end_turn", "2026-11-10T14:03:11Z")
    record = turn_record(outcome)
    final = record["final_message"]
    assert "code. \n\nStep 1:" in final  # narration before each tool call, kept apart
    assert final.endswith("\n\nThe answer: the flaky test waits on a timer.")
    assert len(final) > SUMMARY_CHARS
    assert record["summary"] == {
        "text": "The answer: the flaky test waits on a timer.",
        "truncated": True,
    }


def test_a_short_message_is_its_own_summary() -> None:
    recorder = TurnRecorder(TranscriptTurn("s", 1, 0, "user", "go", "2026-11-10T14:02:11Z", "t1"))
    recorder.fold(_message("Looking."))
    recorder.fold(_tool("c1"))
    recorder.fold(_message("Done."))
    record = turn_record(recorder.outcome("completed", "end_turn", "2026-11-10T14:03:11Z"))
    assert record["summary"] == {"text": "Looking.\n\nDone.", "truncated": False}
