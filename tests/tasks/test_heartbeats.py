"""Heartbeats (issue 27): a session woken with a prompt on a schedule the daemon's upkeep
drives, with a fake clock; compact heartbeat status preserves the policy snapshot_id (spec)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import Caller
from tests.waiting import wait_until_async

from compozy_mcp.assembly import App
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import FixedClock, timestamp
from compozy_mcp.errors import ToolInvalidInput
from compozy_mcp.sessions.heartbeats import Waker
from compozy_mcp.sessions.model import SessionState
from compozy_mcp.store.base import TranscriptTurn

pytestmark = pytest.mark.anyio

STATUS = "compozy__agent_heartbeat_status"


async def _status(call: Caller, session_id: str, **extra: Any) -> dict[str, Any]:
    beat: dict[str, Any] = (await call.structured(STATUS, {"session_id": session_id, **extra}))[
        "heartbeat"
    ]
    return beat


def _replying(app: App, clock: FixedClock, turn_id: str, reply: str) -> Waker:
    """A waker whose turn is the first of the session and has ended with ``reply``, as the
    runtime stores it once the agent replied."""
    now = timestamp(clock.now())

    async def waker(session_id: str, text: str) -> str:
        turn = TranscriptTurn(
            session_id,
            1,
            0,
            "user",
            text,
            now,
            turn_id=turn_id,
            status="completed",
            final_message=reply,
            ended_at=now,
        )
        with app.store.write() as writer:
            writer.append_turns([turn])
        return turn_id

    return waker


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
    app.services.heartbeats.waker = _replying(app, clock, "turn-hb", " HEARTBEAT_OK\n")
    woken = await call.structured("compozy__agent_heartbeat_wake", {"session_id": session})
    assert woken["heartbeat"]["last_outcome"] == "woken"
    assert (await _status(call, session))["last_outcome"] == "nothing_to_do"


async def test_a_heartbeat_ok_reply_is_not_the_last_turn_the_board_shows(
    call: Caller, app: App, clock: FixedClock
) -> None:
    """Not surfaced to the operator: a card shows a session's last turn, and a wake answered
    with only HEARTBEAT_OK is passed over for the turn before it (a wake with work to report
    is shown)."""
    session = (await call.create(provider="claude"))["id"]
    turns = app.sessions.turns

    def stored(text: str, reply: str) -> str:
        """A prompt the agent took from the queue and answered with ``reply``."""
        call_info = CallInfo("compozy__session_prompt")
        _, turn = turns.enqueue(call_info, session, text, False)

        def taken(_: object, __: object, state: SessionState) -> bool:
            state.queue = [p for p in state.queue if p.prompt_id != turn.turn_id]
            return True

        app.sessions.ledger.mutate(call_info, session, taken)
        ended = replace(turn, status="completed", final_message=reply, ended_at=turn.created_at)
        with app.store.write() as writer:
            writer.save_turn(ended)
        return turn.turn_id or ""

    def waker_replying(reply: str) -> Waker:
        async def waker(session_id: str, text: str) -> str:
            return stored(text, reply)

        return waker

    worked = stored("fix the parser", "fixed: the last line is kept")
    for _ in range(2):  # two quiet wakes in a row
        app.services.heartbeats.waker = waker_replying("HEARTBEAT_OK")
        await call.structured("compozy__agent_heartbeat_wake", {"session_id": session})
    assert (await _status(call, session))["last_outcome"] == "nothing_to_do"
    assert app.sessions.last_turns([session])[session].turn_id == worked
    app.services.heartbeats.waker = waker_replying("the CI is red: fixing it")
    busy = await call.structured("compozy__agent_heartbeat_wake", {"session_id": session})
    shown = app.sessions.last_turns([session])[session]
    assert shown.turn_id == busy["heartbeat"]["last_turn_id"] != worked


async def test_a_cron_schedule_wakes_at_its_matches_and_an_interval_replaces_it(
    call: Caller, app: App, clock: FixedClock
) -> None:
    session = (await call.create(provider="claude"))["id"]
    now = clock.now()
    slot = now.replace(minute=30, second=0) if now.minute < 30 else None
    slot = slot or now.replace(minute=0, second=0) + timedelta(hours=1)
    given = {"session_id": session, "cron": "0,30 * * * *"}
    beat = (await call.structured("compozy__agent_heartbeat_set", given))["heartbeat"]
    full = await _status(call, session, result_view="full")
    assert (full["cron"], beat["next_wake_at"]) == ("0,30 * * * *", timestamp(slot))
    heartbeats = app.services.heartbeats
    clock.advance((slot - now).total_seconds() - 1)
    assert await heartbeats.wake_due() == 0  # a second before the match
    clock.advance(1)
    assert await heartbeats.wake_due() == 1
    woken = await _status(call, session)
    assert woken["next_wake_at"] == timestamp(slot + timedelta(minutes=30))
    await app.runtime.wait_turn(
        CallInfo("compozy__session_wait"), session, woken["last_turn_id"], 30
    )
    # an interval replaces the expression; setting neither keeps the schedule there is, and
    # what else is not given (quiet hours, the last wakes) stays
    quiet = {"session_id": session, "interval_seconds": 600, "quiet_hours": "01:00-02:00"}
    await call("compozy__agent_heartbeat_set", quiet)
    await call("compozy__agent_heartbeat_set", {"session_id": session, "prompt": "look"})
    full = await _status(call, session, result_view="full")
    assert "cron" not in full
    assert (full["interval_seconds"], full["quiet_hours"]) == (600, "01:00-02:00")
    assert [wake["turn_id"] for wake in full["recent_wakes"]] == [woken["last_turn_id"]]
    assert full["next_wake_at"] == timestamp(clock.now() + timedelta(seconds=600))
    await call("compozy__agent_heartbeat_set", {"session_id": session, "quiet_hours": ""})
    assert "quiet_hours" not in await _status(call, session, result_view="full")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"cron": "* * * *"}, "5-field cron expression"),
        ({"cron": "* * * * * *"}, "got 6 fields"),
        ({"cron": "61 * * * *"}, "bad minute"),
        ({"cron": "0 * * * *", "interval_seconds": 600}, "not both"),
    ],
)
async def test_a_bad_cron_expression_is_refused_naming_the_field(
    call: Caller, fields: dict[str, Any], says: str
) -> None:
    session = (await call.create(provider="claude"))["id"]
    with pytest.raises(ToolInvalidInput) as caught:
        await call("compozy__agent_heartbeat_set", {"session_id": session, **fields})
    assert "cron" in caught.value.message
    assert says in caught.value.message


async def test_the_default_prompt_is_the_workspaces_heartbeat_md_as_it_is_at_each_wake(
    call: Caller, app: App, workspace: Path
) -> None:
    session = (await call.create(provider="claude"))["id"]
    await call("compozy__agent_heartbeat_set", {"session_id": session})
    full = await _status(call, session, result_view="full")
    assert (full["prompt_source"], "HEARTBEAT_OK" in full["prompt"]) == ("built-in", True)
    sent: list[str] = []

    async def waker(session_id: str, text: str) -> str:
        sent.append(text)
        return f"turn-{len(sent)}"

    app.services.heartbeats.waker = waker
    heartbeat_md = workspace / "HEARTBEAT.md"
    heartbeat_md.write_text("Check the nightly build.\n", encoding="utf-8")
    await call("compozy__agent_heartbeat_wake", {"session_id": session})
    heartbeat_md.write_text("Check the release branch.\n", encoding="utf-8")
    await call("compozy__agent_heartbeat_wake", {"session_id": session})
    assert sent == ["Check the nightly build.", "Check the release branch."]
    full = await _status(call, session, result_view="full")
    assert (full["prompt"], full["prompt_source"]) == ("Check the release branch.", "HEARTBEAT.md")
    # a prompt of its own wins, and stays when the schedule changes
    await call("compozy__agent_heartbeat_set", {"session_id": session, "prompt": "Mine."})
    await call("compozy__agent_heartbeat_set", {"session_id": session, "cron": "0 * * * *"})
    await call("compozy__agent_heartbeat_wake", {"session_id": session})
    assert sent[-1] == "Mine."
    full = await _status(call, session, result_view="full")
    assert (full["prompt"], full["prompt_source"]) == ("Mine.", "input")


async def _slow_turn_running(call: Caller, session: str) -> None:
    """Prompt the session with a turn that streams for 30 s, and wait until that turn runs
    (not the wake's before it: the session is running then too)."""
    prompt = {"session_id": session, "prompt": "slow 30"}
    slow = (await call.structured("compozy__session_prompt", prompt))["turn"]["turn_id"]

    async def running() -> bool:
        activity = (await call.full(session))["supervision"].get("turn") or {}
        return bool(activity.get("turn_id") == slow)

    ran: bool = await wait_until_async(running, "the slow turn to run")
    assert ran


async def test_a_wake_is_skipped_while_a_turn_runs_and_never_two_at_once(call: Caller) -> None:
    session = (await call.create(provider="claude"))["id"]
    wake = "compozy__agent_heartbeat_wake"
    outcomes: list[str] = []

    async def woken() -> None:
        beat = (await call.structured(wake, {"session_id": session}))["heartbeat"]
        outcomes.append(beat["last_outcome"])

    async with anyio.create_task_group() as group:  # two wakes at once: one turn
        group.start_soon(woken)
        group.start_soon(woken)
    assert sorted(outcomes) == ["skipped_busy", "woken"]
    full = await _status(call, session, result_view="full")
    assert full["wakes"] == 1
    await call("compozy__session_wait", {"session_id": session, "turn_id": full["last_turn_id"]})
    await _slow_turn_running(call, session)
    busy = (await call.structured(wake, {"session_id": session}))["heartbeat"]
    assert busy["last_outcome"] == "skipped_busy"
    await call("compozy__session_prompt_cancel", {"session_id": session})


async def test_the_full_status_keeps_the_last_wakes_newest_first(
    call: Caller, app: App, clock: FixedClock
) -> None:
    session = (await call.create(provider="claude"))["id"]
    app.services.heartbeats.waker = _replying(app, clock, "turn-ok", "HEARTBEAT_OK")
    await call(
        "compozy__agent_heartbeat_set", {"session_id": session, "quiet_hours": "00:00-23:59"}
    )
    clock.advance(3601)
    assert await app.services.heartbeats.wake_due() == 0  # quiet
    await call("compozy__agent_heartbeat_wake", {"session_id": session})  # by hand: not quiet
    full = await _status(call, session, result_view="full")
    assert [(wake["outcome"], wake.get("turn_id")) for wake in full["recent_wakes"]] == [
        ("nothing_to_do", "turn-ok"),  # settled once its turn ended
        ("skipped_quiet", None),
    ]
    assert "recent_wakes" not in await _status(call, session)  # compact

    async def started(session_id: str, text: str) -> str:
        return "turn-running"

    app.services.heartbeats.waker = started
    for _ in range(12):
        await call("compozy__agent_heartbeat_wake", {"session_id": session})
    assert len((await _status(call, session, result_view="full"))["recent_wakes"]) == 10


async def test_a_heartbeat_whose_session_is_gone_is_paused_and_never_stops_the_others(
    call: Caller, app: App, clock: FixedClock
) -> None:
    kept = (await call.create(provider="claude"))["id"]
    deleted = (await call.create(provider="claude"))["id"]
    for session in (kept, deleted):
        await call("compozy__agent_heartbeat_set", {"session_id": session, "interval_seconds": 60})
    with app.store.write() as writer:
        writer.delete_sessions([deleted])
        assert writer.heartbeat(deleted) is None  # its heartbeat goes with it
        # one left behind (a store written before that): due first, its session unknown
        orphan = writer.heartbeat(kept)
        assert orphan is not None
        writer.put_heartbeat(
            replace(orphan, session_id="sess-gone", next_wake_at="2000-01-01T00:00:00Z")
        )
    clock.advance(61)
    heartbeats = app.services.heartbeats
    assert await heartbeats.wake_due() == 1  # the kept session, past the orphan
    with app.store.read() as reader:
        gone = reader.heartbeat("sess-gone")
        assert gone is not None
        assert not gone.enabled
        assert [row.session_id for row in reader.due_heartbeats(timestamp(clock.now()))] == []


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


async def test_a_wake_is_skipped_while_a_prompt_waits_to_run(call: Caller, app: App) -> None:
    """Queued and not yet taken (the agent still starting, or one turn ended and the next not
    begun): a wake then would queue a second prompt behind it."""
    session = (await call.create(provider="claude"))["id"]
    app.sessions.turns.enqueue(CallInfo("compozy__session_prompt"), session, "fix it", False)
    prompted: list[str] = []

    async def waker(session_id: str, text: str) -> str:
        prompted.append(text)
        return "turn-x"

    app.services.heartbeats.waker = waker
    assert (await call.full(session))["runtime"]["status"] != "running"
    beat = await call.structured("compozy__agent_heartbeat_wake", {"session_id": session})
    assert (beat["heartbeat"]["last_outcome"], prompted) == ("skipped_busy", [])


async def test_a_skipped_wake_keeps_the_turn_the_last_prompting_wake_started(
    call: Caller,
) -> None:
    session = (await call.create(provider="claude"))["id"]
    wake = "compozy__agent_heartbeat_wake"
    woken = (await call.structured(wake, {"session_id": session}))["heartbeat"]
    assert woken["last_outcome"] == "woken"
    await _slow_turn_running(call, session)
    skipped = (await call.structured(wake, {"session_id": session}))["heartbeat"]
    assert skipped["last_outcome"] == "skipped_busy"
    assert skipped["last_turn_id"] == woken["last_turn_id"]
    await call("compozy__session_prompt_cancel", {"session_id": session})
