"""Issue 16, "How it is shown": through the MCP Inspector CLI and the Python SDK client,
``compozy proxy --discovery search`` lets a client find and call ``compozy__session_status`` with
``result_view: "full"`` (one search, one call); and a relay of a daemon follows the daemon's
upstream servers (``tools/list_changed``) and offers discovery too."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.api.support import Home as DaemonHome
from tests.api.support import running_daemon
from tests.proxy.support import (
    COMPOZY,
    HTTP_READY,
    MODES,
    Home,
    Mode,
    ProxyPool,
    make_home,
    record,
    spawned,
)
from tests.proxy.test_typescript_clients import INSPECTOR, inspector, node_folder
from tests.upstream.real import REPO, define

THREE = ["compozy__tool_search", "compozy__tool_info", "compozy__tool_call"]
SEARCH_ARGS = ["proxy", "--discovery", "search"]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


async def find_and_call_status_full(client: Client) -> dict[str, Any]:
    """What an agent does: one search, then one call with the selector the hit's schema shows."""
    assert [tool.name for tool in (await client.list_tools()).tools] == THREE
    created = record(
        await client.call_tool(
            "compozy__tool_call",
            {"tool_id": "compozy__session_create", "input": {"agent_name": "general"}},
        )
    )
    found = record(await client.call_tool("compozy__tool_search", {"query": "session status"}))
    hit = found["tools"][0]
    assert hit["id"] == "compozy__session_status"
    assert "full" in hit["input_schema"]["properties"]["result_view"]["enum"]
    tool_input = {"session_id": created["session"]["id"], "result_view": "full"}
    full = record(
        await client.call_tool("compozy__tool_call", {"tool_id": hit["id"], "input": tool_input})
    )
    session: dict[str, Any] = full["session"]
    assert session["id"] == created["session"]["id"]
    assert "permission_policy" in session["lineage"]  # the full record
    return session


@pytest.mark.process
@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_the_python_sdk_client_finds_and_calls_session_status_full_over_stdio(
    home: Home, mode: Mode
) -> None:
    params = StdioServerParameters(command=str(COMPOZY), args=SEARCH_ARGS, env=dict(home.env))
    async with spawned(home, params, mode, "discovery") as client:
        await find_and_call_status_full(client)


@pytest.mark.process
@pytest.mark.anyio
async def test_the_python_sdk_client_finds_and_calls_session_status_full_over_http(
    home: Home,
) -> None:
    pool = ProxyPool(home)
    try:
        process = pool.start([*SEARCH_ARGS, "--http", "127.0.0.1:0"], dict(home.env), HTTP_READY)
        url = process.wait_ready().group(1)
        for mode in MODES:
            async with Client(url, mode=mode, cache=None) as client:
                await find_and_call_status_full(client)
    finally:
        pool.close()


@pytest.mark.node
def test_the_mcp_inspector_cli_finds_and_calls_session_status_full(home: Home) -> None:
    folder = node_folder(INSPECTOR, "@modelcontextprotocol/inspector")
    target = [str(COMPOZY), *SEARCH_ARGS]
    listed = inspector(folder, home, target, "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == THREE

    def call(name: str, *args: str) -> dict[str, Any]:
        found = inspector(
            folder, home, target, "--method", "tools/call", "--tool-name", name, "--tool-arg", *args
        )
        assert found.get("isError") is not True, found
        structured: dict[str, Any] = found["structuredContent"]
        assert json.loads(found["content"][0]["text"]) == structured
        return structured

    created = call(
        "compozy__tool_call",
        "tool_id=compozy__session_create",
        'input={"agent_name":"general"}',
    )
    hits = call("compozy__tool_search", "query=session status")["tools"]
    assert hits[0]["id"] == "compozy__session_status"
    tool_input = json.dumps({"session_id": created["session"]["id"], "result_view": "full"})
    full = call("compozy__tool_call", f"tool_id={hits[0]['id']}", f"input={tool_input}")
    assert full["session"]["id"] == created["session"]["id"]
    assert "permission_policy" in full["session"]["lineage"]


# --- a relay of a daemon ---------------------------------------------------------------------


@asynccontextmanager
async def relay(home: Home, url: str, *args: str, **options: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=str(COMPOZY), args=["--url", url, "proxy", *args], env=dict(home.env), cwd=str(REPO)
    )
    async with spawned(home, params, "legacy", "relay", **options) as client:
        yield client


@pytest.mark.process
@pytest.mark.anyio
async def test_a_relay_follows_the_daemons_upstream_tools_and_offers_discovery(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path / "r")
    define(home)
    changes: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append(message)

    daemon_home = DaemonHome(Path(home.env["COMPOZY_HOME"]), dict(home.env))
    with running_daemon(daemon_home, "--port", "0", "--no-uds", listeners=1) as daemon:
        assert daemon.url is not None
        async with relay(home, daemon.url, message_handler=handler) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "notes__lookup" in names
            assert "notes__extra_1" not in names
            await client.call_tool("notes__grow", {})
            with anyio.fail_after(30):
                while not changes:
                    await anyio.sleep(0.05)
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "notes__extra_1" in names
            odd = await client.call_tool("notes__lookup", {"note": "r", "result_view": "verbose"})
            assert odd.structured_content == {
                "note": "r",
                "view": "verbose",
                "text": "the whole text of r",
            }
        async with relay(home, daemon.url, "--discovery", "search") as client:
            await find_and_call_status_full(client)
            looked = await client.call_tool(
                "compozy__tool_call", {"tool_id": "notes__pid", "input": {}}
            )
            assert looked.structured_content is not None
            assert isinstance(looked.structured_content["pid"], int)
