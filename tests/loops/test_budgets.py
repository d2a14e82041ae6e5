"""Issue 22, items 1 and 2: every part of a Loop that grows has a budget with a typed error
that names it (``limit_exceeded``: the limit, its value, the setting that raises it), tried
with the inputs that took the daemon down; and recovery never crashes on its own data."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.loops.support import graph, tool, transform

from compozy_mcp import jsonutil
from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import scope_of
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.errors import ToolError
from compozy_mcp.loops.limits import json_size_within
from compozy_mcp.store.loops import RUN_DOC_CAP

pytestmark = pytest.mark.anyio


def alias_bomb(levels: int = 10, fan: int = 10) -> str:
    """The issue's input: ``levels`` levels of ``fan`` aliases each (717 bytes at 10 x 10),
    10**10 values once expanded."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * fan)}]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * fan)}]")
    return "\n".join(lines) + "\ngraph: {nodes: [], edges: []}\n"


def doubling_loop(nodes: int = 40) -> str:
    """The issue's input: 40 transforms, each output twice the one before it."""
    blocks = [transform("n0", "seed-of-sixteen!")]
    blocks += [
        transform(f"n{i}", f'"{{{{ .nodes.n{i - 1}.output }}}}{{{{ .nodes.n{i - 1}.output }}}}"')
        for i in range(1, nodes)
    ]
    return graph(*blocks, edges=tuple((f"n{i - 1}", f"n{i}") for i in range(1, nodes)))


def _limit(caught: pytest.ExceptionInfo[ToolError]) -> dict[str, Any]:
    """The limit a refused call names, as every surface reports it."""
    payload = caught.value.payload(redact=True)
    assert payload["code"] == "limit_exceeded"
    limit: dict[str, Any] = payload["details"]["limit"]
    return {**limit, "reason": payload["reason"]}


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def test_a_yaml_alias_bomb_is_refused_by_the_value_budget(app: App) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 800
    with pytest.raises(ToolError) as caught:
        await tool(app, "validate", {"definition": bomb})
    assert _limit(caught) == {
        "name": "loop_source_values",
        "value": 200_000,
        "setting": "COMPOZY_LOOP_SOURCE_VALUES",
        "reason": "source_too_large",
    }
    assert "once its YAML aliases are expanded" in str(caught.value)


async def test_a_restricted_session_whose_only_tool_is_validate_cannot_send_a_bomb(
    app: App, call: Caller
) -> None:
    parent = (await call.create())["id"]
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"agent_name": "general", "ttl_seconds": 600, "tools": ["compozy__loop_validate"]},
            scope=scope_of(parent),
        )
    )["session_id"]
    with pytest.raises(ToolError):
        await tool(app, "validate", {"definition": alias_bomb()}, scope=scope_of(child))


async def test_a_few_aliases_still_read_as_yaml_anchors(app: App) -> None:
    text = graph(transform("a", "x"), transform("b", "y")).replace(
        "graph:", "defaults: &d {retries: 1}\nmore: *d\ngraph:"
    )
    items = (await tool(app, "validate", {"definition": text}))["items"]
    assert all(item["code"] != "definition_invalid" for item in items)


async def test_a_source_past_its_size_is_refused(settings: Settings, clock: FixedClock) -> None:
    small = replace(settings, loop_source_bytes=1024)
    with open_app(small, clock=clock) as app:
        text = graph(*(transform(f"t{i}", "x" * 20) for i in range(40)))
        assert len(text) > 1024
        with pytest.raises(ToolError) as caught:
            await tool(app, "validate", {"definition": text})
        assert _limit(caught)["name"] == "loop_source_bytes"
        assert _limit(caught)["setting"] == "COMPOZY_LOOP_SOURCE_BYTES"


async def test_a_graph_past_its_node_budget_is_refused_before_any_check(
    settings: Settings, clock: FixedClock
) -> None:
    with open_app(replace(settings, loop_max_nodes=10), clock=clock) as app:
        text = graph(*(transform(f"t{i}", "x") for i in range(11)))
        with pytest.raises(ToolError) as caught:
            await tool(app, "create", {"definition": text})
        assert _limit(caught) == {
            "name": "loop_max_nodes",
            "value": 10,
            "setting": "COMPOZY_LOOP_MAX_NODES",
            "reason": "loop_too_large",
        }


