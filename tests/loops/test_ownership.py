"""Issue 22, item 3: Loops have owners. A Loop belongs to who stored its first version (the
operator, or a session and its ancestors); a session lists, reads, versions and runs only the
Loops its tree owns, and reads, cancels and answers only the runs its tree started. Every loop
tool is tried from a restricted child against its parent, a sibling and the operator (and its
own child, which it may act on); the operator acts on everything, but a run of a version a
session wrote acts with that session's policy, never more; inspect says who wrote each
version; a Loop stored before owners existed belongs to the operator."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.loops.support import gate, graph, status_node, tool
from tests.native.test_access import _spawn as spawn

from compozy_mcp import jsonutil
from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope, scope_of
from compozy_mcp.errors import ToolDenied
from compozy_mcp.store._migrations import MIGRATIONS
from compozy_mcp.store._sqlite import SQLiteStore
from compozy_mcp.store.loops import LoopRow
from compozy_mcp.store.sql import SQLITE, render_schema

pytestmark = pytest.mark.anyio

#: the restricted child may call the Loop tools and nothing else
LOOP_TOOLS = ["compozy__loop_*"]
GATED = graph(gate("review"))


@dataclass
class Family:
    """parent ── child (the caller, restricted) ── grandchild; parent ── sibling; each has a
    Loop of its own (``loop-<who>``, the operator's ``loop-operator``) and a run of it, waiting
    at its gate."""

    sessions: dict[str, str | None]
    runs: dict[str, str]

    @property
    def child(self) -> CallScope:
        return scope_of(self.sessions["child"])

    def loop(self, who: str) -> str:
        return f"loop-{who}"


@pytest.fixture
async def family(app: App, call: Caller) -> Family:
    parent = (await call.create())["id"]
    child = await spawn(call, parent, tools=LOOP_TOOLS)
    grandchild = await spawn(call, child, tools=LOOP_TOOLS, ttl=300)
    sibling = await spawn(call, parent, tools=LOOP_TOOLS)
    sessions: dict[str, str | None] = {
        "operator": None,
        "parent": parent,
        "child": child,
        "grandchild": grandchild,
        "sibling": sibling,
    }
    runs = {}
    for who, session in sessions.items():
        scope = scope_of(session)
        await tool(app, "create", {"definition": GATED, "loop_id": f"loop-{who}"}, scope=scope)
        started = await tool(app, "run", {"loop_id": f"loop-{who}", "wait": True}, scope=scope)
        assert started["run"]["status"] == "waiting"
        runs[who] = started["run"]["run_id"]
    return Family(sessions, runs)


Build = Callable[[Family, str], dict[str, Any]]

#: every loop tool, with an input naming the Loop or the run of ``who``
LOOP_MATRIX: dict[str, Build] = {
    "create": lambda f, who: {"definition": GATED, "loop_id": f.loop(who)},
    "inspect": lambda f, who: {"loop_id": f.loop(who)},
    "run": lambda f, who: {"loop_id": f.loop(who)},
    "status": lambda f, who: {"run_id": f.runs[who]},
    "cancel": lambda f, who: {"run_id": f.runs[who]},
    "approve": lambda f, who: {"run_id": f.runs[who], "decision": "approve"},
}
#: the tools that name no Loop: each is checked on what it shows
LISTING = {"list", "runs", "validate"}


def test_every_loop_tool_is_in_the_matrix(app: App) -> None:
    loop_tools = {
        tool.id.removeprefix("compozy__loop_")
        for tool in app.dispatcher.registry
        if tool.id.startswith("compozy__loop_")
    }
    assert loop_tools == set(LOOP_MATRIX) | LISTING


async def _snapshot(app: App, family: Family, who: str) -> tuple[Any, ...]:
    loop = await tool(app, "inspect", {"loop_id": family.loop(who), "result_view": "full"})
    run = await tool(app, "status", {"run_id": family.runs[who], "result_view": "full"})
    return loop, run


@pytest.mark.parametrize("verb", sorted(LOOP_MATRIX))
@pytest.mark.parametrize("who", ["parent", "sibling", "operator"])
async def test_a_restricted_child_acts_on_no_loop_or_run_of_its_parent_a_sibling_or_the_operator(
    app: App, family: Family, verb: str, who: str
) -> None:
    before = await _snapshot(app, family, who)
    with pytest.raises(ToolDenied) as caught:
        await tool(app, verb, LOOP_MATRIX[verb](family, who), scope=family.child)
    expected = (
        "loop_not_in_scope" if verb in ("create", "inspect", "run") else "session_not_in_scope"
    )
    assert caught.value.reason == expected
    if expected == "loop_not_in_scope":
        owner = "the operator" if who == "operator" else f'session "{family.sessions[who]}"'
        assert caught.value.message == (
            f'loop "{family.loop(who)}" belongs to {owner}; session "{family.sessions["child"]}" '
            "may act only on Loops it or its descendants own"
        )
    assert await _snapshot(app, family, who) == before  # nothing changed, nothing added


@pytest.mark.parametrize("verb", sorted(LOOP_MATRIX))
@pytest.mark.parametrize("who", ["child", "grandchild"])
async def test_a_restricted_child_acts_on_its_own_and_its_childs_loops_and_runs(
    app: App, family: Family, verb: str, who: str
) -> None:
    result = await tool(app, verb, LOOP_MATRIX[verb](family, who), scope=family.child)
    assert result


async def test_a_restricted_child_lists_only_its_trees_loops_and_runs(
    app: App, family: Family
) -> None:
    loops = (await tool(app, "list", {}, scope=family.child))["loops"]
    assert {loop["id"] for loop in loops} == {"loop-child", "loop-grandchild"}
    runs = (await tool(app, "runs", {}, scope=family.child))["runs"]
    assert {run["run_id"] for run in runs} == {family.runs["child"], family.runs["grandchild"]}
    # the parent sees its tree; the operator sees everything
    parents = (await tool(app, "list", {}, scope=scope_of(family.sessions["parent"])))["loops"]
    assert {loop["id"] for loop in parents} == {
        "loop-parent",
        "loop-child",
        "loop-grandchild",
        "loop-sibling",
    }
    everything = (await tool(app, "list", {}))["loops"]
    assert {loop["id"] for loop in everything} == {f"loop-{who}" for who in family.sessions}
    assert len((await tool(app, "runs", {}))["runs"]) == len(family.sessions)


async def test_validate_is_open_and_stores_nothing(app: App, family: Family) -> None:
    checked = await tool(app, "validate", {"definition": GATED}, scope=family.child)
    assert checked["valid"] is True
    assert len((await tool(app, "list", {}))["loops"]) == len(family.sessions)


async def test_a_run_of_a_definition_under_another_trees_loop_id_is_refused(
    app: App, family: Family
) -> None:
    for who in ("parent", "sibling", "operator"):
        with pytest.raises(ToolDenied) as caught:
            await tool(
                app,
                "run",
                {"definition": GATED, "loop_id": family.loop(who)},
                scope=family.child,
            )
        assert caught.value.reason == "loop_not_in_scope"
        assert (await tool(app, "inspect", {"loop_id": family.loop(who)}))["loop"]["version"] == 1


async def test_a_new_version_keeps_the_loops_owner_and_names_its_author(
    app: App, family: Family
) -> None:
    parent = family.sessions["parent"]
    made = await tool(
        app,
        "create",
        {"definition": GATED, "loop_id": "loop-child"},
        scope=scope_of(parent),
    )
    loop = made["loop"]
    assert (loop["version"], loop["owner"], loop["author"]) == (
        2,
        f"session:{family.sessions['child']}",
        f"session:{parent}",
    )
    await tool(app, "create", {"definition": GATED, "loop_id": "loop-child"})
    inspected = (await tool(app, "inspect", {"loop_id": "loop-child"}, scope=family.child))["loop"]
    assert [(v["version"], v["author"]) for v in inspected["versions"]] == [
        (1, f"session:{family.sessions['child']}"),
        (2, f"session:{parent}"),
        (3, "operator"),
    ]
    # the child still owns it
    assert (
        await tool(
            app, "create", {"definition": GATED, "loop_id": "loop-child"}, scope=family.child
        )
    )["loop"]["version"] == 4


# --- whose rights a run acts with ------------------------------------------------------------


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def test_the_operator_running_a_version_a_session_wrote_acts_with_that_sessions_policy(
    app: App, family: Family
) -> None:
    child = family.sessions["child"]
    reads_a_session = graph(status_node(view="full"))
    # the restricted child (loop tools only) writes a version that reads a session
    await tool(
        app, "create", {"definition": reads_a_session, "loop_id": "borrow"}, scope=family.child
    )
    run = (
        await tool(app, "run", {"loop_id": "borrow", "inputs": {"session_id": child}, "wait": True})
    )["run"]
    assert (run["started_by"], run["acts_as"]) == (None, child)
    assert run["status"] == "failed"
    assert _node(run, "inspect")["error"]["reason"] == "permission_denied"
    # once the operator writes the version, its runs act as the operator
    await tool(app, "create", {"definition": reads_a_session, "loop_id": "borrow"})
    run = (
        await tool(app, "run", {"loop_id": "borrow", "inputs": {"session_id": child}, "wait": True})
    )["run"]
    assert run["status"] == "succeeded", run
    assert "acts_as" not in run
    # the child running the operator's version acts as itself, never as the operator
    run = (
        await tool(
            app,
            "run",
            {"loop_id": "borrow", "inputs": {"session_id": child}, "wait": True},
            scope=family.child,
        )
    )["run"]
    assert run["status"] == "failed"
    assert _node(run, "inspect")["error"]["reason"] == "permission_denied"


async def test_a_parent_running_its_childs_version_acts_as_the_child(
    app: App, family: Family
) -> None:
    parent, child = family.sessions["parent"], family.sessions["child"]
    await tool(
        app,
        "create",
        {"definition": graph(status_node(view="full")), "loop_id": "x"},
        scope=family.child,
    )
    run = (
        await tool(
            app,
            "run",
            {"loop_id": "x", "inputs": {"session_id": parent}, "wait": True},
            scope=scope_of(parent),
        )
    )["run"]
    assert (run["started_by"], run["acts_as"]) == (parent, child)
    assert run["status"] == "failed"


# --- the operator's view, and Loops stored before owners ---------------------------------------


async def test_the_operator_acts_on_every_loop_and_run(app: App, family: Family) -> None:
    for who in family.sessions:
        assert (await tool(app, "inspect", {"loop_id": family.loop(who)}))["loop"]["owner"] == (
            "operator" if who == "operator" else f"session:{family.sessions[who]}"
        )
        answered = await tool(
            app, "approve", {"run_id": family.runs[who], "decision": "approve", "wait": True}
        )
        assert answered["run"]["status"] == "succeeded"


async def test_a_loop_stored_before_owners_belongs_to_the_operator(
    app: App, family: Family
) -> None:
    child = family.sessions["child"]
    doc = {"document": jsonutil.loads(jsonutil.dumps(_yaml_free(GATED))), "created_by": child}
    with app.store.write() as writer:
        writer.add_loop(LoopRow("old", 1, None, doc, "2026-11-10T14:02:11Z", author=child))
    with pytest.raises(ToolDenied):
        await tool(app, "inspect", {"loop_id": "old"}, scope=family.child)
    assert "old" not in {
        loop["id"] for loop in (await tool(app, "list", {}, scope=family.child))["loops"]
    }
    assert (await tool(app, "inspect", {"loop_id": "old"}))["loop"]["owner"] == "operator"


def _yaml_free(text: str) -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def test_migration_keeps_old_loops_the_operators_and_their_authors(tmp_path: Path) -> None:
    path = tmp_path / "compozy.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL)"
        )
        for migration in MIGRATIONS:
            if migration.version >= 8:
                break
            conn.executescript(";\n".join(render_schema(migration.sql, SQLITE)))
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, '2026-11-10T14:02:11Z')",
                (migration.version, migration.name),
            )
        conn.execute(
            "INSERT INTO loops (id, version, name, doc, created_at) VALUES (?, 1, NULL, ?, ?)",
            (
                "old",
                jsonutil.dumps_text({"document": {}, "created_by": "sess-a"}),
                "2026-11-10T14:02:11Z",
            ),
        )
        conn.execute(
            "INSERT INTO loop_runs (id, loop_id, loop_version, status, owner, created_at, "
            "updated_at, version, doc) VALUES ('run-old', 'old', 1, 'waiting', NULL, ?, ?, 1, ?)",
            (
                "2026-11-10T14:02:11Z",
                "2026-11-10T14:02:11Z",
                jsonutil.dumps_text({"started_by": "sess-b"}),
            ),
        )
    with closing(SQLiteStore(path)) as store, store.read() as reader:
        loop = reader.loop("old")
        assert loop is not None
        assert (loop.owner, loop.author) == (None, "sess-a")
        run = reader.loop_run("run-old")
        assert run is not None
        assert run.started_by == "sess-b"


async def test_a_session_running_its_own_version_acts_as_itself(app: App, family: Family) -> None:
    run = (await tool(app, "run", {"loop_id": "loop-child"}, scope=family.child))["run"]
    assert run["started_by"] == family.sessions["child"]
    assert "acts_as" not in run  # the record names it only when it differs from the starter
