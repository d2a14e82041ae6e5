"""Issue 16, items 1 and 2, in-process: upstream MCP servers (here connected in-process as
extensions, the same code path as stdio and HTTP past the transport) are served through the
proxy untouched, and one that fails never takes the proxy down.

The same requirements against real stdio and Streamable HTTP servers, killed and hung, are in
``test_real_servers.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from tests.proxy.support import (
    MODES,
    UNKNOWN_VIEW,
    Mode,
    create_session,
    record,
    tool_error,
)
from tests.upstream.servers import flaky, notes
from tests.upstream.support import FAST, FLAKY, extension, own_listing, raw_call, serving

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.upstream.config import Restart, Timeouts
from compozy_mcp.upstream.defined import defined
from compozy_mcp.upstream.status import SERVER_LIST_SCHEMA
from compozy_mcp.validation import compile_validator

pytestmark = pytest.mark.anyio
WAIT = 30.0
#: a directory holding an installed package's metadata: a compozy.tools entry point
EXT = Path(__file__).parent / "ext"


async def until(check: Callable[[], bool | Awaitable[bool]], timeout: float = WAIT) -> None:
    with anyio.fail_after(timeout):
        while True:
            outcome = check()
            if not isinstance(outcome, bool):
                outcome = await outcome
            if outcome:
                return
            await anyio.sleep(0.02)


def same(one: types.CallToolResult, other: types.CallToolResult) -> bool:
    fields = {"content", "structured_content", "is_error"}
    return one.model_dump(include=fields) == other.model_dump(include=fields)


async def names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize("mode", MODES)
async def test_upstream_tools_are_listed_as_server__tool_unchanged(app: App, mode: Mode) -> None:
    originals = {tool.name: tool for tool in await own_listing(notes.build())}
    async with serving(app, [extension()]) as proxy, Client(proxy.server, mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    proxied = {name: tool for name, tool in listed.items() if name.startswith("notes__")}
    assert set(proxied) == {f"notes__{name}" for name in originals}
    for name, original in originals.items():
        seen = proxied[f"notes__{name}"]
        # everything but the name, as the server declared it: input schema, outputSchema,
        # annotations, title
        assert seen.model_dump(exclude={"name"}) == original.model_dump(exclude={"name"})
    lookup = proxied["notes__lookup"]
    assert lookup.output_schema == notes.LOOKUP_OUTPUT
    assert lookup.input_schema["properties"]["result_view"]["enum"] == notes.LOOKUP_VIEWS
    assert lookup.annotations == notes.LOOKUP_ANNOTATIONS
    # native tools are still first, still without outputSchema
    assert all(t.output_schema is None for n, t in listed.items() if n.startswith("compozy__"))


@pytest.mark.parametrize("mode", MODES)
async def test_an_upstream_tools_own_result_view_passes_through_unchecked(
    app: App, mode: Mode
) -> None:
    server = notes.build()
    async with (
        serving(app, [extension()]) as proxy,
        Client(proxy.server, mode=mode) as client,
        Client(server, mode="legacy") as direct,
    ):
        for arguments in (
            {"note": "a", "result_view": "verbose"},  # the server's own value
            {"note": "a"},
            {"note": "a", "result_view": "full"},  # compozy's value: not ours to check here
            {"note": "a", "result_view": 42},  # not even a string: still the server's business
        ):
            through = await raw_call(client, "notes__lookup", arguments)
            sent = await raw_call(direct, "lookup", arguments)
            # the same result (the 2026-07-28 era adds its own _meta envelope)
            assert same(through, sent), arguments
            assert UNKNOWN_VIEW not in str(through)
        verbose = await client.call_tool("notes__lookup", {"note": "a", "result_view": "verbose"})
        assert verbose.structured_content == {
            "note": "a",
            "view": "verbose",
            "text": "the whole text of a",
        }


@pytest.mark.parametrize("mode", MODES)
async def test_results_and_errors_come_back_as_the_upstream_sent_them(app: App, mode: Mode) -> None:
    async with serving(app, [extension()]) as proxy, Client(proxy.server, mode=mode) as client:
        failed = await client.call_tool("notes__fail", {})
        assert failed.is_error is True
        assert failed.content == [types.TextContent(text="it failed on purpose")]
        assert failed.structured_content is None
        with pytest.raises(MCPError) as rejected:
            await client.call_tool("notes__reject", {})
        assert rejected.value.error.code == notes.REJECT_CODE
        assert rejected.value.error.message == "rejected on purpose"
        assert rejected.value.error.data == {"why": "a test"}
        # a result that breaks the tool's own outputSchema is not ours to judge
        wrong = await raw_call(client, "notes__bad_output")
        assert (wrong.is_error, wrong.structured_content) == (False, {"other": 1})
        # an unknown tool of a connected server: named as the caller named it
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("notes__nope", {})
        assert unknown.value.error.code == types.INVALID_PARAMS
        assert unknown.value.error.message == "Unknown tool: notes__nope"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_notifications_of_an_upstream_call_reach_the_client(
    app: App, mode: Mode
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with serving(app, [extension()]) as proxy, Client(proxy.server, mode=mode) as client:
        done = await client.call_tool("notes__progress", {}, progress_callback=progress)
    assert done.content == [types.TextContent(text="counted to 3")]
    assert seen == [(1.0, 3.0, "step 1 of 3"), (2.0, 3.0, "step 2 of 3"), (3.0, 3.0, "step 3 of 3")]


async def test_an_upstream_list_changed_reaches_handshake_era_clients(app: App) -> None:
    received: list[Any] = []

    async def handler(message: Any) -> None:
        received.append(message)

    async with (
        serving(app, [extension()]) as proxy,
        Client(proxy.server, mode="legacy", message_handler=handler, cache=None) as client,
    ):
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        assert "notes__extra_1" not in await names(client)
        await client.call_tool("notes__grow", {})
        await until(lambda: any(isinstance(m, types.ToolListChangedNotification) for m in received))
        assert "notes__extra_1" in await names(client)
        ran = await client.call_tool("notes__extra_1", {})
        assert ran.content == [types.TextContent(text="extra_1 ran")]


async def test_an_upstream_list_changed_reaches_2026_era_listeners(app: App) -> None:
    async with (
        serving(app, [extension()]) as proxy,
        Client(proxy.server, mode="auto", cache=None) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as events:
            await client.call_tool("notes__grow", {})
            with anyio.fail_after(WAIT):
                async for event in events:
                    assert type(event).__name__ == "ToolsListChanged"
                    break
        assert "notes__extra_1" in await names(client)


async def test_a_session_sees_and_calls_only_the_servers_its_policy_allows(app: App) -> None:
    servers = [extension(), extension("other")]
    async with Client(ProxyServer(app).server) as operator:
        parent = (await create_session(operator))["id"]
        spawned = record(
            await operator.call_tool(
                "compozy__session_spawn",
                {
                    "parent_session_id": parent,
                    "agent_name": "worker",
                    "ttl_seconds": 600,
                    "tools": ["compozy__session_*"],
                    "mcp_servers": ["notes"],
                },
            )
        )
    async with serving(app, servers, scope=CallScope(parent)) as root, Client(root.server) as c:
        listed = await names(c)
        assert {"notes__lookup", "other__lookup"} <= set(listed)  # a root policy: "*"
    child = CallScope(spawned["session_id"])
    async with serving(app, servers, scope=child) as bound, Client(bound.server) as client:
        listed = await names(client)
        assert "notes__lookup" in listed
        assert not any(name.startswith("other__") for name in listed)
        assert not any(name.startswith("compozy__tool_") for name in listed)
        record(await client.call_tool("notes__lookup", {"note": "a"}))
        denied = tool_error(await client.call_tool("other__lookup", {"note": "a"}))
        assert (denied["code"], denied["reason"]) == ("tool_denied", "permission_denied")
        assert 'MCP server "other"' in denied["message"]


async def test_a_server_that_fails_to_start_is_down_and_a_call_to_it_names_it(app: App) -> None:
    flaky.state.update(failures=1_000_000, attempts=0)
    slow_retry = Restart(initial_delay=30.0, max_delay=60.0)
    async with serving(app, [extension("flaky", FLAKY, restart=slow_retry)]) as proxy:
        [status] = proxy.upstreams.statuses() if proxy.upstreams else []
        assert status.state == "down"
        assert (
            status.last_error
            == "failed unexpectedly (RuntimeError; COMPOZY_DEBUG=1 logs the details)"
        )
        async with Client(proxy.server) as client:
            assert not any(name.startswith("flaky__") for name in await names(client))
            error = tool_error(await client.call_tool("flaky__lookup", {"note": "a"}))
            assert error["code"] == "mcp_server_unavailable"
            assert error["reason"] == "mcp_server_down"
            assert error["message"].startswith(
                'tool "flaky__lookup" failed: MCP server "flaky" is down (failed unexpectedly'
            )
            assert error["details"] == {"server": "flaky"}
            # the proxy serves on
            record(await client.call_tool("compozy__tool_info", {"tool_id": "compozy__tool_info"}))
    flaky.state.update(failures=0)


async def test_a_server_comes_back_after_a_restart_with_backoff(app: App) -> None:
    flaky.state.update(failures=3, attempts=0)
    received: list[Any] = []

    async def handler(message: Any) -> None:
        received.append(message)

    async with serving(app, [extension("flaky", FLAKY)]) as proxy:
        assert proxy.upstreams is not None
        async with Client(
            proxy.server, mode="legacy", message_handler=handler, cache=None
        ) as client:
            await names(client)  # the client is now one that hears of changes
            await until(
                lambda: (
                    proxy.upstreams is not None and proxy.upstreams.statuses()[0].state == "ready"
                )
            )
            [status] = proxy.upstreams.statuses()
            assert status.restarts == 3
            assert flaky.state["attempts"] == 4
            assert status.last_error is not None  # the last failure stays on record
            await until(
                lambda: any(isinstance(m, types.ToolListChangedNotification) for m in received)
            )
            assert "flaky__lookup" in await names(client)
            record(await client.call_tool("flaky__lookup", {"note": "a"}))


async def test_a_call_that_outlives_its_timeout_is_a_tool_error_naming_the_server(app: App) -> None:
    short = Timeouts(startup=FAST.startup, call=0.3, ping_interval=FAST.ping_interval)
    async with serving(app, [extension(timeouts=short)]) as proxy, Client(proxy.server) as client:
        error = tool_error(await client.call_tool("notes__sleep", {"seconds": 30}))
        assert (error["code"], error["reason"]) == ("mcp_server_unavailable", "mcp_server_timeout")
        assert error["message"] == (
            'tool "notes__sleep" failed: MCP server "notes" did not answer within 0.3 s; the '
            "call was cancelled"
        )
        # the server and the proxy both serve on
        record(await client.call_tool("notes__lookup", {"note": "a"}))
        record(await client.call_tool("compozy__tool_info", {"tool_id": "compozy__tool_info"}))


async def test_the_host_api_lists_each_servers_state_and_last_error(app: App) -> None:
    flaky.state.update(failures=1_000_000)
    slow_retry = Restart(initial_delay=30.0, max_delay=60.0)
    definitions = [extension(), extension("flaky", FLAKY, restart=slow_retry)]
    async with serving(app, definitions) as proxy:
        listing = await LocalHost(app, mcp_servers=proxy.upstreams).call(ops.LIST_MCP_SERVERS, {})
    flaky.state.update(failures=0)
    # what GET /api/mcp/servers promises
    compile_validator(SERVER_LIST_SCHEMA).validate({"servers": listing["servers"]})
    rows = {row["name"]: row for row in listing["servers"]}
    [notes_state] = rows["notes"]["connections"]
    assert (notes_state["state"], notes_state["tools"]) == ("ready", 8)
    [flaky_state] = rows["flaky"]["connections"]
    assert flaky_state["state"] == "down"
    assert flaky_state["last_error"].startswith("failed unexpectedly (RuntimeError")
    assert rows["notes"]["target"] == "tests.upstream.servers.notes:build"
    assert await LocalHost(app).call(ops.LIST_MCP_SERVERS, {}) == {"servers": []}


async def test_an_extension_of_the_compozy_tools_group_is_served_like_an_upstream_server(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXT))
    found = defined(app.settings.home, None)
    assert list(found) == ["notes_ext"]
    originals = {tool.name: tool for tool in await own_listing(notes.build())}
    async with serving(app, list(found.values())) as proxy, Client(proxy.server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for name, original in originals.items():
            seen = listed[f"notes_ext__{name}"]
            assert seen.model_dump(exclude={"name"}) == original.model_dump(exclude={"name"})
        verbose = await client.call_tool(
            "notes_ext__lookup", {"note": "e", "result_view": "verbose"}
        )
        assert verbose.structured_content == {
            "note": "e",
            "view": "verbose",
            "text": "the whole text of e",
        }


async def test_an_entry_point_that_is_not_an_mcp_server_is_down_with_why(app: App) -> None:
    definition = extension("odd", "tests.upstream.servers.notes:LOOKUP_VIEWS")
    async with serving(app, [definition]) as proxy:
        assert proxy.upstreams is not None
        [status] = proxy.upstreams.statuses()
    assert status.state == "down"
    assert status.last_error == (
        "entry point 'odd' (tests.upstream.servers.notes:LOOKUP_VIEWS) is not an MCP server: it "
        "must be an MCP SDK Server or MCPServer, or a function returning one"
    )


async def test_a_server_that_keeps_failing_to_start_announces_no_change(app: App) -> None:
    flaky.state.update(failures=1_000_000, attempts=0)
    received: list[Any] = []

    async def handler(message: Any) -> None:
        received.append(message)

    try:
        async with (
            serving(app, [extension("flaky", FLAKY)]) as proxy,
            Client(proxy.server, mode="legacy", message_handler=handler, cache=None) as client,
        ):
            await names(client)
            await until(lambda: flaky.state["attempts"] >= 4)  # a few restarts, each a failure
            await names(client)  # a round trip: anything announced has arrived
    finally:
        flaky.state.update(failures=0)
    assert not any(isinstance(m, types.ToolListChangedNotification) for m in received)
