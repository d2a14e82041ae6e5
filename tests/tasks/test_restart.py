"""A restart with claims and schedules in flight (issue 27): what the store holds is picked up
by the next app or daemon: an expired claim goes back to todo, a due heartbeat wakes its
session."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.api.support import Home, running_daemon
from tests.conftest import Caller
from tests.runtime.inprocess import InProcessLauncher
from tests.waiting import wait_until_async

from compozy_mcp.assembly import open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.remote import RemoteHost
from compozy_mcp.hostapi.target import parse_target
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


@pytest.mark.process
async def test_a_daemon_restarted_picks_up_the_claims_and_schedules_in_its_store(
    tmp_path: Path,
) -> None:
    """Two ``compozy serve`` processes on one store, the first stopped with a claim and a
    heartbeat in flight. While it is down their time passes (written to the store as the
    clock would have moved them); the second daemon's upkeep expires the claim that ran out,
    leaves the one that did not, and wakes the heartbeat that fell due."""
    home = Home.make(tmp_path).with_env(COMPOZY_UPKEEP_SECONDS="1")
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as first:
        host = RemoteHost(parse_target(str(first.url)))
        try:
            made = {"agent_name": "worker", "provider": "echo"}
            lapsing = (await host.call(ops.CREATE_SESSION, made))["session"]["id"]
            holding = (await host.call(ops.CREATE_SESSION, made))["session"]["id"]
            ran_out = (
                await host.call(ops.BY_NAME["task_create"], {"title": "ran out", "priority": 9})
            )["task"]
            kept = (await host.call(ops.BY_NAME["task_create"], {"title": "kept", "priority": 1}))[
                "task"
            ]
            await host.call(
                ops.BY_NAME["task_run_claim_next"], {"session_id": lapsing, "lease_seconds": 60}
            )
            await host.call(
                ops.BY_NAME["task_run_claim_next"], {"session_id": holding, "lease_seconds": 86_400}
            )
            await host.call(
                ops.BY_NAME["heartbeat_set"], {"session_id": lapsing, "cron": "0 3 * * *"}
            )
        finally:
            await host.aclose()
    past = "2000-01-01T00:00:00Z"
    store = SQLiteStore(Path(home.env["COMPOZY_HOME"]) / "compozy.db")
    with store, store.write() as writer:
        task = writer.task(ran_out["task_id"])
        assert task is not None
        assert task.current_run_id is not None
        run = writer.task_run(task.current_run_id)
        beat = writer.heartbeat(lapsing)
        assert run is not None
        assert beat is not None
        writer.put_task_run(replace(run, claim_expires_at=past))
        writer.put_heartbeat(replace(beat, next_wake_at=past))
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as second:
        host = RemoteHost(parse_target(str(second.url)))
        try:

            async def expired() -> dict[str, Any] | None:
                task: dict[str, Any] = (
                    await host.call(ops.BY_NAME["task_status"], {"task_id": ran_out["task_id"]})
                )["task"]
                return task if task["state"] == "todo" else None

            back: dict[str, Any] = await wait_until_async(expired, "the claim that ran out expired")
            assert [run["state"] for run in back["runs"]] == ["expired"]
            still = (await host.call(ops.BY_NAME["task_status"], {"task_id": kept["task_id"]}))[
                "task"
            ]
            assert (still["state"], still["current_run"]["session_id"]) == ("in_progress", holding)

            async def woken() -> dict[str, Any] | None:
                shown: dict[str, Any] = (
                    await host.call(ops.BY_NAME["heartbeat_status"], {"session_id": lapsing})
                )["heartbeat"]
                return shown if shown.get("last_outcome") else None

            status: dict[str, Any] = await wait_until_async(
                woken, "the heartbeat that fell due woke its session"
            )
            assert (status["last_outcome"], status["wakes"]) == ("woken", 1)
            assert status["next_wake_at"].endswith("T03:00:00Z")  # the cron schedule goes on
            assert status["cron"] == "0 3 * * *"
        finally:
            await host.aclose()


@pytest.mark.process
async def test_two_daemons_on_one_store_never_claim_the_same_task(tmp_path: Path) -> None:
    """Issue 27, item 2: twenty sessions claim ten tasks at once, half through each of two
    ``compozy serve`` processes sharing the store; each task is claimed once."""
    home = Home.make(tmp_path)
    with (
        running_daemon(home, "--port", "0", "--no-uds", listeners=1) as first,
        running_daemon(home, "--port", "0", "--no-uds", listeners=1) as second,
    ):
        hosts = [RemoteHost(parse_target(str(d.url))) for d in (first, second)]
        try:
            made = {"agent_name": "worker", "provider": "echo"}
            workers = [
                (await hosts[0].call(ops.CREATE_SESSION, made))["session"]["id"] for _ in range(20)
            ]
            tasks = {
                (await hosts[1].call(ops.BY_NAME["task_create"], {"title": f"task {n}"}))["task"][
                    "task_id"
                ]
                for n in range(10)
            }
            results: list[dict[str, Any]] = []

            async def claim(index: int, worker: str) -> None:
                host = hosts[index % 2]
                results.append(
                    await host.call(ops.BY_NAME["task_run_claim_next"], {"session_id": worker})
                )

            async with anyio.create_task_group() as group:
                for index, worker in enumerate(workers):
                    group.start_soon(claim, index, worker)
            won = [result["task"]["task_id"] for result in results if result["claimed"]]
            assert sorted(won) == sorted(tasks)  # every task once, none twice
            assert sum(not result["claimed"] for result in results) == 10
        finally:
            for host in hosts:
                await host.aclose()
