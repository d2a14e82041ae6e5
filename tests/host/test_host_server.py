"""``compozy mcp serve``: the Host API as ``compozy_host__*`` MCP tools.

In-process on an app (SDK ``Client`` given the server), against a daemon through the remote
client, and as the real command over stdio. Each tool returns the payload its HTTP route
returns; none takes ``result_view`` or advertises ``outputSchema``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from tests.api.support import COMPOZY, Daemon, Home, compozy, running_daemon, short_dir

from compozy_mcp.assembly import App
from compozy_mcp.host.server import PREFIX, HostServer
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.remote import RemoteHost
from compozy_mcp.hostapi.target import parse_target

pytestmark = pytest.mark.anyio

HOST_TOOLS = {
    PREFIX + name
    for name in (
        "session_list",
        "session_status",
        "session_create",
        "session_archive",
        "session_unarchive",
        "session_delete",
        "store_vacuum",
        "workspace_list",
        "workspace_add",
        "profile_list",
        "profile_add",
        "tool_list",
        "tool_info",
        "tool_search",
        "tool_invoke",
        "approval_mint",
        "session_approve",
    )
}


@pytest.fixture
async def client(app: App) -> AsyncIterator[Client]:
    async with Client(HostServer(LocalHost(app)).server, raise_exceptions=True) as connected:
        yield connected


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(PREFIX + name, args)
    assert result.is_error is False, result.content
    structured = result.structured_content
    assert isinstance(structured, dict)
    [text] = result.content
    assert json.loads(getattr(text, "text", "")) == structured  # the one JSON text block
    return structured


async def error(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(PREFIX + name, args)
    assert result.is_error is True
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert list(structured) == ["error"]
    body: dict[str, Any] = structured["error"]
    return body


async def test_host_tools_take_no_selector_and_advertise_no_output_schema(client: Client) -> None:
    page = await client.list_tools()
    assert {tool.name for tool in page.tools} == HOST_TOOLS
    for tool in page.tools:
        assert tool.output_schema is None, tool.name
        assert "result_view" not in tool.input_schema.get("properties", {}), tool.name
        assert tool.input_schema["type"] == "object"


async def test_every_host_tool_has_a_title(client: Client) -> None:
    """Issue 17, item 5: every tool a title, the Host API's too."""
    page = await client.list_tools()
    titles = {tool.name: tool.title for tool in page.tools}
    assert titles["compozy_host__session_list"] == "Host: session list"
    assert all(titles.values())


async def test_each_tool_returns_what_the_host_api_returns(client: Client, app: App) -> None:
    host = LocalHost(app)
    created = await call(client, "session_create", {"agent_name": "general", "name": "mcp"})
    sid = created["session"]["id"]
    assert created == await host.call(ops.SESSION_STATUS, {"session_id": sid})
    assert await call(client, "session_status", {"session_id": sid}) == created
    assert await call(client, "session_list", {"limit": 5}) == await host.call(
        ops.LIST_SESSIONS, {"limit": 5}
    )
    assert await call(client, "tool_list", {}) == await host.call(ops.LIST_TOOLS, {})
    assert await call(client, "tool_info", {"tool_id": "compozy__session_status"}) == (
        await host.call(ops.TOOL_INFO, {"tool_id": "compozy__session_status"})
    )
    assert await call(client, "tool_search", {"query": "skill"}) == await host.call(
        ops.SEARCH_TOOLS, {"query": "skill"}
    )
    archived = await call(client, "session_archive", {"session_id": sid})
    assert archived["session"]["archived_at"] is not None
    back = await call(client, "session_unarchive", {"session_id": sid})
    assert back["session"]["archived_at"] is None


async def test_workspace_and_profile_tools_return_the_route_payloads(
    client: Client, app: App, tmp_path: Path
) -> None:
    host = LocalHost(app)
    added = await call(client, "workspace_add", {"path": str(tmp_path), "name": "t"})
    assert added["workspace"]["path"] == str(tmp_path.resolve())
    assert await call(client, "workspace_list", {}) == await host.call(ops.LIST_WORKSPACES, {})
    assert added["workspace"] in (await host.call(ops.LIST_WORKSPACES, {}))["workspaces"]
    profile = await call(client, "profile_add", {"name": "Ops", "icon": "gear"})
    assert (profile["profile"]["name"], profile["profile"]["icon"]) == ("Ops", "gear")
    assert await call(client, "profile_list", {}) == await host.call(ops.LIST_PROFILES, {})


