"""Issue 15, item 5: the upgrade path. A run started before views keeps the contract it pinned
and its nodes return the full record; a pre-view Loop snapshot is translated to ``full`` on
load, through the table of superseded digests in one module (``loops/superseded.py``, the
spec's "#1462")."""

from __future__ import annotations

from typing import Any

import pytest
from tests.loops.support import tool

from compozy_mcp.assembly import App
from compozy_mcp.jsonutil import schema_digest
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.native import build_registry
from compozy_mcp.store.loops import LoopRow, LoopRunRow
from compozy_mcp.views import SELECTOR_FIELD

pytestmark = pytest.mark.anyio

STATUS = "compozy__session_status"
PRE_VIEW_DEFINITION = {
    "graph": {
        "nodes": [
            {
                "id": "review",
                "class": "control",
                "kind": "gate",
                "params": {"criteria": [{"id": "go", "prompt": "Go?"}]},
            },
            {
                "id": "inspect",
                "class": "action",
                "kind": STATUS,
                "params": {"session_id": "{{ .inputs.session_id }}"},
            },
        ],
        "edges": [{"from": "review", "to": "inspect"}],
    }
}


#: tools whose full schema has since declared more of the same record (issue 23: the fields of
#: an event's open payload that compact keeps); the record, and the table's digest of the
#: contract runs pinned before views, are unchanged
DESCRIBED_SINCE = {"compozy__session_events"}
#: tools whose input has since been held to more (issue 22: a hooks_runs cursor to the cursor
#: pattern); the table keeps the digest runs pinned before views, as it must
INPUT_NARROWED_SINCE = {"compozy__hooks_runs"}


def test_the_table_holds_each_tools_contract_before_views() -> None:
    """Every tool with views has its pre-view digests in the table: its input schema without
    the selector, and its record (the full view, unchanged by views)."""
    registry = build_registry()
    with_views = [tool for tool in registry if tool.has_views]
    assert set(superseded.SUPERSEDED) <= {tool.id for tool in with_views}
    for tool_id, (input_digest, output_digest) in superseded.SUPERSEDED.items():
        live = registry.get(tool_id)
        before = dict(live.input_schema)
        before["properties"] = {
            k: v for k, v in before["properties"].items() if k != SELECTOR_FIELD
        }
        if tool_id not in INPUT_NARROWED_SINCE:
            assert input_digest == schema_digest(before), tool_id
        assert live.views is not None
        if tool_id not in DESCRIBED_SINCE:
            assert output_digest == live.views.full.digest, tool_id


def _pre_view_run(sid: str) -> dict[str, Any]:
    input_digest, output_digest = superseded.SUPERSEDED[STATUS]
    return {
        "run_id": "run-old",
        "loop_id": "old",
        "loop_version": 1,
        "status": "waiting",
        "started_by": None,
        "owner": None,
        "inputs": {"session_id": sid},
        "contracts": {
            "inspect": {
                "tool_id": STATUS,
                "input_schema_digest": input_digest,
                "output_schema_digest": output_digest,
            }
        },
        "nodes": {
            "review": {
                "node_id": "review",
                "class": "control",
                "kind": "gate",
                "status": "waiting",
                "gate": {"criteria": [{"id": "go", "prompt": "Go?"}]},
            },
            "inspect": {
                "node_id": "inspect",
                "class": "action",
                "kind": STATUS,
                "status": "pending",
            },
        },
        "created_at": "2026-11-10T14:02:11Z",
        "updated_at": "2026-11-10T14:02:11Z",
    }


async def test_a_run_started_before_views_keeps_its_contract_and_returns_the_full_record(
    app: App,
) -> None:
    sid = (
        await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    ).structured["session"]["id"]
    doc = _pre_view_run(sid)
    with app.store.write() as writer:
        writer.add_loop(
            LoopRow("old", 1, None, {"document": PRE_VIEW_DEFINITION}, "2026-11-10T14:02:11Z")
        )
        writer.put_loop_run(
            LoopRunRow(
                "run-old", "old", 1, "waiting", None, doc["created_at"], doc["updated_at"], doc
            )
        )
    status = (await tool(app, "status", {"run_id": "run-old", "result_view": "full"}))["run"]
    assert status["contracts"]["inspect"]["view"] == "full"
    done = await tool(app, "approve", {"run_id": "run-old", "decision": "approve", "wait": True})
    run = done["run"]
    assert run["status"] == "succeeded", run
    inspect = next(n for n in run["nodes"] if n["node_id"] == "inspect")
    assert inspect["result_view"] == "full"
    full = (await tool(app, "status", {"run_id": "run-old", "result_view": "full"}))["run"]
    output = next(n for n in full["nodes"] if n["node_id"] == "inspect")["output"]
    assert "supervision" in output["session"]  # the full record


async def test_a_pre_view_snapshot_is_translated_to_full_on_load(app: App) -> None:
    with app.store.write() as writer:
        writer.add_loop(
            LoopRow("old", 1, None, {"document": PRE_VIEW_DEFINITION}, "2026-11-10T14:02:11Z")
        )
    loop = (await tool(app, "inspect", {"loop_id": "old", "result_view": "full"}))["loop"]
    assert [n.get("result_view") for n in loop["nodes"]] == [None, "full"]


async def test_an_unknown_pre_view_digest_stays_and_goes_stale(app: App) -> None:
    sid = (
        await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    ).structured["session"]["id"]
    doc = _pre_view_run(sid)
    doc["contracts"]["inspect"]["output_schema_digest"] = "f" * 64
    with app.store.write() as writer:
        writer.add_loop(
            LoopRow("old", 1, None, {"document": PRE_VIEW_DEFINITION}, "2026-11-10T14:02:11Z")
        )
        writer.put_loop_run(
            LoopRunRow(
                "run-old", "old", 1, "waiting", None, doc["created_at"], doc["updated_at"], doc
            )
        )
    done = await tool(app, "approve", {"run_id": "run-old", "decision": "approve", "wait": True})
    assert done["run"]["status"] == "failed"
    assert done["run"]["error"]["reason"] == "action_contract_stale"


def test_a_run_pinned_before_views_on_session_events_still_pins_its_full_view() -> None:
    """The events schema declared its payload's kept fields later (issue 23): a run pinned
    before views keeps working, pinned to today's full contract."""
    from compozy_mcp.loops._contracts import live_contract

    registry = build_registry()
    tool_id = "compozy__session_events"
    input_digest, output_digest = superseded.SUPERSEDED[tool_id]
    doc = {
        "contracts": {
            "events": {
                "tool_id": tool_id,
                "input_schema_digest": input_digest,
                "output_schema_digest": output_digest,
            }
        }
    }
    translated = superseded.translate_run(doc, registry)
    events = registry.get(tool_id)
    assert translated["contracts"]["events"] == live_contract(events, "full")
    assert translated["contracts"]["events"]["view"] == "full"
