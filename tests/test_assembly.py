"""The app's life in a process (:meth:`compozy_mcp.assembly.App.running`): its agents' turn
runners and Loop runs are tasks of its one group, and end with the block."""

from __future__ import annotations

import anyio
import pytest
from tests.runtime.inprocess import InProcessLauncher

from compozy_mcp.assembly import open_app
from compozy_mcp.config import Settings
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio


async def test_the_agents_and_their_turn_runners_end_with_the_apps_running_block(
    settings: Settings,
) -> None:
    with open_app(settings, store=SQLiteStore.memory(), launcher=InProcessLauncher()) as app:
        async with app.running():
            made = await app.dispatcher.call(
                "compozy__session_create", {"agent_name": "general", "provider": "echo"}
            )
            sid = made.structured["session"]["id"]
            prompt = {"session_id": sid, "prompt": "hi", "wait": True, "timeout_seconds": 30}
            with anyio.fail_after(30):
                done = await app.dispatcher.call("compozy__session_prompt", prompt)
            assert done.structured["turn"]["status"] == "completed"
            assert app.runtime.live_sessions() == [sid]
            assert {job.name for job in app.tasks.jobs("agent-")} == {
                f"agent-exit-{sid}",
                f"agent-turns-{sid}",
            }
        assert app.runtime.live_sessions() == []
        assert app.tasks.jobs() == []
        status = await app.dispatcher.call(
            "compozy__session_status", {"session_id": sid, "result_view": "full"}
        )
        assert status.structured["session"]["runtime"]["status"] == "unbound"
