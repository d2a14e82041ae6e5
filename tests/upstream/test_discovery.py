"""Issue 16, item 3: progressive discovery. ``--discovery search`` advertises only
``compozy__tool_search``, ``compozy__tool_info`` and ``compozy__tool_call``; a client finds any
tool, native or pass-through, with one search and calls it with one call, and result views,
errors and policy filtering behave exactly as when the tool is called directly."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from tests.proxy.support import (
    MODES,
    SINGLE_RESULT,
    UNKNOWN_VIEW,
    Mode,
    create_session,
    record,
    spawn_child,
    tool_error,
)
from tests.upstream.servers import notes
from tests.upstream.support import extension, raw_call, serving

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.proxy.discovery import TOOL_CALL_SCHEMA
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.proxy.server import ProxyServer

pytestmark = pytest.mark.anyio
SEARCH = Discovery.SEARCH
THREE = ["compozy__tool_search", "compozy__tool_info", "compozy__tool_call"]


def same(one: CallToolResult, other: CallToolResult) -> bool:
    fields = {"content", "structured_content", "is_error"}
    return one.model_dump(include=fields) == other.model_dump(include=fields)


async def via_tool_call(client: Client, tool_id: str, tool_input: Any) -> CallToolResult:
    return await raw_call(client, "compozy__tool_call", {"tool_id": tool_id, "input": tool_input})


@pytest.mark.parametrize("mode", MODES)
async def test_search_mode_advertises_only_the_three_discovery_tools(app: App, mode: Mode) -> None:
    async with (
        serving(app, [extension()], discovery=SEARCH) as proxy,
        Client(proxy.server, mode=mode) as client,
    ):
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == THREE
    call = tools[2]
    assert call.input_schema == TOOL_CALL_SCHEMA
    assert call.output_schema is None
    # full, the default, advertises every tool
    async with Client(ProxyServer(app).server, mode=mode) as client:
        assert len((await client.list_tools()).tools) == len(app.dispatcher.registry)


@pytest.mark.parametrize("mode", MODES)
async def test_one_search_and_one_call_reach_session_status_full(app: App, mode: Mode) -> None:
    async with Client(ProxyServer(app, discovery=SEARCH).server, mode=mode) as client:
        sid = (await create_session(client, name="found by search"))["id"]
        found = record(
            await client.call_tool(
                "compozy__tool_search", {"query": "read one session's status", "limit": 3}
            )
        )
        hit = found["tools"][0]
        assert hit["id"] == "compozy__session_status"
        assert hit["input_schema"]["properties"]["result_view"]["enum"] == ["compact", "full"]
        full = record(
            await client.call_tool(
                "compozy__tool_call",
                {"tool_id": hit["id"], "input": {"session_id": sid, "result_view": "full"}},
            )
        )
    assert full["session"]["name"] == "found by search"
    assert "permission_policy" in full["session"]["lineage"]  # only the full record has it


@pytest.mark.parametrize("mode", MODES)
async def test_result_views_and_errors_through_tool_call_are_those_of_a_direct_call(
    app: App, mode: Mode
) -> None:
    async with Client(ProxyServer(app, discovery=SEARCH).server, mode=mode) as client:
        sid = (await create_session(client))["id"]
        for tool_id, tool_input in [
            ("compozy__session_status", {"session_id": sid}),
            ("compozy__session_status", {"session_id": sid, "result_view": "full"}),
            ("compozy__session_status", {"session_id": sid, "result_view": "detailed"}),
            ("compozy__session_status", {"session_id": sid, "result_view": 3}),
            ("compozy__skill_view", {"name": "x", "result_view": "full"}),
            ("compozy__session_status", {"session_id": "sess-none"}),
            ("compozy__session_status", {}),
            ("compozy__tool_info", {"tool_id": "compozy__session_status"}),
        ]:
            direct = await raw_call(client, tool_id, tool_input)
            through = await via_tool_call(client, tool_id, tool_input)
            assert same(direct, through), (tool_id, tool_input)
        assert (
            tool_error(
                await via_tool_call(
                    client, "compozy__session_status", {"session_id": sid, "result_view": "x"}
                )
            )["message"]
            == UNKNOWN_VIEW
        )
        assert (
            tool_error(
                await via_tool_call(
                    client, "compozy__skill_view", {"name": "x", "result_view": "full"}
                )
            )["message"]
            == SINGLE_RESULT
        )


async def test_policy_filtering_through_tool_call_is_that_of_a_direct_call(app: App) -> None:
    async with Client(ProxyServer(app).server) as operator:
        parent = (await create_session(operator))["id"]
        child = await spawn_child(operator, parent, ["compozy__session_status", "compozy__tool_*"])
    bound = ProxyServer(app, scope=CallScope(child), discovery=SEARCH)
    async with Client(bound.server) as client:
        assert [t.name for t in (await client.list_tools()).tools] == THREE
        found = record(await client.call_tool("compozy__tool_search", {"query": "session"}))
        assert {hit["id"] for hit in found["tools"]} == {"compozy__session_status"}
        for tool_id, tool_input in [
            ("compozy__session_create", {"agent_name": "general"}),  # not allowed
            ("compozy__session_status", {"session_id": child}),  # allowed
            ("compozy__session_status", {"session_id": parent}),  # allowed, other session
        ]:
            direct = await raw_call(client, tool_id, tool_input)
            assert same(direct, await via_tool_call(client, tool_id, tool_input)), tool_id
        denied = tool_error(await via_tool_call(client, "compozy__session_create", {}))
        assert (denied["code"], denied["reason"]) == ("tool_denied", "permission_denied")


async def test_a_policy_without_search_leaves_it_out_of_the_listing(app: App) -> None:
    async with Client(ProxyServer(app).server) as operator:
        parent = (await create_session(operator))["id"]
        child = await spawn_child(operator, parent, ["compozy__session_status"])
    bound = ProxyServer(app, scope=CallScope(child), discovery=SEARCH)
    async with Client(bound.server) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["compozy__tool_call"]
        record(await via_tool_call(client, "compozy__session_status", {"session_id": child}))


async def test_an_unknown_tool_id_is_a_tool_error_the_model_sees(app: App) -> None:
    async with Client(ProxyServer(app, discovery=SEARCH).server) as client:
        with pytest.raises(MCPError):  # a direct call: a JSON-RPC error, as MCP says
            await client.call_tool("compozy__nope", {})
        error = tool_error(await via_tool_call(client, "compozy__nope", {}))
        assert (error["code"], error["reason"]) == ("tool_not_found", "tool_unknown")
        assert error["message"] == 'tool "compozy__nope" is not registered'


async def test_tool_call_checks_its_own_input(app: App) -> None:
    async with Client(ProxyServer(app, discovery=SEARCH).server) as client:
        cases: list[tuple[dict[str, Any], str]] = [
            ({}, "tool_id"),
            ({"tool_id": "compozy__tool_info", "input": []}, "input"),
            ({"tool_id": "compozy__tool_info", "extra": 1}, "extra"),
            ({"tool_id": "compozy__tool_call", "input": {}}, "tool_id"),
        ]
        for arguments, field in cases:
            error = tool_error(await raw_call(client, "compozy__tool_call", arguments))
            assert error["code"] == "tool_invalid_input", arguments
            assert error["tool_id"] == "compozy__tool_call"
            assert field in error["message"], (arguments, error["message"])


async def test_tool_call_goes_through_the_one_dispatch_path(app: App) -> None:
    seen: list[dict[str, Any]] = []

    async def hook(event: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(event)
        return None

    app.dispatcher.add_hook(hook)
    async with Client(ProxyServer(app, discovery=SEARCH).server) as client:
        sid = (await create_session(client))["id"]
        seen.clear()
        record(
            await via_tool_call(
                client, "compozy__session_status", {"session_id": sid, "result_view": "full"}
            )
        )
    assert [(e["event"], e["tool_id"]) for e in seen] == [
        ("tool.pre_call", "compozy__session_status"),
        ("tool.post_call", "compozy__session_status"),
    ]
    assert seen[1]["result_view"] == "full"


@pytest.mark.parametrize("mode", MODES)
async def test_pass_through_tools_are_found_and_called_the_same_way(app: App, mode: Mode) -> None:
    async with (
        serving(app, [extension()], discovery=SEARCH) as proxy,
        Client(proxy.server, mode=mode) as client,
    ):
        found = record(await client.call_tool("compozy__tool_search", {"query": "look up a note"}))
        hit = found["tools"][0]
        assert hit["id"] == "notes__lookup"
        assert hit["server"] == "notes"
        assert hit["input_schema"] == notes.LOOKUP_INPUT
        info = record(await client.call_tool("compozy__tool_info", {"tool_id": "notes__lookup"}))
        assert info["tool"]["descriptor"]["output_schema"] == notes.LOOKUP_OUTPUT
        arguments = {"note": "a", "result_view": "verbose"}
        assert same(
            await raw_call(client, "notes__lookup", arguments),
            await via_tool_call(client, "notes__lookup", arguments),
        )
        fail = await via_tool_call(client, "notes__fail", {})
        assert fail.is_error is True
        with pytest.raises(MCPError) as rejected:
            await via_tool_call(client, "notes__reject", {})
        assert rejected.value.error.code == notes.REJECT_CODE
