"""Heartbeats (issue 27): a session woken with a prompt on a schedule the daemon's upkeep
drives, with a fake clock; compact heartbeat status preserves the policy snapshot_id (spec)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import FixedClock, timestamp
from compozy_mcp.store.base import TranscriptTurn

pytestmark = pytest.mark.anyio

STATUS = "compozy__agent_heartbeat_status"


async def _status(call: Caller, session_id: str, **extra: Any) -> dict[str, Any]:
    beat: dict[str, Any] = (await call.structured(STATUS, {"session_id": session_id, **extra}))[
        "heartbeat"
    ]
    return beat


async def test_compact_heartbeat_status_preserves_the_policy_snapshot_id(call: Caller) -> None:
    session = (await call.create(provider="claude"))["id"]
    beat = await _status(call, session)
    assert beat == {"session_id": session, "snapshot_id": beat["snapshot_id"], "enabled": False}
    assert beat["snapshot_id"].startswith("pol-")
    set_ = await call.structured(
        "compozy__agent_heartbeat_set", {"session_id": session, "interval_seconds": 60}
    )
    assert set_["heartbeat"]["snapshot_id"] == beat["snapshot_id"]
    full = await _status(call, session, result_view="full")
    assert full["snapshot_id"] == beat["snapshot_id"]
    assert full["interval_seconds"] == 60
    assert "HEARTBEAT_OK" in full["prompt"]


async def test_the_schedule_wakes_a_due_session_and_quiet_hours_skip_it(
    call: Caller, app: App, clock: FixedClock
) -> None:
    session = (await call.create(provider="claude"))["id"]
    await call(
        "compozy__agent_heartbeat_set",
        {"session_id": session, "interval_seconds": 60, "prompt": "look at your queue"},
    )
    heartbeats = app.services.heartbeats
    assert await heartbeats.wake_due() == 0  # not due yet
    clock.advance(61)
    assert await heartbeats.wake_due() == 1
    woken = await _status(call, session, result_view="full")
    assert woken["last_outcome"] == "woken"
    assert woken["wakes"] == 1
    assert woken["last_turn_id"]
    await app.runtime.wait_turn(
        CallInfo("compozy__session_wait"), session, woken["last_turn_id"], 30
    )
    # quiet hours around the next wake: it is skipped, and recorded
    wake_at = clock.now() + timedelta(seconds=61)
    quiet = f"{wake_at.hour:02d}:00-{(wake_at.hour + 1) % 24:02d}:00"
    await call(
        "compozy__agent_heartbeat_set",
        {"session_id": session, "interval_seconds": 60, "quiet_hours": quiet},
    )
    clock.advance(61)
    assert await heartbeats.wake_due() == 0
    skipped = await _status(call, session)
    assert skipped["last_outcome"] == "skipped_quiet"


async def test_a_reply_of_only_heartbeat_ok_is_recorded_as_nothing_to_do(
    call: Caller, app: App, clock: FixedClock
) -> None:
    session = (await call.create(provider="claude"))["id"]
    now = timestamp(clock.now())

    async def waker(session_id: str, text: str) -> str:
        # the agent's turn, as the runtime stores it once the agent replied
        with app.store.write() as writer:
            writer.append_turns(
                [
                    TranscriptTurn(
                        session_id,
                        1,
                        0,
                        "user",
                        text,
                        now,
                        turn_id="turn-hb",
                        status="completed",
                        final_message=" HEARTBEAT_OK\n",
                        ended_at=now,
                    )
                ]
            )
        return "turn-hb"

    app.services.heartbeats.waker = waker
    woken = await call.structured("compozy__agent_heartbeat_wake", {"session_id": session})
    assert woken["heartbeat"]["last_outcome"] == "woken"
    assert (await _status(call, session))["last_outcome"] == "nothing_to_do"


async def test_a_due_wake_is_taken_by_one_of_several_daemons_sweeping_at_once(
    call: Caller, app: App, clock: FixedClock
) -> None:
    """Two daemons' upkeep on one store read the same due heartbeat: one wakes it."""
    from compozy_mcp.sessions.heartbeats import Heartbeats

    session = (await call.create(provider="claude"))["id"]
    await call("compozy__agent_heartbeat_set", {"session_id": session, "interval_seconds": 60})
    clock.advance(61)
    mine = app.services.heartbeats
    other = Heartbeats(app.sessions.ledger, clock, Offload())
    woken: list[str] = []

    async def waker(session_id: str, _: str) -> str:
        woken.append(session_id)
        return "turn-x"

    mine.waker = other.waker = waker
    results = await asyncio.gather(mine.wake_due(), other.wake_due())
    assert sorted(results) == [0, 1]
    assert woken == [session]