async def test_a_10000_node_chain_lints_with_every_reference_checked(app: App) -> None:
    """The chain whose lint took 1.5 GB (a set of ancestors per node): the upstream check
    still finds a reference to a node that runs later."""
    count = 9_998  # with "late" and "early": the 10,000 of the default budget
    reads = '"{{{{ .nodes.n{}.output }}}}"'
    blocks = [transform("n0", "x")]
    blocks += [transform(f"n{i}", reads.format(i - 1)) for i in range(1, count)]
    blocks.append(transform("late", reads.format(count - 1)))
    blocks.append(transform("early", '"{{ .nodes.late.output }}"'))
    edges = tuple((f"n{i - 1}", f"n{i}") for i in range(1, count))
    text = graph(*blocks, edges=(*edges, (f"n{count - 1}", "late"), ("n0", "early")))
    items = (await tool(app, "validate", {"definition": text}))["items"]
    assert [(item["code"], item["node_id"]) for item in items] == [
        ("reference_not_upstream", "early")
    ]


async def test_parentheses_nested_5000_deep_are_a_lint_item(app: App) -> None:
    deep = "(" * 5000 + ".inputs.x" + ")" * 5000
    items = (
        await tool(app, "validate", {"definition": graph(transform("t", f'"{{{{ {deep} }}}}"'))})
    )["items"]
    assert [item["code"] for item in items] == ["template_invalid"]
    assert "parentheses nested more than 32 deep" in items[0]["message"]


async def test_a_doubling_loop_fails_at_the_node_output_budget_and_keeps_nothing_more(
    app: App,
) -> None:
    run = (await tool(app, "run", {"definition": doubling_loop(), "wait": True}))["run"]
    assert run["status"] == "failed"
    assert run["error"]["code"] == "limit_exceeded"
    assert run["error"]["limit"]["name"] == "loop_node_output_bytes"
    failed = run["error"]["node_id"]
    assert _node(run, failed)["status"] == "failed"
    assert run["error"]["reason"] == "output_too_large"
    after = int(failed[1:]) + 1
    assert 0 < after < 40
    assert {_node(run, f"n{i}")["status"] for i in range(after, 40)} == {"pending"}
    with app.store.read() as reader:
        row = reader.loop_run(run["run_id"])
    assert row is not None
    assert len(jsonutil.dumps(row.doc)) < 8 * 1024 * 1024


async def test_a_value_of_many_references_to_one_output_is_counted_whole(app: App) -> None:
    """Shared references cost nothing in memory but everything once written: a transform
    that repeats a 100 KB output 100 times is refused at render, before it is kept."""
    many = "\n".join(f"    k{i}: '{{{{ .nodes.big.output.value }}}}'" for i in range(100))
    fan = f"id: fan\nclass: action\nkind: transform\nparams:\n  output:\n{many}"
    text = graph(transform("big", "x" * 100_000), fan, edges=(("big", "fan"),))
    run = (await tool(app, "run", {"definition": text, "wait": True}))["run"]
    assert run["status"] == "failed"
    assert run["error"]["limit"]["name"] == "loop_node_output_bytes"
    assert run["error"]["reason"] == "output_too_large"


async def test_a_run_past_its_run_budget_fails_with_the_run_limit(
    settings: Settings, clock: FixedClock
) -> None:
    with open_app(replace(settings, loop_run_bytes=64 * 1024), clock=clock) as app:
        blocks = [transform(f"t{i}", "y" * 20_000) for i in range(5)]
        text = graph(*blocks, edges=tuple((f"t{i - 1}", f"t{i}") for i in range(1, 5)))
        run = (await tool(app, "run", {"definition": text, "wait": True}))["run"]
        assert run["status"] == "failed"
        assert run["error"]["limit"] == {
            "name": "loop_run_bytes",
            "value": 64 * 1024,
            "setting": "COMPOZY_LOOP_RUN_BYTES",
        }
        assert run["error"]["node_id"] == "t3"


def test_json_size_within_stops_at_its_limit_on_a_shared_value() -> None:
    shared = ["x" * 1000] * 10_000_000  # 10 GB as JSON; 80 MB of pointers in memory
    assert json_size_within(shared, 100_000) is None
    small = {"a": [1, "bc"], "d": {"e": None}}
    counted = json_size_within(small, 1000)
    assert counted is not None
    assert len(jsonutil.dumps(small)) <= counted <= 2 * len(jsonutil.dumps(small))


