"""A restart with claims and schedules in flight (issue 27): what the store holds is picked up
by the next daemon: an expired claim goes back to todo, a due heartbeat wakes its session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Caller
from tests.runtime.inprocess import InProcessLauncher

from compozy_mcp.assembly import open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio


async def test_claims_and_heartbeats_survive_a_restart(
    settings: Settings, clock: FixedClock, tmp_path: Path
) -> None:
    path = tmp_path / "restart.db"
    with open_app(
        settings, store=SQLiteStore(path), clock=clock, launcher=InProcessLauncher()
    ) as first:
        call = Caller(first)
        session = (await call.create(provider="claude"))["id"]
        task = (await call.structured("compozy__task_create", {"title": "in flight"}))["task"]
        await call("compozy__task_run_claim_next", {"session_id": session, "lease_seconds": 60})
        await call("compozy__agent_heartbeat_set", {"session_id": session, "interval_seconds": 60})
        await first.shutdown()
    clock.advance(120)
    with open_app(
        settings, store=SQLiteStore(path), clock=clock, launcher=InProcessLauncher()
    ) as second:
        call = Caller(second)
        second.upkeep.run()
        status = await call.structured(
            "compozy__task_status", {"task_id": task["task_id"], "result_view": "full"}
        )
        assert status["task"]["state"] == "todo"
        assert [run["state"] for run in status["task"]["runs"]] == ["expired"]
        assert await second.services.heartbeats.wake_due() == 1
        beat = await call.structured("compozy__agent_heartbeat_status", {"session_id": session})
        assert beat["heartbeat"]["last_outcome"] == "woken"
        await second.shutdown()
