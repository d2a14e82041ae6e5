"""Fenced tools: rewind, fork, continue and runtime_set take transcript_epoch,
runtime.generation and runtime.selection_revision; a stale fence changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from tests import pg
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import StaleFence, ToolConflict

#: on each engine (PostgreSQL in the postgres tier)
pytestmark = [pytest.mark.anyio, pg.on_both_engines]


async def _bound(call: Caller) -> str:
    sid: str = (await call.create())["id"]
    await call(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "claude", "selection_revision": 0, "generation": 0},
    )
    return sid


async def _prompts(call: Caller, sid: str, *texts: str) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for text in texts:
        current = await call.full(sid)
        record = await call.session(
            "compozy__session_continue",
            {
                "session_id": sid,
                "prompt": text,
                "transcript_epoch": current.get("transcript_epoch", 0),
                "generation": current["runtime"].get("generation", 0),
            },
        )
    return record


def _turns(app: App, sid: str) -> list[str]:
    return [t.text for t in app.services.sessions.transcript(CallInfo("test"), sid)]


@pytest.mark.parametrize(
    ("tool_id", "fences"),
    [
        ("compozy__session_rewind", {"transcript_epoch": 5, "generation": 1}),
        ("compozy__session_rewind", {"transcript_epoch": 0, "generation": 9}),
        ("compozy__session_continue", {"transcript_epoch": 1, "generation": 1}),
        ("compozy__session_continue", {"transcript_epoch": 0, "generation": 0}),
        ("compozy__session_fork", {"transcript_epoch": 2}),
        (
            "compozy__session_runtime_set",
            {"provider": "codex", "selection_revision": 0, "generation": 1},
        ),
        (
            "compozy__session_runtime_set",
            {"provider": "codex", "selection_revision": 1, "generation": 0},
        ),
    ],
)
async def test_a_stale_fence_fails_with_a_typed_conflict_and_changes_nothing(
    app: App, call: Caller, tool_id: str, fences: dict[str, int]
) -> None:
    sid = await _bound(call)
    before = await call.full(sid)
    with pytest.raises(StaleFence) as caught:
        await call(tool_id, {"session_id": sid, **fences})
    assert (caught.value.code, caught.value.reason) == ("tool_conflict", "stale_fence")
    assert await call.full(sid) == before
    listed = await call.structured("compozy__session_list", {})
    assert len(listed["sessions"]) == 1  # a stale fork created nothing


async def test_zero_is_the_fence_for_a_field_the_record_omits(call: Caller) -> None:
    sid = (await call.create())["id"]  # no generation, no transcript_epoch yet
    record = await call.session(
        "compozy__session_rewind", {"session_id": sid, "transcript_epoch": 0, "generation": 0}
    )
    assert record["transcript_epoch"] == 1
    assert "generation" not in record["runtime"]


async def test_rewind_drops_later_turns_bumps_the_epoch_and_replaces_a_bound_runtime(
    app: App, call: Caller
) -> None:
    sid = await _bound(call)
    await _prompts(call, sid, "one", "two", "three")
    assert _turns(app, sid) == ["one", "two", "three"]
    record = await call.session(
        "compozy__session_rewind",
        {"session_id": sid, "to_turn": 1, "transcript_epoch": 0, "generation": 1},
    )
    assert record["transcript_epoch"] == 1
    assert record["runtime"]["generation"] == 2
    assert _turns(app, sid) == ["one"]
    with pytest.raises(ToolConflict) as caught:
        await call(
            "compozy__session_rewind",
            {"session_id": sid, "to_turn": 4, "transcript_epoch": 1, "generation": 2},
        )
    assert caught.value.reason == "turn_out_of_range"


async def test_continue_resumes_a_stopped_session_and_binds_its_runtime(call: Caller) -> None:
    sid = await _bound(call)
    await call("compozy__session_stop", {"session_id": sid})
    record = await call.session(
        "compozy__session_continue", {"session_id": sid, "transcript_epoch": 0, "generation": 1}
    )
    assert record["state"] == "active"
    assert "stop_reason" not in record
    assert "stop_cause" not in record
    assert record["runtime"]["status"] == "ready"
    assert record["runtime"]["generation"] == 2


async def test_prompts_queue_until_a_runtime_is_bound(call: Caller) -> None:
    sid = (await call.create(provider="claude"))["id"]
    queued = await call.session(
        "compozy__session_continue",
        {"session_id": sid, "transcript_epoch": 0, "generation": 0, "prompt": "hello"},
    )
    # continue binds the selected runtime; its agent takes the queued prompt and answers it
    assert queued["runtime"]["status"] == "ready"
    turn = await call.structured(
        "compozy__session_wait", {"session_id": sid, "timeout_seconds": 30, "result_view": "full"}
    )
    assert turn["turn"]["status"] == "completed"
    assert turn["turn"]["final_message"] == "echo: hello"
    assert "queue" not in await call.full(sid)
    plain = (await call.create())["id"]
    waiting = await call.session(
        "compozy__session_continue",
        {"session_id": plain, "transcript_epoch": 0, "generation": 0, "prompt": "hello"},
    )
    assert waiting["queue"]["pending"] == 1


async def test_fork_copies_the_transcript_up_to_a_turn_into_a_new_session(
    app: App, call: Caller
) -> None:
    sid = await _bound(call)
    await _prompts(call, sid, "a", "b", "c")
    fork = await call.session(
        "compozy__session_fork", {"session_id": sid, "transcript_epoch": 0, "at_turn": 2}
    )
    assert fork["id"] != sid
    assert fork["lineage"]["kind"] == "fork"
    assert fork["lineage"]["parent_session_id"] == sid
    assert fork["lineage"]["root_session_id"] == sid
    assert fork["runtime"] == {"status": "unbound", "selection_revision": 1}
    assert _turns(app, fork["id"]) == ["a", "b"]
    assert _turns(app, sid) == ["a", "b", "c"]
    source = await call.session("compozy__session_status", {"session_id": sid})
    assert [c["kind"] for c in source["children"]] == ["fork"]
    assert source["subagent_summary"]["total"] == 0