# --- recovery ----------------------------------------------------------------------------------

PLANTED_AT = "2026-11-10T14:02:11Z"
EMPTY_LOOP = {"format": 2, "document": {"graph": {"nodes": [], "edges": []}}, "source": None}


def _run_doc(run_id: str, loop_id: str, nodes: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": 2,
        "run_id": run_id,
        "loop_id": loop_id,
        "loop_version": 1,
        "status": "running",
        "owner": "999999999:gone",
        "inputs": {},
        "contracts": {},
        "nodes": nodes,
        "created_at": PLANTED_AT,
        "updated_at": PLANTED_AT,
    }


def plant(db: Path, run_id: str, loop_doc: dict[str, Any], nodes: dict[str, Any]) -> None:
    """A run left ``running`` by a process that is gone, written straight into the store
    file, as a daemon from before the budgets left it (the store refuses to write it)."""
    loop_id = f"loop-{run_id}"
    doc = jsonutil.dumps_text(_run_doc(run_id, loop_id, nodes))
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO loops (id, version, name, doc, created_at) VALUES (?, 1, NULL, ?, ?)",
            (loop_id, jsonutil.dumps_text(loop_doc), PLANTED_AT),
        )
        conn.execute(
            "INSERT INTO loop_runs (id, loop_id, loop_version, status, owner, created_at, "
            "updated_at, version, doc) VALUES (?, ?, 1, 'running', '999999999:gone', ?, ?, 1, ?)",
            (run_id, loop_id, PLANTED_AT, PLANTED_AT, doc),
        )


def plant_huge(db: Path) -> str:
    output = {"status": "succeeded", "output": "z" * (RUN_DOC_CAP + 1)}
    plant(db, "run-huge", EMPTY_LOOP, {"n0": {"node_id": "n0", "kind": "transform", **output}})
    return "run-huge"


def plant_bomb(db: Path) -> str:
    loop = {"format": 2, "document": {}, "source": alias_bomb()}
    plant(db, "run-bomb", loop, {"n0": {"node_id": "n0", "kind": "transform", "status": "running"}})
    return "run-bomb"


async def test_recovery_fails_a_run_too_large_to_load_and_goes_on(
    settings: Settings, clock: FixedClock
) -> None:
    with open_app(settings, clock=clock):
        pass  # the store file, migrated
    run_id = plant_huge(settings.db_path)
    with open_app(settings, clock=clock) as app:
        assert await app.loops.recover() == {"resumed": [], "interrupted": [], "failed": [run_id]}
        run = (await tool(app, "status", {"run_id": run_id}))["run"]
        assert run["status"] == "failed"
        assert run["error"]["reason"] == "run_too_large"
        listed = (await tool(app, "runs", {}))["runs"]
        assert [r["run_id"] for r in listed] == [run_id]
        assert await app.loops.recover() == {"resumed": [], "interrupted": [], "failed": []}


async def test_recovery_fails_a_run_whose_loop_is_past_todays_limits(
    settings: Settings, clock: FixedClock
) -> None:
    with open_app(settings, clock=clock):
        pass
    run_id = plant_bomb(settings.db_path)
    with open_app(settings, clock=clock) as app:
        assert await app.loops.recover() == {"resumed": [], "interrupted": [], "failed": [run_id]}
        run = (await tool(app, "status", {"run_id": run_id, "result_view": "full"}))["run"]
        assert run["status"] == "failed"
        assert run["error"]["code"] == "limit_exceeded"
        assert run["error"]["message"].startswith("the run cannot resume: ")


@pytest.mark.process
def test_a_daemon_starts_over_a_store_holding_each_bad_run(tmp_path: Path) -> None:
    from tests.api.support import Home, running_daemon

    home = Home.make(tmp_path)
    with open_app(Settings.from_env(home.env)):
        pass
    planted = {plant_huge(Path(home.env["COMPOZY_HOME"]) / "compozy.db")}
    planted.add(plant_bomb(Path(home.env["COMPOZY_HOME"]) / "compozy.db"))
    with (
        running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon,
        daemon.client() as http,
    ):
        runs = http.get("/api/loop-runs").json()["runs"]
        assert {(r["run_id"], r["status"]) for r in runs} == {(p, "failed") for p in planted}
