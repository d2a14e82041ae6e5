"""``compozy__session_spawn``: budget, depth, TTL, policy narrowing, and its two views."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.errors import (
    SpawnRefused,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
    WorktreeUnavailable,
)

pytestmark = pytest.mark.anyio


async def _spawn(call: Caller, parent: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("agent_name", "general")
    fields.setdefault("ttl_seconds", 3600)
    return await call.structured("compozy__session_spawn", {"parent_session_id": parent, **fields})


async def test_spawn_compact_is_exactly_the_four_spawn_facts(call: Caller) -> None:
    parent = (await call.create())["id"]
    result = await _spawn(call, parent)
    assert set(result) == {"session_id", "spawn_role", "spawn_depth", "ttl_expires_at"}
    assert result["spawn_role"] == "worker"
    assert result["spawn_depth"] == 1
    assert result["ttl_expires_at"] == "2026-11-10T15:02:11Z"


async def test_spawn_full_adds_permissions(call: Caller, workspace: Any) -> None:
    parent = (await call.create())["id"]
    result = await _spawn(call, parent, result_view="full")
    assert result["permissions"] == {
        "tools": ["*"],
        "skills": ["*"],
        "mcp_servers": ["*"],
        "workspace_paths": [str(workspace.resolve())],
    }


async def test_the_prompt_entry_is_in_both_views(call: Caller) -> None:
    # the worktree entry, with a real git worktree: tests/worktrees/test_session_worktrees.py
    parent = (await call.create())["id"]
    compact = await _spawn(call, parent, prompt="Find the flake", idempotency_key="k1")
    full = await _spawn(
        call, parent, prompt="Find the flake", idempotency_key="k1", result_view="full"
    )
    assert compact["prompt"] == full["prompt"]
    assert compact["prompt"]["status"] == "queued"
    child = await call.session("compozy__session_status", {"session_id": compact["session_id"]})
    assert child["queue"]["pending"] == 1
    assert child["queue"]["next"]["preview"] == "Find the flake"


async def test_a_worktree_in_a_workspace_that_is_not_a_git_repository_is_refused(
    call: Caller, workspace: Any
) -> None:
    parent = (await call.create())["id"]
    with pytest.raises(WorktreeUnavailable) as caught:
        await _spawn(call, parent, worktree=True)
    assert (caught.value.code, caught.value.reason) == (
        "worktree_unavailable",
        "not_a_git_repository",
    )
    assert f"({workspace.resolve()}) is not a git repository" in caught.value.message
    assert (await call.structured("compozy__session_list", {}))["sessions"][0]["id"] == parent


async def test_the_child_records_its_lineage(call: Caller) -> None:
    parent = (await call.create(session_id="sess-root"))["id"]
    child_id = (await _spawn(call, parent, spawn_role="reviewer"))["session_id"]
    child = await call.session("compozy__session_status", {"session_id": child_id})
    assert child["type"] == "subagent"
    assert child["lineage"] == {
        "kind": "spawn",
        "parent_session_id": "sess-root",
        "root_session_id": "sess-root",
        "ttl_expires_at": "2026-11-10T15:02:11Z",
        "spawn_budget": {"max_children": 16, "max_depth": 3, "ttl_seconds": 3600},
    }
    parent_record = await call.session("compozy__session_status", {"session_id": parent})
    assert parent_record["children"] == [
        {
            "session_id": child_id,
            "kind": "spawn",
            "agent_name": "general",
            "state": "active",
            "spawn_role": "reviewer",
        }
    ]
    assert parent_record["subagent_summary"] == {"total": 1, "active": 1, "stopped": 0, "failed": 0}


async def test_a_childs_policy_never_exceeds_its_parents(call: Caller, workspace: Any) -> None:
    parent = (await call.create())["id"]
    narrow = await _spawn(
        call,
        parent,
        tools=["compozy__session_*"],
        skills=["review"],
        workspace_paths=["src"],
        result_view="full",
    )
    assert narrow["permissions"]["tools"] == ["compozy__session_*"]
    assert narrow["permissions"]["workspace_paths"] == [str(workspace.resolve() / "src")]
    with pytest.raises(SpawnRefused) as caught:
        await call(
            "compozy__session_spawn",
            {
                "parent_session_id": narrow["session_id"],
                "agent_name": "g",
                "ttl_seconds": 60,
                "tools": ["compozy__session_status", "compozy__tool_list", "*"],
                "skills": ["deploy"],
                "workspace_paths": ["/etc"],
            },
        )
    assert caught.value.reason == "permission_exceeds_parent"
    assert caught.value.details["exceeding"] == {
        "tools": ["compozy__tool_list", "*"],
        "skills": ["deploy"],
        "workspace_paths": ["/etc"],
    }
    grandchild = await call.structured(
        "compozy__session_spawn",
        {
            "parent_session_id": narrow["session_id"],
            "agent_name": "g",
            "ttl_seconds": 60,
            "tools": ["compozy__session_status"],
            "result_view": "full",
        },
    )
    assert grandchild["permissions"]["skills"] == ["review"]  # inherited when not narrowed


async def test_depth_is_enforced(call: Caller) -> None:
    parent = (await call.create())["id"]
    for _ in range(3):
        parent = (await _spawn(call, parent, ttl_seconds=60))["session_id"]
    with pytest.raises(SpawnRefused) as caught:
        await _spawn(call, parent, ttl_seconds=60)
    assert caught.value.reason == "spawn_depth_exceeded"


async def test_the_spawn_budget_is_enforced(call: Caller) -> None:
    parent = (await call.create())["id"]
    for _ in range(16):
        await _spawn(call, parent, ttl_seconds=60)
    with pytest.raises(SpawnRefused) as caught:
        await _spawn(call, parent, ttl_seconds=60)
    assert caught.value.reason == "spawn_budget_exhausted"


async def test_ttl_is_enforced_against_the_budget_and_the_parents_expiry(
    call: Caller, clock: FixedClock
) -> None:
    root = (await call.create())["id"]
    with pytest.raises(SpawnRefused) as caught:
        await _spawn(call, root, ttl_seconds=86_401)
    assert caught.value.reason == "spawn_ttl_exceeded"
    child = (await _spawn(call, root, ttl_seconds=600))["session_id"]
    clock.advance(300)
    with pytest.raises(SpawnRefused, match="cannot outlive its parent") as caught:
        await _spawn(call, child, ttl_seconds=400)
    assert caught.value.reason == "spawn_ttl_exceeded"
    assert (await _spawn(call, child, ttl_seconds=300))["spawn_depth"] == 2


async def test_an_expired_child_is_stopped_with_its_ttl_cause(
    call: Caller, clock: FixedClock
) -> None:
    root = (await call.create())["id"]
    child = (await _spawn(call, root, ttl_seconds=60))["session_id"]
    clock.advance(61)
    record = await call.session("compozy__session_status", {"session_id": child})
    assert (record["state"], record["stop_cause"], record["stop_reason"]) == (
        "stopped",
        "ttl",
        "ttl_expired",
    )
    with pytest.raises(ToolConflict) as caught:
        await call(
            "compozy__session_continue",
            {"session_id": child, "transcript_epoch": 0, "generation": 0},
        )
    assert caught.value.reason == "ttl_expired"


async def test_a_child_and_grandchild_expiring_together_are_both_stopped(
    call: Caller, clock: FixedClock
) -> None:
    root = (await call.create())["id"]
    child = (await _spawn(call, root, ttl_seconds=60))["session_id"]
    grandchild = (await _spawn(call, child, ttl_seconds=30))["session_id"]
    clock.advance(120)
    for sid, cause in ((root, None), (child, "ttl"), (grandchild, "parent")):
        record = await call.session("compozy__session_status", {"session_id": sid})
        assert record.get("stop_cause") == cause


async def test_stopping_a_parent_stops_children_that_stop_with_it(call: Caller) -> None:
    root = (await call.create())["id"]
    follows = (await _spawn(call, root))["session_id"]
    stays = (await _spawn(call, root, auto_stop_on_parent=False))["session_id"]
    await call("compozy__session_stop", {"session_id": root})
    followed = await call.session("compozy__session_status", {"session_id": follows})
    assert (followed["state"], followed["stop_cause"]) == ("stopped", "parent")
    assert (await call.session("compozy__session_status", {"session_id": stays}))[
        "state"
    ] == "active"
    with pytest.raises(ToolConflict) as caught:
        await _spawn(call, root)
    assert caught.value.reason == "parent_not_active"


async def test_the_parent_comes_from_the_callers_scope(call: Caller) -> None:
    root = (await call.create())["id"]
    scope = CallScope(session_id=root)
    result = await call.structured(
        "compozy__session_spawn", {"agent_name": "general", "ttl_seconds": 60}, scope=scope
    )
    child = await call.session("compozy__session_status", {"session_id": result["session_id"]})
    assert child["lineage"]["parent_session_id"] == root
    other = (await call.create())["id"]
    with pytest.raises(ToolDenied) as caught:
        await call(
            "compozy__session_spawn",
            {"agent_name": "g", "ttl_seconds": 60, "parent_session_id": other},
            scope=scope,
        )
    assert caught.value.reason == "session_not_in_scope"


async def test_without_scope_or_parent_the_spawn_is_an_input_error(call: Caller) -> None:
    with pytest.raises(ToolInvalidInput, match='"parent_session_id" is required'):
        await call("compozy__session_spawn", {"agent_name": "g", "ttl_seconds": 60})


async def test_idempotency_key_returns_the_same_child_and_refuses_other_arguments(
    call: Caller,
) -> None:
    root = (await call.create())["id"]
    first = await _spawn(call, root, idempotency_key="once")
    again = await _spawn(call, root, idempotency_key="once")
    assert first == again
    listed = await call.structured("compozy__session_list", {"parent_session_id": root})
    assert len(listed["sessions"]) == 1
    with pytest.raises(ToolConflict) as caught:
        await _spawn(call, root, idempotency_key="once", name="different")
    assert caught.value.reason == "idempotency_key_reused"


async def test_the_parent_summarizes_failed_and_stopped_children(app: App, call: Caller) -> None:
    root = (await call.create())["id"]
    failed = (await _spawn(call, root, name="crashy"))["session_id"]
    stopped = (await _spawn(call, root))["session_id"]
    await _spawn(call, root)
    app.sessions.events.record_failure(failed, "crash", "exit 137")
    await call("compozy__session_stop", {"session_id": stopped})
    parent = await call.session("compozy__session_status", {"session_id": root})
    assert parent["subagent_summary"] == {"total": 3, "active": 1, "stopped": 1, "failed": 1}
    assert parent["children"][0] == {
        "session_id": failed,
        "kind": "spawn",
        "agent_name": "general",
        "name": "crashy",
        "state": "stopped",
        "spawn_role": "worker",
    }


async def test_a_managed_session_create_refuses_a_workspace_or_profile_it_cannot_apply(
    call: Caller, tmp_path: Any
) -> None:
    """Issue 22: a managed ``session_create`` silently ignored ``workspace_id``/``profile_id``
    (its children take its own). Another one is refused naming the field; its own is taken."""
    root = (await call.create())["id"]
    scope = CallScope(session_id=root)
    other = await call.app.sessions.add_workspace(tmp_path, "other")
    profile = await call.app.sessions.add_profile("other")
    for field, value in (("workspace_id", other.id), ("profile_id", profile.id)):
        with pytest.raises(ToolInvalidInput) as caught:
            await call(
                "compozy__session_create", {"agent_name": "general", field: value}, scope=scope
            )
        assert caught.value.field == field
        assert caught.value.message.startswith(
            f'tool "compozy__session_create" input "{field}" must be "'
        )
    child = await call.structured(
        "compozy__session_create",
        {"agent_name": "general", "workspace_id": "ws_default", "profile_id": "prof_default"},
        scope=scope,
    )
    assert child["session"]["lineage"]["parent_session_id"] == root
    assert (child["session"]["workspace_id"], child["session"]["profile_id"]) == (
        "ws_default",
        "prof_default",
    )
