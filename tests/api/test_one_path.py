"""Issue 24, item 1: one path for every operation. The Host API's session operations go
through the one dispatcher as the tool of the same name, so a ``tool.pre_call`` hook that
denies ``compozy__session_archive`` blocks ``compozy session archive`` and
``POST /api/sessions/{id}/archive`` as it blocks ``compozy tool invoke`` (before, the
operator's commands called the services directly and no hook saw them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import httpx2
import pytest
from tests.hooks.support import Recorder

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.errors import HookDenied
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.operation import Body
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio

Operation = Callable[[LocalHost, str], Awaitable[Any]]

#: each session operation of the Host API, the tool it is, and its HTTP route
OPERATIONS: dict[str, tuple[Operation, str, str]] = {
    "compozy__session_list": (
        lambda host, sid: host.call(ops.LIST_SESSIONS, {}),
        "GET",
        "/sessions",
    ),
    "compozy__session_status": (
        lambda host, sid: host.call(ops.SESSION_STATUS, {"session_id": sid}),
        "GET",
        "/sessions/{sid}",
    ),
    "compozy__session_create": (
        lambda host, sid: host.call(ops.CREATE_SESSION, {"agent_name": "general"}),
        "POST",
        "/sessions",
    ),
    "compozy__session_archive": (
        lambda host, sid: host.call(ops.ARCHIVE_SESSION, {"session_id": sid}),
        "POST",
        "/sessions/{sid}/archive",
    ),
    "compozy__session_unarchive": (
        lambda host, sid: host.call(ops.UNARCHIVE_SESSION, {"session_id": sid}),
        "POST",
        "/sessions/{sid}/unarchive",
    ),
    "compozy__session_delete": (
        lambda host, sid: host.call(ops.DELETE_SESSION, {"session_id": sid}),
        "DELETE",
        "/sessions/{sid}",
    ),
}


@pytest.fixture
async def session(app: App) -> str:
    created = await LocalHost(app).call(ops.CREATE_SESSION, {"agent_name": "general"})
    session_id: str = created["session"]["id"]
    return session_id


class DenyOne(Recorder):
    """An in-process ``tool.pre_call`` hook that denies one tool and lets the rest through."""

    def __init__(self, tool_id: str) -> None:
        super().__init__(pre_call={"deny": True, "deny_reason": "not today"})
        self.tool_id = tool_id

    async def __call__(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        self.events.append(payload)
        if payload["tool_id"] != self.tool_id:
            return None
        return self.patches.get(payload["event"])


def _deny(app: App, tool_id: str) -> DenyOne:
    hook = DenyOne(tool_id)
    app.dispatcher.add_hook(hook)
    return hook


@pytest.fixture
async def http(app: App) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


@pytest.mark.parametrize("tool_id", list(OPERATIONS))
async def test_a_deny_hook_on_the_tool_blocks_the_host_api_operation(
    app: App, session: str, tool_id: str
) -> None:
    operation, _, _ = OPERATIONS[tool_id]
    hook = _deny(app, tool_id)
    with pytest.raises(HookDenied, match="not today"):
        await operation(LocalHost(app), session)
    assert [seen["tool_id"] for seen in hook.of("pre_call")] == [tool_id]


@pytest.mark.parametrize("tool_id", list(OPERATIONS))
async def test_a_deny_hook_on_the_tool_blocks_the_http_route(
    app: App, http: httpx2.AsyncClient, session: str, tool_id: str
) -> None:
    _, method, route = OPERATIONS[tool_id]
    _deny(app, tool_id)
    body = {"agent_name": "general"} if route == "/sessions" and method == "POST" else None
    response = await http.request(method, route.format(sid=session), json=body)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["reason"] == "hook_denied"
    with app.store.read() as reader:
        assert reader.session(session) is not None  # not deleted


async def test_the_routes_still_return_complete_records_past_the_result_budget(
    settings: Settings, clock: FixedClock
) -> None:
    small = replace(settings, max_result_bytes=8 * 1024)
    with open_app(small, store=SQLiteStore.memory(), clock=clock) as app:
        host = LocalHost(app)
        for index in range(20):
            await host.call(
                ops.CREATE_SESSION, {"agent_name": "general", "name": f"session {index:03d}"}
            )
        transport = httpx2.ASGITransport(app=api_app(host, document))
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            response = await http.get("/sessions", params={"limit": 50})
        listed = response.json()
        assert len(response.content) > small.max_result_bytes
        assert len(listed["sessions"]) == 20
        assert "lineage" in listed["sessions"][0]  # the full view


async def test_the_loop_routes_return_complete_records_past_the_result_budget(
    settings: Settings, clock: FixedClock
) -> None:
    from tests.loops.support import graph, transform

    small = replace(settings, max_result_bytes=4 * 1024)
    with open_app(small, store=SQLiteStore.memory(), clock=clock) as app:
        transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
        definition = graph(*(transform(f"t{i}", "x" * 100) for i in range(40)))
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            made = await http.post("/loops", json={"definition": definition})
            assert made.status_code == 201, made.text
            assert len(made.content) > small.max_result_bytes
            loop_id = made.json()["loop"]["id"]
            shown = (await http.get(f"/loops/{loop_id}")).json()
            assert shown["loop"]["id"] == loop_id


def _minimal(schema: dict[str, Any]) -> Any:
    """A value the schema takes, as small as it gets (ids are made up: the hook runs before
    the tool looks anything up)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return _minimal(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _minimal(properties[name]) for name in schema.get("required", ())}
    if kind == "array":
        return [_minimal(schema.get("items", {}))] * schema.get("minItems", 0)
    if kind in {"integer", "number"}:
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return "x-1" if schema.get("minLength", 1) <= 3 else "x" * schema["minLength"]


TOOL_OPERATIONS = [operation for operation in ops.OPERATIONS if operation.tool_id is not None]


@pytest.mark.parametrize("operation", TOOL_OPERATIONS, ids=lambda o: o.name)
async def test_every_declared_operation_meets_a_deny_hook_on_its_tool(
    app: App, http: httpx2.AsyncClient, operation: Any
) -> None:
    """Issue 24, items 1 and 2: whatever operation is declared on a tool, its Host API call
    (the CLI's path) and its HTTP route are that tool's call through the one dispatcher."""
    from compozy_mcp.hostapi.inputs import input_schema

    assert operation.tool_id is not None
    hook = _deny(app, operation.tool_id)
    args = _minimal(input_schema(operation.tool_id))
    for field in operation.path_fields:
        args.setdefault(field, "x-1")
    with pytest.raises(HookDenied, match="not today"):
        await LocalHost(app).call(operation, args)
    path, rest = operation.http_path(args, str)
    if operation.body is Body.NONE:
        response = await http.request(operation.method, path, params=operation.query_of(rest))
    else:
        response = await http.request(operation.method, path, json=rest)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["reason"] == "hook_denied"
    assert {seen["tool_id"] for seen in hook.of("pre_call")} == {operation.tool_id}
