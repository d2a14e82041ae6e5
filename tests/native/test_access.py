"""Limits that hold (issue 11): a managed session acts only on itself and its descendants, never
holds more than its creator, and loses its access when it ends. Every session tool is tried
from a restricted child against itself, its child, its parent and a sibling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.errors import SessionEnded, ToolDenied, ToolError

pytestmark = pytest.mark.anyio

#: the tools the restricted child may call: every session tool (its policy names them all)
CHILD_TOOLS = [
    "compozy__session_*",
    "compozy__command_list",
    "compozy__worktree_*",
    "compozy__task_*",
    "compozy__agent_heartbeat_*",
]


@dataclass
class Family:
    """parent ── child (the caller, restricted) ── grandchild; parent ── sibling."""

    parent: str
    child: str
    grandchild: str
    sibling: str

    @property
    def scope(self) -> CallScope:
        return CallScope(session_id=self.child)

    def target(self, who: str) -> str:
        return {"self": self.child, "child": self.grandchild}.get(who) or getattr(self, who)


async def _spawn(call: Caller, parent: str, *, tools: list[str], ttl: int = 600) -> str:
    spawned = await call.structured(
        "compozy__session_spawn",
        {
            "parent_session_id": parent,
            "agent_name": "worker",
            "ttl_seconds": ttl,
            "tools": tools,
        },
    )
    child: str = spawned["session_id"]
    return child


@pytest.fixture
async def family(call: Caller) -> Family:
    parent = (await call.create(provider="claude"))["id"]
    child = await _spawn(call, parent, tools=CHILD_TOOLS)
    grandchild = await _spawn(call, child, tools=CHILD_TOOLS, ttl=300)
    sibling = await _spawn(call, parent, tools=CHILD_TOOLS)
    return Family(parent, child, grandchild, sibling)


async def _fences(call: Caller, session_id: str) -> dict[str, int]:
    record = await call.full(session_id)
    return {
        "transcript_epoch": record.get("transcript_epoch", 0),
        "generation": record["runtime"].get("generation", 0),
        "selection_revision": record["runtime"]["selection_revision"],
    }


Build = Callable[[dict[str, int]], dict[str, Any]]

#: every tool that names a session, with an input that is valid for the target
SESSION_TOOLS: dict[str, tuple[str, Build]] = {
    "status": ("session_id", lambda f: {}),
    "archive": ("session_id", lambda f: {}),
    "unarchive": ("session_id", lambda f: {}),
    "rename": ("session_id", lambda f: {"name": "renamed"}),
    "stop": ("session_id", lambda f: {}),
    "runtime_set": (
        "session_id",
        lambda f: {
            "provider": "codex",
            "selection_revision": f["selection_revision"],
            "generation": f["generation"],
        },
    ),
    "runtime_clear": ("session_id", lambda f: {}),
    "rewind": (
        "session_id",
        lambda f: {"transcript_epoch": f["transcript_epoch"], "generation": f["generation"]},
    ),
    "continue": (
        "session_id",
        lambda f: {"transcript_epoch": f["transcript_epoch"], "generation": f["generation"]},
    ),
    "fork": ("session_id", lambda f: {"transcript_epoch": f["transcript_epoch"]}),
    "spawn": ("parent_session_id", lambda f: {"agent_name": "w", "ttl_seconds": 60}),
    "list": ("parent_session_id", lambda f: {}),
    "delete": ("session_id", lambda f: {}),
    # the agent and turn tools (issue 12)
    "prompt": ("session_id", lambda f: {"prompt": "hello"}),
    "prompt_cancel": ("session_id", lambda f: {}),
    "wait": ("session_id", lambda f: {"timeout_seconds": 1}),
    "history": ("session_id", lambda f: {}),
    "events": ("session_id", lambda f: {}),
    "clear": (
        "session_id",
        lambda f: {"transcript_epoch": f["transcript_epoch"], "generation": f["generation"]},
    ),
    "approve": ("session_id", lambda f: {"interaction_id": "int-1", "decision": "allow-once"}),
    "compozy__command_list": ("session_id", lambda f: {}),
    # worktrees and hand-off (issue 25); the worktree_id tools are in tests/worktrees
    "diff": ("session_id", lambda f: {}),
    "merge": ("session_id", lambda f: {}),
    "pull_request": ("session_id", lambda f: {}),
    "compozy__worktree_list": ("session_id", lambda f: {}),
    "compozy__worktree_create": ("session_id", lambda f: {}),
    # tasks (issue 27); the run_id tools are in tests/tasks
    "compozy__task_run_claim_next": ("session_id", lambda f: {}),
    "compozy__agent_heartbeat_set": ("session_id", lambda f: {"interval_seconds": 60}),
    "compozy__agent_heartbeat_status": ("session_id", lambda f: {}),
    "compozy__agent_heartbeat_wake": ("session_id", lambda f: {}),
}


def _tool_id(key: str) -> str:
    return key if key.startswith("compozy__") else f"compozy__session_{key}"


def test_every_native_tool_that_names_a_session_is_in_the_matrix(app: App) -> None:
    acting = {
        tool.id.removeprefix("compozy__session_")
        for tool in app.dispatcher.registry
        if tool.definition.acts_on
    }
    assert acting == set(SESSION_TOOLS)


@pytest.mark.parametrize("tool", sorted(SESSION_TOOLS))
@pytest.mark.parametrize("who", ["self", "child", "parent", "sibling"])
async def test_a_restricted_child_acts_only_on_itself_and_its_descendants(
    call: Caller, family: Family, tool: str, who: str
) -> None:
    field, build = SESSION_TOOLS[tool]
    target = family.target(who)
    tool_input = {field: target, **build(await _fences(call, target))}
    tool_id = _tool_id(tool)
    before = await call.full(target)
    if who in ("parent", "sibling"):
        with pytest.raises(ToolDenied) as caught:
            await call(tool_id, tool_input, scope=family.scope)
        assert (caught.value.code, caught.value.reason) == ("tool_denied", "session_not_in_scope")
        assert f'session "{family.child}" may act only on itself and its descendants' in (
            caught.value.message
        )
        after = await call.full(target)
        assert after == before  # nothing changed
    else:
        refused: ToolError | None = None
        try:
            await call(tool_id, tool_input, scope=family.scope)
        except ToolError as error:  # the tool ran and refused for its own reasons, never scope
            refused = error
        assert refused is None or refused.reason != "session_not_in_scope", refused


async def test_a_child_cannot_stop_its_parent_or_through_it_its_siblings(
    call: Caller, family: Family
) -> None:
    with pytest.raises(ToolDenied):
        await call("compozy__session_stop", {"session_id": family.parent}, scope=family.scope)
    assert (await call.full(family.sibling))["state"] == "active"


async def test_a_session_a_managed_session_creates_is_its_child_with_no_wider_a_policy(
    call: Caller, family: Family
) -> None:
    made = await call.session(
        "compozy__session_create",
        {"agent_name": "helper", "session_id": "sess-made-by-child"},
        scope=family.scope,
    )
    full = await call.full(made["id"])
    lineage = full["lineage"]
    assert (lineage["kind"], lineage["parent_session_id"]) == ("spawn", family.child)
    assert lineage["permission_policy"]["tools"] == CHILD_TOOLS
    child_expiry = (await call.full(family.child))["lineage"]["ttl_expires_at"]
    assert lineage["ttl_expires_at"] <= child_expiry
    # and the creator may act on what it made
    await call(
        "compozy__session_rename", {"session_id": made["id"], "name": "x"}, scope=family.scope
    )


async def test_a_managed_session_cannot_fork_its_parent_and_its_own_fork_holds_its_policy(
    call: Caller, family: Family
) -> None:
    with pytest.raises(ToolDenied):
        await call(
            "compozy__session_fork",
            {"session_id": family.parent, "transcript_epoch": 0},
            scope=family.scope,
        )
    fork = await call.session(
        "compozy__session_fork",
        {"session_id": family.child, "transcript_epoch": 0},
        scope=family.scope,
    )
    full = await call.full(fork["id"])
    assert full["lineage"]["permission_policy"]["tools"] == CHILD_TOOLS
    assert full["lineage"]["parent_session_id"] == family.child


async def test_a_managed_session_lists_only_its_own_tree(call: Caller, family: Family) -> None:
    listed = await call.structured("compozy__session_list", {}, scope=family.scope)
    assert {s["id"] for s in listed["sessions"]} == {family.child, family.grandchild}
    everything = await call.structured("compozy__session_list", {})
    assert {family.parent, family.sibling} <= {s["id"] for s in everything["sessions"]}


async def test_a_spawned_grandchild_never_exceeds_the_restricted_caller(
    call: Caller, family: Family
) -> None:
    with pytest.raises(ToolDenied) as caught:
        await call(
            "compozy__session_spawn",
            {"agent_name": "w", "ttl_seconds": 60, "tools": ["*"]},
            scope=family.scope,
        )
    assert caught.value.reason == "permission_exceeds_parent"


# --- a session's end ends its access (issue 11, item 2) ----------------------------------------


async def _denied_as_ended(call: Caller, scope: CallScope) -> SessionEnded:
    with pytest.raises(SessionEnded) as caught:
        await call("compozy__session_status", {"session_id": scope.session_id}, scope=scope)
    assert (caught.value.code, caught.value.reason) == ("tool_denied", "session_ended")
    return caught.value


async def test_a_stopped_session_can_make_no_more_calls(call: Caller, family: Family) -> None:
    await call("compozy__session_stop", {"session_id": family.child})
    error = await _denied_as_ended(call, family.scope)
    assert error.details["ended"] == "stopped"
    assert f'session "{family.child}" has ended (stopped at ' in error.message


async def test_an_archived_session_can_make_no_more_calls(call: Caller, family: Family) -> None:
    await call("compozy__session_archive", {"session_id": family.child})
    assert (await _denied_as_ended(call, family.scope)).details["ended"] == "archived"


async def test_an_expired_session_is_refused_at_call_time_before_any_sweep(
    call: Caller, clock: FixedClock
) -> None:
    parent = (await call.create())["id"]
    child = await _spawn(call, parent, tools=CHILD_TOOLS, ttl=1)
    clock.advance(2)
    error = await _denied_as_ended(call, CallScope(session_id=child))
    assert error.details["ended"] == "expired"


async def test_a_child_stopped_with_its_parent_loses_its_access_too(
    call: Caller, family: Family
) -> None:
    await call("compozy__session_stop", {"session_id": family.parent})
    for session in (family.child, family.grandchild, family.sibling):
        await _denied_as_ended(call, CallScope(session_id=session))
