"""Issue 15, item 4: runs. Create, run, status (compact keeps gate criterion prompts), list,
runs, cancel, approve; branch, fan-out/collect and typed inputs; per tool node the pinned
contract of the view it selected, dispatch with that view pinned (a hook changing it fails the
node with ``tool_denied`` / ``result_view_pinned``), ``action_contract_stale``; and who may act
on a run."""

from __future__ import annotations

from typing import Any

import pytest
from tests import pg
from tests.conftest import Caller
from tests.loops.support import gate, graph, status_node, tool, transform

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied, ToolInvalidInput

#: on each engine (PostgreSQL in the postgres tier)
pytestmark = [pytest.mark.anyio, pg.on_both_engines]

THREE_NODES = graph(
    status_node(view="full"),
    transform("summary", '"{{ .nodes.inspect.output.session.lineage.permission_policy.tools }}"'),
    gate("review", ("tools_ok", "Are these the tools the agent should have?")),
    edges=(("inspect", "summary"), ("summary", "review")),
)


async def _session(call: Caller, **fields: Any) -> str:
    session_id: str = (await call.create(**fields))["id"]
    return session_id


async def _run(app: App, text: str, **request: Any) -> dict[str, Any]:
    run: dict[str, Any] = (
        await tool(app, "run", {"definition": text, "wait": True, "result_view": "full", **request})
    )["run"]
    return run


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def test_a_run_waits_at_its_gate_and_goes_on_when_approved(app: App, call: Caller) -> None:
    sid = await _session(call)
    run = await _run(app, THREE_NODES, inputs={"session_id": sid})
    assert run["status"] == "waiting"
    assert [n["status"] for n in run["nodes"]] == ["succeeded", "succeeded", "waiting"]
    assert _node(run, "summary")["output"] == {"value": ["*"]}
    approved = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert approved["status"] == "succeeded"
    review = _node(approved, "review")
    assert review["status"] == "succeeded"
    assert review["gate"]["decision"] == "approve"
    assert review["gate"]["answered_by"] == "operator"


async def test_compact_status_keeps_the_gate_criterion_prompts(app: App, call: Caller) -> None:
    sid = await _session(call)
    run = await _run(app, THREE_NODES, inputs={"session_id": sid})
    compact = (await tool(app, "status", {"run_id": run["run_id"]}))["run"]
    review = _node(compact, "review")
    assert review["gate"]["criteria"] == [
        {"id": "tools_ok", "prompt": "Are these the tools the agent should have?"}
    ]
    assert "output" not in _node(compact, "inspect")
    assert "contracts" not in compact
    assert "inputs" not in compact
    full = (await tool(app, "status", {"run_id": run["run_id"], "result_view": "full"}))["run"]
    assert "supervision" in _node(full, "inspect")["output"]["session"]


async def test_a_rejected_gate_fails_the_run(app: App, call: Caller) -> None:
    sid = await _session(call)
    run = await _run(app, THREE_NODES, inputs={"session_id": sid})
    rejected = (
        await tool(
            app,
            "approve",
            {
                "run_id": run["run_id"],
                "decision": "reject",
                "answers": [{"criterion_id": "tools_ok", "passed": False, "note": "too many"}],
            },
        )
    )["run"]
    assert rejected["status"] == "failed"
    assert rejected["error"]["reason"] == "gate_rejected"
    with pytest.raises(ToolConflict) as caught:
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve"})
    assert caught.value.reason == "loop_run_not_waiting"


async def test_a_run_pins_the_contract_of_the_view_each_tool_node_selected(
    app: App, call: Caller
) -> None:
    sid = await _session(call)
    text = graph(
        status_node("full_one", view="full"),
        status_node("compact_one"),
        "id: skill\nclass: action\nkind: compozy__skill_list\nparams: {result_view: compact}",
    )
    run = await _run(app, text, inputs={"session_id": sid})
    assert run["status"] == "succeeded"
    info = await call.structured("compozy__tool_info", {"tool_id": "compozy__session_status"})
    descriptor = info["tool"]["descriptor"]
    views = descriptor["output_views"]
    assert run["contracts"]["full_one"] == {
        "tool_id": "compozy__session_status",
        "view": "full",
        "input_schema_digest": descriptor["input_schema_digest"],
        "output_schema_digest": views["full"]["digest"],
    }
    assert run["contracts"]["compact_one"]["view"] == "compact"
    assert run["contracts"]["compact_one"]["output_schema_digest"] == views["compact"]["digest"]
    assert "supervision" in _node(run, "full_one")["output"]["session"]
    assert "supervision" not in _node(run, "compact_one")["output"]["session"]
    assert _node(run, "compact_one")["result_view"] == "compact"


