"""The spec's two audit sentences of issue 27 ("Compact heartbeat status preserves the policy
snapshot_id"; "task review records preserve delivery_id"), over each surface a client reaches
the compact view through: an MCP client on the proxy, the HTTP API's tool invocation (in
process over ASGI) and the CLI as typed. The full record says the same; compact cuts the rest.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.api.support import Home, compozy
from tests.conftest import Caller
from tests.loops.support import mcp_client
from tests.proxy.support import record

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App
from compozy_mcp.hostapi.local import LocalHost

pytestmark = pytest.mark.anyio

#: calls one tool as the operator and answers its structured result
Invoke = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: what compact heartbeat status keeps; the prompt, the interval and the counts are full only
HEARTBEAT_COMPACT = {"session_id", "snapshot_id", "enabled", "next_wake_at"}
REVIEW_COMPACT = {"review_id", "task_id", "run_id", "delivery_id", "decision"}


@pytest.fixture(params=["mcp", "http"])
async def invoke(request: pytest.FixtureRequest, app: App) -> AsyncIterator[Invoke]:
    if request.param == "mcp":
        async with mcp_client(app) as client:

            async def over_mcp(tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
                return record(await client.call_tool(tool_id, tool_input))

            yield over_mcp
    else:
        transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:

            async def over_http(tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
                response = await http.post(f"/tools/{tool_id}/invoke", json={"input": tool_input})
                assert response.status_code == 200, response.text
                structured: dict[str, Any] = response.json()["result"]["structured"]
                return structured

            yield over_http


async def test_compact_heartbeat_status_preserves_the_policy_snapshot_id(
    invoke: Invoke, call: Caller
) -> None:
    session = (await call.create(provider="claude"))["id"]
    await invoke("compozy__agent_heartbeat_set", {"session_id": session, "cron": "0 9 * * *"})
    compact = (await invoke("compozy__agent_heartbeat_status", {"session_id": session}))[
        "heartbeat"
    ]
    full = (
        await invoke(
            "compozy__agent_heartbeat_status", {"session_id": session, "result_view": "full"}
        )
    )["heartbeat"]
    assert set(compact) == HEARTBEAT_COMPACT
    assert compact["snapshot_id"] == full["snapshot_id"]
    assert compact["snapshot_id"].startswith("pol-")
    assert {"prompt", "cron", "wakes"} <= set(full)


async def test_task_review_records_preserve_delivery_id(invoke: Invoke, call: Caller) -> None:
    worker = (await call.create(provider="claude"))["id"]
    task = (await invoke("compozy__task_create", {"title": "audited"}))["task"]
    claimed = await invoke(
        "compozy__task_run_claim_next", {"session_id": worker, "task_id": task["task_id"]}
    )
    run_id = claimed["task"]["current_run"]["run_id"]
    done = await invoke("compozy__task_run_complete", {"run_id": run_id, "summary": "done"})
    delivery_id = done["task"]["current_run"]["delivery_id"]
    reviewed = await invoke(
        "compozy__task_run_review_submit",
        {"task_id": task["task_id"], "decision": "request_changes", "comments": "again"},
    )
    assert set(reviewed["review"]) == REVIEW_COMPACT
    assert reviewed["review"]["delivery_id"] == delivery_id
    status = await invoke("compozy__task_status", {"task_id": task["task_id"]})
    assert [review["delivery_id"] for review in status["task"]["reviews"]] == [delivery_id]
    assert "comments" not in status["task"]["reviews"][0]  # compact


# --- the CLI, as typed ---------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


def _tool(home: Home, tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    done: subprocess.CompletedProcess[str] = compozy(
        home, "tool", "invoke", tool_id, "--input", json.dumps(tool_input), "-o", "json"
    )
    assert done.returncode == 0, done.stderr
    structured: dict[str, Any] = json.loads(done.stdout)["result"]["structured"]
    return structured


def test_through_the_cli_compact_heartbeat_status_and_review_records_keep_their_ids(
    home: Home,
) -> None:
    made = compozy(home, "session", "create", "--agent", "general", "-o", "json")
    session = json.loads(made.stdout)["session"]["id"]
    _tool(home, "compozy__agent_heartbeat_set", {"session_id": session})
    beat = _tool(home, "compozy__agent_heartbeat_status", {"session_id": session})["heartbeat"]
    assert set(beat) == HEARTBEAT_COMPACT
    assert beat["snapshot_id"].startswith("pol-")
    task = _tool(home, "compozy__task_create", {"title": "audited"})["task"]
    claimed = _tool(home, "compozy__task_run_claim_next", {"session_id": session})
    run_id = claimed["task"]["current_run"]["run_id"]
    done = _tool(home, "compozy__task_run_complete", {"run_id": run_id, "summary": "done"})
    accepted = _tool(
        home, "compozy__task_run_review_submit", {"task_id": task["task_id"], "decision": "accept"}
    )
    assert set(accepted["review"]) == REVIEW_COMPACT
    assert accepted["review"]["delivery_id"] == done["task"]["current_run"]["delivery_id"]
