"""Issue 15, item 4: a run, its node states and outputs are persisted as they happen, and a run
survives its process: waiting at a gate it is answered from another process; left running by a
process that is gone, it resumes when every node cut off may be repeated, and is marked
interrupted otherwise, never silently lost."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tests.loops.support import gate, graph, status_node, tool, transform

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings

pytestmark = pytest.mark.anyio

DEAD_OWNER = "999999999:gone"


def _open(settings: Settings, clock: FixedClock) -> App:
    return open_app(settings, clock=clock)  # the file store of settings.home


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def _session(app: App) -> str:
    result = await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    session_id: str = result.structured["session"]["id"]
    return session_id


async def test_a_run_waiting_at_a_gate_is_answered_after_a_restart(
    settings: Settings, clock: FixedClock
) -> None:
    text = graph(status_node(view="full"), gate("review"), edges=(("inspect", "review"),))
    with _open(settings, clock) as first:
        sid = await _session(first)
        run = (
            await tool(
                first, "run", {"definition": text, "inputs": {"session_id": sid}, "wait": True}
            )
        )["run"]
        assert run["status"] == "waiting"
        await first.loops.shutdown()
    with _open(settings, clock) as second:
        assert await second.loops.recover() == {"resumed": [], "interrupted": [], "failed": []}
        seen = await tool(second, "status", {"run_id": run["run_id"], "result_view": "full"})
        assert seen["run"]["status"] == "waiting"
        assert "supervision" in _node(seen["run"], "inspect")["output"]["session"]
        done = await tool(
            second, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True}
        )
        assert done["run"]["status"] == "succeeded"


async def _left_running(app: App, text: str, node_id: str, **inputs: Any) -> str:
    """A run as a process that died in the middle of ``node_id`` leaves it."""
    run = (await tool(app, "run", {"definition": text, "inputs": inputs, "wait": True}))["run"]
    with app.store.write() as writer:
        row = writer.loop_run(run["run_id"])
        assert row is not None
        doc = row.doc
        for state in doc["nodes"].values():
            state.pop("output", None)
            state.pop("ended_at", None)
            state["status"] = "pending"
        doc["nodes"][node_id]["status"] = "running"
        doc.update(status="running", owner=DEAD_OWNER)
        doc.pop("ended_at", None)
        writer.put_loop_run(replace(row, status="running", owner=DEAD_OWNER, doc=doc))
    run_id: str = run["run_id"]
    return run_id


async def test_a_run_cut_off_in_a_read_only_node_resumes(
    settings: Settings, clock: FixedClock
) -> None:
    text = graph(status_node(view="full"), transform("t", "x"), edges=(("inspect", "t"),))
    with _open(settings, clock) as first:
        sid = await _session(first)
        run_id = await _left_running(first, text, "inspect", session_id=sid)
    with _open(settings, clock) as second:
        assert await second.loops.recover() == {
            "resumed": [run_id],
            "interrupted": [],
            "failed": [],
        }
        await second.loops.settle(run_id, 30)
        run = (await tool(second, "status", {"run_id": run_id}))["run"]
        assert run["status"] == "succeeded"
        assert [n["status"] for n in run["nodes"]] == ["succeeded", "succeeded"]


async def test_a_run_cut_off_in_a_node_that_may_have_acted_is_interrupted(
    settings: Settings, clock: FixedClock
) -> None:
    text = graph(
        "id: rename\nclass: action\nkind: compozy__session_rename\nparams:\n"
        '  session_id: "{{ .inputs.session_id }}"\n  name: renamed',
        transform("t", "x"),
        edges=(("rename", "t"),),
    )
    with _open(settings, clock) as first:
        sid = await _session(first)
        run_id = await _left_running(first, text, "rename", session_id=sid)
    with _open(settings, clock) as second:
        assert await second.loops.recover() == {
            "resumed": [],
            "interrupted": [run_id],
            "failed": [],
        }
        run = (await tool(second, "status", {"run_id": run_id}))["run"]
        assert run["status"] == "interrupted"
        assert run["error"]["reason"] == "run_interrupted"
        assert _node(run, "rename")["status"] == "interrupted"
        assert _node(run, "t")["status"] == "pending"


async def test_a_run_another_live_process_drives_is_left_alone(
    settings: Settings, clock: FixedClock
) -> None:
    import os

    text = graph(status_node(view="full"))
    with _open(settings, clock) as first:
        sid = await _session(first)
        run_id = await _left_running(first, text, "inspect", session_id=sid)
        with first.store.write() as writer:
            row = writer.loop_run(run_id)
            assert row is not None
            live = f"{os.getpid()}:other"
            writer.put_loop_run(replace(row, owner=live, doc={**row.doc, "owner": live}))
        assert await first.loops.recover() == {"resumed": [], "interrupted": [], "failed": []}


async def test_node_states_are_saved_as_they_happen(app: App) -> None:
    text = graph(transform("a", "1"), gate("review"), edges=(("a", "review"),))
    run = (await tool(app, "run", {"definition": text, "wait": True}))["run"]
    with app.store.read() as reader:
        row = reader.loop_run(run["run_id"])
    assert row is not None
    assert row.status == "waiting"
    assert row.doc["nodes"]["a"]["output"] == {"value": 1}
    assert row.doc["nodes"]["review"]["status"] == "waiting"
    assert row.version > 3  # queued, running, each node's moves: one write each