class _PatchView:
    """A tool.pre_call hook that asks for the compact record, as a careless hook would."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    async def __call__(self, event: dict[str, Any]) -> dict[str, Any] | None:
        self.events.append(event)
        if event["event"] != "tool.pre_call" or event["tool_id"] != "compozy__session_status":
            return None
        return {"tool_input": {**event["tool_input"], "result_view": "compact"}}


async def test_a_hook_changing_a_loop_nodes_view_fails_the_node_result_view_pinned(
    app: App, call: Caller
) -> None:
    sid = await _session(call)
    hook = _PatchView()
    app.dispatcher.add_hook(hook)
    run = await _run(app, THREE_NODES, inputs={"session_id": sid})
    assert run["status"] == "failed"
    error = _node(run, "inspect")["error"]
    assert (error["code"], error["reason"], error["message"]) == (
        "tool_denied",
        "result_view_pinned",
        'tool "compozy__session_status" result view is pinned to "full" by the caller',
    )
    assert run["error"]["node_id"] == "inspect"
    [pre] = [e for e in hook.events if e["tool_id"] == "compozy__session_status"][:1]
    assert pre["pinned_result_view"] == "full"
    assert _node(run, "summary")["status"] == "pending"


async def test_a_pinned_contract_that_no_longer_matches_fails_with_action_contract_stale(
    app: App, call: Caller
) -> None:
    sid = await _session(call)
    text = graph(gate("first"), status_node(view="full"), edges=(("first", "inspect"),))
    run = await _run(app, text, inputs={"session_id": sid})
    assert run["status"] == "waiting"
    # the tool's contract changes under the run (an upgrade): its pinned digest is not live
    with app.store.write() as writer:
        row = writer.loop_run(run["run_id"])
        assert row is not None
        row.doc["contracts"]["inspect"]["output_schema_digest"] = "0" * 64
        from dataclasses import replace

        writer.put_loop_run(replace(row))
    done = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert done["status"] == "failed"
    error = _node(done, "inspect")["error"]
    assert (error["code"], error["reason"]) == ("tool_conflict", "action_contract_stale")
    assert error["message"].startswith(
        'node "inspect" pinned the full contract of compozy__session_status'
    )


async def test_cancel(app: App, call: Caller) -> None:
    sid = await _session(call)
    run = await _run(app, THREE_NODES, inputs={"session_id": sid})
    cancelled = (await tool(app, "cancel", {"run_id": run["run_id"]}))["run"]
    assert cancelled["status"] == "cancelled"
    assert _node(cancelled, "review")["status"] == "cancelled"
    assert cancelled["error"]["reason"] == "run_cancelled"
    with pytest.raises(ToolConflict) as caught:
        await tool(app, "cancel", {"run_id": run["run_id"]})
    assert caught.value.reason == "loop_run_ended"


async def test_list_runs_and_versions(app: App, call: Caller) -> None:
    sid = await _session(call)
    made = await tool(app, "create", {"definition": THREE_NODES, "loop_id": "tools-review"})
    again = await tool(app, "create", {"definition": THREE_NODES, "loop_id": "tools-review"})
    assert (made["loop"]["version"], again["loop"]["version"]) == (1, 2)
    listed = (await tool(app, "list", {}))["loops"]
    assert [(loop["id"], loop["version"]) for loop in listed] == [("tools-review", 2)]
    first = (await tool(app, "inspect", {"loop_id": "tools-review", "version": 1}))["loop"]
    assert first["version"] == 1
    run = (
        await tool(
            app,
            "run",
            {"loop_id": "tools-review", "version": 1, "inputs": {"session_id": sid}, "wait": True},
        )
    )["run"]
    assert (run["loop_id"], run["loop_version"]) == ("tools-review", 1)
    runs = (await tool(app, "runs", {"loop_id": "tools-review"}))["runs"]
    assert [r["run_id"] for r in runs] == [run["run_id"]]
    assert (await tool(app, "runs", {"status": "succeeded"}))["runs"] == []
    with pytest.raises(ResourceNotFound) as caught:
        await tool(app, "status", {"run_id": "run-nope"})
    assert caught.value.reason == "loop_run_not_found"
    with pytest.raises(ResourceNotFound):
        await tool(app, "inspect", {"loop_id": "tools-review", "version": 9})


async def test_runs_paginate(app: App, call: Caller) -> None:
    text = graph(transform("t", "x"))
    ids = [(await _run(app, text))["run_id"] for _ in range(3)]
    page = await tool(app, "runs", {"limit": 2})
    assert [r["run_id"] for r in page["runs"]] == ids[::-1][:2]
    rest = await tool(app, "runs", {"limit": 2, "cursor": page["next_cursor"]})
    assert [r["run_id"] for r in rest["runs"]] == ids[:1]
    assert "next_cursor" not in rest


async def test_branch_takes_one_edge(app: App) -> None:
    text = graph(
        'id: check\nclass: control\nkind: branch\nparams:\n  condition: "{{ .inputs.go }}"',
        transform("take", "taken"),
        transform("skip", "other"),
    ).replace(
        "  edges: []\n",
        "  edges:\n    - {from: check, to: take, when: true}\n"
        "    - {from: check, to: skip, when: false}\n",
    )
    run = await _run(app, text, inputs={"go": "true"})
    assert [(n["node_id"], n["status"]) for n in run["nodes"]] == [
        ("check", "succeeded"),
        ("take", "succeeded"),
        ("skip", "skipped"),
    ]
    run = await _run(app, text, inputs={"go": "false"})
    assert [n["status"] for n in run["nodes"]] == ["succeeded", "skipped", "succeeded"]


async def test_fan_out_runs_its_body_per_item_and_collect_gathers(app: App) -> None:
    text = graph(
        'id: each\nclass: control\nkind: fan-out\nparams:\n  items: "{{ .inputs.names }}"',
        transform("hello", '"hello {{ .item }} #{{ .index }}"'),
        "id: all\nclass: control\nkind: collect\nparams:\n  from: each",
        edges=(("each", "hello"), ("hello", "all")),
    )
    run = await _run(app, text, inputs={"names": ["ada", "bo"]})
    assert run["status"] == "succeeded", run
    assert _node(run, "all")["output"] == {
        "items": [{"value": "hello ada #0"}, {"value": "hello bo #1"}],
        "count": 2,
    }
    assert [i["status"] for i in _node(run, "hello")["items"]] == ["succeeded", "succeeded"]


async def test_typed_inputs(app: App) -> None:
    text = graph(
        "id: ticket\nclass: source\nkind: input\nparams:\n  schema: {type: integer}",
        "id: note\nclass: source\nkind: input\nparams:\n  default: none",
        transform("t", '"{{ .inputs.ticket }}/{{ .inputs.note }}"'),
    )
    run = await _run(app, text, inputs={"ticket": 7})
    assert _node(run, "t")["output"] == {"value": "7/none"}
    with pytest.raises(ToolInvalidInput, match=r'input "inputs\.ticket" must be an integer'):
        await _run(app, text, inputs={"ticket": "x"})
    with pytest.raises(ToolInvalidInput, match=r'input "inputs\.ticket" is required'):
        await _run(app, text, inputs={})
    with pytest.raises(ToolInvalidInput, match="is not an input of this Loop"):
        await _run(app, text, inputs={"ticket": 1, "other": 2})


async def test_a_tool_error_fails_the_node_with_the_tools_error(app: App) -> None:
    run = await _run(app, graph(status_node()), inputs={"session_id": "sess-nope"})
    assert run["status"] == "failed"
    assert _node(run, "inspect")["error"]["reason"] == "session_not_found"


# --- who may act ---------------------------------------------------------------------------------


async def test_a_child_may_not_act_on_its_parents_or_a_siblings_run(app: App, call: Caller) -> None:
    parent = await _session(call)
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"agent_name": "general", "ttl_seconds": 600},
            scope=scope_of(parent),
        )
    )["session_id"]
    sibling = (
        await call.structured(
            "compozy__session_spawn",
            {"agent_name": "general", "ttl_seconds": 600},
            scope=scope_of(parent),
        )
    )["session_id"]
    text = graph(gate("review"))
    parents_run = (
        await tool(app, "run", {"definition": text, "wait": True}, scope=scope_of(parent))
    )["run"]
    siblings_run = (
        await tool(app, "run", {"definition": text, "wait": True}, scope=scope_of(sibling))
    )["run"]
    operators_run = (await tool(app, "run", {"definition": text, "wait": True}))["run"]
    assert parents_run["started_by"] == parent
    for run in (parents_run, siblings_run, operators_run):
        for verb, extra in (("status", {}), ("cancel", {}), ("approve", {"decision": "approve"})):
            with pytest.raises(ToolDenied) as caught:
                await tool(app, verb, {"run_id": run["run_id"], **extra}, scope=scope_of(child))
            assert caught.value.reason == "session_not_in_scope"
    assert (await tool(app, "runs", {}, scope=scope_of(child)))["runs"] == []
    # the parent acts on its own run and its child's
    childs_run = (
        await tool(app, "run", {"definition": text, "wait": True}, scope=scope_of(child))
    )["run"]
    seen = {r["run_id"] for r in (await tool(app, "runs", {}, scope=scope_of(parent)))["runs"]}
    assert seen == {parents_run["run_id"], siblings_run["run_id"], childs_run["run_id"]}
    done = await tool(
        app,
        "approve",
        {"run_id": childs_run["run_id"], "decision": "approve", "wait": True},
        scope=scope_of(parent),
    )
    assert done["run"]["status"] == "succeeded"
    assert _node(done["run"], "review")["gate"]["answered_by"] == f"session:{parent}"


async def test_nodes_act_in_the_scope_of_the_caller_that_started_the_run(
    app: App, call: Caller
) -> None:
    parent = await _session(call)
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"agent_name": "general", "ttl_seconds": 600},
            scope=scope_of(parent),
        )
    )["session_id"]
    # a child may not read its parent's session: nor may the nodes of a run it starts
    run = (
        await tool(
            app,
            "run",
            {"definition": graph(status_node()), "inputs": {"session_id": parent}, "wait": True},
            scope=scope_of(child),
        )
    )["run"]
    assert run["status"] == "failed"
    assert _node(run, "inspect")["error"]["reason"] == "session_not_in_scope"


async def test_result_view_pinned_through_mcp(app: App, call: Caller) -> None:
    from tests.loops.support import mcp_client
    from tests.proxy.support import record

    sid = await _session(call)
    app.dispatcher.add_hook(_PatchView())
    async with mcp_client(app) as client:
        result = record(
            await client.call_tool(
                "compozy__loop_run",
                {"definition": THREE_NODES, "inputs": {"session_id": sid}, "wait": True},
            )
        )
    run = result["run"]
    assert run["status"] == "failed"
    error = _node(run, "inspect")["error"]
    assert (error["code"], error["reason"], error["message"]) == (
        "tool_denied",
        "result_view_pinned",
        'tool "compozy__session_status" result view is pinned to "full" by the caller',
    )


async def test_an_answer_that_lost_a_race_is_refused(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = (await tool(app, "run", {"definition": graph(gate("review")), "wait": True}))["run"]
    records = app.loops._records
    original = records.load

    def load_then_someone_answers(call_info: Any, run_id: str) -> Any:
        row = original(call_info, run_id)
        with app.store.write() as writer:  # another caller writes between read and write
            current = writer.loop_run(run_id)
            assert current is not None
            from dataclasses import replace

            writer.put_loop_run(replace(current))
        return row

    monkeypatch.setattr(records, "load", load_then_someone_answers)
    with pytest.raises(ToolConflict) as caught:
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve"})
    assert caught.value.reason == "write_conflict"


async def test_compact_run_keeps_each_fan_out_items_status_and_failure(
    app: App, call: Caller
) -> None:
    """Spec, what compact keeps: state and failures (of every fan-out item); the items'
    outputs stay in the full record."""
    sid = await _session(call)
    text = graph(
        'id: each\nclass: control\nkind: fan-out\nparams:\n  items: "{{ .inputs.ids }}"',
        "id: inspect\nclass: action\nkind: compozy__session_status\nparams:\n"
        '    session_id: "{{ .item }}"',
        "id: all\nclass: control\nkind: collect\nparams:\n  from: each",
        edges=(("each", "inspect"), ("inspect", "all")),
    )
    full = await _run(app, text, inputs={"ids": [sid, "sess-nope"]})
    compact = (await tool(app, "status", {"run_id": full["run_id"]}))["run"]
    items = _node(compact, "inspect")["items"]
    assert [item["status"] for item in items] == [
        item["status"] for item in _node(full, "inspect")["items"]
    ]
    (failed,) = [item for item in items if "error" in item]
    assert failed["error"]["reason"] == "session_not_found"
    assert all("output" not in item for item in items)


def test_a_recorded_error_names_what_the_redacting_surfaces_show() -> None:
    from compozy_mcp.errors import ToolConflict, ToolDenied
    from compozy_mcp.loops.redaction import error_payload, redact_result

    denied = error_payload(ToolDenied("t", "hook said no: secret reason"))
    assert (denied["message"], denied["redacted_as"]) == (
        "hook said no: secret reason",
        "tool invocation denied",
    )
    conflict = error_payload(ToolConflict("t", "fence moved"))
    assert "redacted_as" not in conflict  # not an input error or a denial: shown as it is
    run: dict[str, Any] = {
        "error": denied,
        "nodes": [{"error": denied, "items": [{"error": denied}]}],
    }
    record = {"run": run}
    shown = redact_result(record)["run"]
    for error in (
        shown["error"],
        shown["nodes"][0]["error"],
        shown["nodes"][0]["items"][0]["error"],
    ):
        assert error == {
            "code": "tool_denied",
            "reason": denied["reason"],
            "message": "tool invocation denied",
            "tool_id": "t",
        }
    assert run["error"]["message"] == "hook said no: secret reason"  # not mutated
