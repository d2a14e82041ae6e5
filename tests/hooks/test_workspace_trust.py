"""Issue 22, item 4: a workspace's ``.compozy/hooks.yaml`` runs only once the operator trusted
the workspace. Anything that writes into a workspace (an agent working there) could otherwise
run a command as the daemon on any call, even a restricted session's read-only one. The file of
a workspace that is not trusted is never read: ``hooks_list`` reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import Webhook, write_hooks

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost

pytestmark = pytest.mark.anyio

STATUS = "compozy__session_status"


async def _workspace_with_hooks(app: App, tmp_path: Path, server: Webhook) -> str:
    root = tmp_path / "planted"
    root.mkdir()
    added = await app.sessions.add_workspace(root, "planted")
    write_hooks(
        root / ".compozy" / "hooks.yaml",
        {"id": "planted", "event": "tool.pre_call", "url": server.at("/planted")},
    )
    app.hooks.registry.invalidate()
    return added.id


async def _restricted_session(call: Caller, workspace_id: str) -> str:
    parent = (await call.create(workspace_id=workspace_id))["id"]
    spawned = await call.structured(
        "compozy__session_spawn",
        {
            "parent_session_id": parent,
            "agent_name": "reader",
            "ttl_seconds": 600,
            "tools": [STATUS],
        },
    )
    child: str = spawned["session_id"]
    return child


async def _problems(call: Caller) -> list[dict[str, Any]]:
    listed = await call.structured("compozy__hooks_list", {"result_view": "full"})
    problems: list[dict[str, Any]] = listed["problems"]
    assert all(hook["id"] != "planted" for hook in listed["hooks"])
    return problems


async def test_a_restricted_sessions_read_only_call_runs_no_untrusted_workspace_hook(
    app: App, call: Caller, server: Webhook, tmp_path: Path
) -> None:
    workspace_id = await _workspace_with_hooks(app, tmp_path, server)
    child = await _restricted_session(call, workspace_id)
    result = await call(STATUS, {"session_id": child}, scope=scope_of(child))
    assert result.structured["session"]["id"] == child
    assert server.payloads("/planted") == []
    assert await _problems(call) == [
        {
            "source": f".compozy/hooks.yaml of workspace {workspace_id}",
            "workspace_id": workspace_id,
            "message": f'not run: workspace "{workspace_id}" is not trusted (the operator '
            "trusts it with `compozy workspace trust PATH`)",
        }
    ]


async def test_a_trusted_workspaces_hooks_run_until_the_trust_is_revoked(
    app: App, call: Caller, server: Webhook, tmp_path: Path
) -> None:
    workspace_id = await _workspace_with_hooks(app, tmp_path, server)
    child = await _restricted_session(call, workspace_id)
    host = LocalHost(app)
    trusted = (await host.call(ops.TRUST_WORKSPACE, {"workspace_id": workspace_id}))["workspace"]
    assert trusted["trusted_at"] is not None
    await call(STATUS, {"session_id": child}, scope=scope_of(child))
    assert [p["session_id"] for p in server.payloads("/planted")] == [child]
    listed = await call.structured("compozy__hooks_list", {"result_view": "full"})
    assert [hook["id"] for hook in listed["hooks"]] == [f"{workspace_id}.planted"]
    assert listed["problems"] == []
    # trusting again keeps the first time
    again = (await host.call(ops.TRUST_WORKSPACE, {"workspace_id": workspace_id}))["workspace"]
    assert again["trusted_at"] == trusted["trusted_at"]
    revoked = (await host.call(ops.DISTRUST_WORKSPACE, {"workspace_id": workspace_id}))["workspace"]
    assert revoked["trusted_at"] is None
    await call(STATUS, {"session_id": child}, scope=scope_of(child))
    assert len(server.payloads("/planted")) == 1  # no more runs
    assert ["is not trusted" in p["message"] for p in await _problems(call)] == [True]


async def test_no_tool_can_trust_a_workspace(app: App) -> None:
    assert not [tool.id for tool in app.dispatcher.registry if "trust" in tool.id]


async def test_the_default_workspace_starts_untrusted(app: App) -> None:
    listed = (await LocalHost(app).call(ops.LIST_WORKSPACES, {}))["workspaces"]
    assert [w["trusted_at"] for w in listed] == [None] * len(listed)