async def test_a_bad_workspace_is_the_route_error_not_a_redacted_one(
    client: Client, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    body = await error(client, "workspace_add", {"path": str(missing)})
    assert body == {
        "code": "invalid_request",
        "reason": "path_not_directory",
        "message": f"{missing} is not a directory",
    }


async def test_session_tools_return_the_full_record(client: Client) -> None:
    created = await call(client, "session_create", {"agent_name": "general"})
    session = created["session"]
    assert session["lineage"]["permission_policy"]["tools"] == ["*"]
    assert "supervision" in session
    assert "available_commands" in session


async def test_tool_invoke_passes_the_selector_inside_input(client: Client) -> None:
    sid = (await call(client, "session_create", {"agent_name": "general"}))["session"]["id"]
    args: dict[str, Any] = {"tool_id": "compozy__session_status", "input": {"session_id": sid}}
    compact = await call(client, "tool_invoke", args)
    assert set(compact["result"]) == {"structured", "preview"}
    assert "supervision" not in compact["result"]["structured"]["session"]
    args["input"]["result_view"] = "full"
    full = await call(client, "tool_invoke", args)
    assert "supervision" in full["result"]["structured"]["session"]


async def test_tool_invoke_rejects_a_top_level_result_view(client: Client) -> None:
    body = await error(
        client, "tool_invoke", {"tool_id": "compozy__tool_list", "result_view": "full"}
    )
    assert body == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": "invalid tool request",
        "tool_id": "compozy_host__tool_invoke",
    }


@pytest.mark.parametrize(
    ("name", "args", "code_reason", "tool_id"),
    [
        pytest.param(
            "session_status",
            {"session_id": "sess-nope"},
            ("not_found", "session_not_found"),
            "compozy__session_status",
            id="unknown-session",
        ),
        pytest.param(
            "tool_info",
            {"tool_id": "compozy__nope"},
            ("tool_not_found", "tool_unknown"),
            "compozy__nope",
            id="unknown-tool",
        ),
        pytest.param(
            "tool_invoke",
            {"tool_id": "compozy__session_status", "input": {"result_view": "huge"}},
            ("tool_invalid_input", "schema_invalid"),
            "compozy__session_status",
            id="bad-selector-inside-input",
        ),
        pytest.param(
            "session_create",
            {},
            ("tool_invalid_input", "schema_invalid"),
            "compozy_host__session_create",
            id="missing-argument",
        ),
        pytest.param(
            "tool_invoke",
            {"tool_id": "compozy__tool_list", "input": [1]},
            ("tool_invalid_input", "schema_invalid"),
            "compozy_host__tool_invoke",
            id="input-not-an-object",
        ),
    ],
)
@pytest.mark.loop_blocking(
    "the in-memory MCP client parses the whole tool listing in the test's own task"
)
async def test_errors_are_is_error_results_carrying_the_route_error_body(
    client: Client,
    name: str,
    args: dict[str, Any],
    code_reason: tuple[str, str],
    tool_id: str,
) -> None:
    body = await error(client, name, args)
    assert (body["code"], body["reason"]) == code_reason
    assert body["tool_id"] == tool_id
    # the next call still works
    assert (await call(client, "tool_list", {}))["tools"]


async def test_an_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError):
        await client.call_tool("compozy_host__nope", {})


@pytest.mark.loop_blocking(
    "the in-memory MCP client parses the whole tool listing in the test's own task"
)
async def test_legacy_protocol_clients_get_the_same_payloads(app: App) -> None:
    server = HostServer(LocalHost(app)).server
    async with Client(server, mode="legacy") as legacy:
        listed = await call(legacy, "tool_list", {})
    assert listed == await LocalHost(app).call(ops.LIST_TOOLS, {})


# --- against a daemon ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    home = Home.make(tmp_path_factory.mktemp("host"))
    done = compozy(home, "session", "create", "--agent", "general", "--id", "sess-example")
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as running,
    ):
        yield running


def _route(daemon: Daemon, path: str) -> dict[str, Any]:
    with daemon.client() as http:
        body: dict[str, Any] = http.get(path).json()
    return body


@pytest.mark.process
async def test_against_a_daemon_each_tool_returns_the_http_route_payload(daemon: Daemon) -> None:
    assert daemon.url is not None
    remote = RemoteHost(parse_target(daemon.url))
    try:
        async with Client(HostServer(remote).server) as over_http:
            status = await call(over_http, "session_status", {"session_id": "sess-example"})
            assert status == _route(daemon, "/api/sessions/sess-example")
            listed = await call(over_http, "tool_list", {})
            assert listed == _route(daemon, "/api/tools")
            info = await call(over_http, "tool_info", {"tool_id": "compozy__skill_view"})
            assert info == _route(daemon, "/api/tools/compozy__skill_view")
            missing = await error(over_http, "session_status", {"session_id": "sess-nope"})
            with daemon.client() as http:
                assert {"error": missing} == http.get("/api/sessions/sess-nope").json()
    finally:
        await remote.aclose()


@pytest.mark.process
@pytest.mark.parametrize("where", ["in-process", "daemon"])
async def test_compozy_mcp_serve_over_stdio_lists_and_calls_host_tools(
    home: Home, daemon: Daemon, where: str
) -> None:
    assert daemon.socket is not None
    args = (
        ["mcp", "serve"]
        if where == "in-process"
        else ["--socket", str(daemon.socket), "mcp", "serve"]
    )
    params = StdioServerParameters(command=str(COMPOZY), args=args, env=home.env)
    async with Client(params) as stdio:
        page = await stdio.list_tools()
        assert {tool.name for tool in page.tools} == HOST_TOOLS
        status = await call(stdio, "session_status", {"session_id": "sess-example"})
    assert status == _route(daemon, "/api/sessions/sess-example")
