"""``tools/list`` through the proxy (spec, "Managed-session MCP clients"): no ``outputSchema``,
``result_view`` exactly where a tool has views, risk annotations, a stable order, pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from mcp.client import Client
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, ListToolsResult, PaginatedRequestParams, Tool
from tests.proxy.shared import McpClient
from tests.proxy.support import PROTOCOL, Mode, Proxy, create_session, record, served_over_http

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.native import build_registry
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.proxy.server import ProxyServer, declares_mcp_headers
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio

REGISTRY = build_registry()
NATIVE = [tool.id for tool in REGISTRY]
SELECTOR = {"type": "string", "enum": ["compact", "full"]}


def expected_hints(risk: Risk, idempotent: bool) -> dict[str, bool]:
    """What each risk class promises a client. The hints with unsafe MCP defaults
    (``destructiveHint`` and ``openWorldHint`` default to true) are always explicit;
    ``idempotentHint`` only where it means something, on tools that are not read-only."""
    hints = {
        "readOnlyHint": risk is Risk.READ,
        "destructiveHint": risk is Risk.DESTRUCTIVE,
        "idempotentHint": idempotent,
        "openWorldHint": risk is Risk.OPEN_WORLD,
    }
    if risk is Risk.READ:
        del hints["idempotentHint"]
    return hints


def hints(tool: Tool) -> dict[str, Any]:
    assert tool.annotations is not None, tool.name
    dumped: dict[str, Any] = tool.annotations.model_dump(by_alias=True, exclude_none=True)
    return dumped


async def list_all(client: McpClient) -> list[ListToolsResult]:
    pages = [await client.list_tools()]
    while pages[-1].next_cursor is not None:
        assert len(pages) <= len(NATIVE), "the cursors never end"
        pages.append(await client.list_tools(cursor=pages[-1].next_cursor))
    return pages


@dataclass(frozen=True, slots=True)
class Listing:
    protocol_version: str
    page: ListToolsResult
    again: ListToolsResult

    @property
    def by_name(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.page.tools}


#: a subprocess proxy's listing, fetched once per transport and mode (a stdio client is a
#: process start); the in-process proxy is listed afresh for each test
_LISTINGS: dict[tuple[str, str], Listing] = {}


@pytest.fixture
async def listing(proxy: Proxy, mode: Mode) -> Listing:
    key = (proxy.kind, mode)
    if proxy.kind == "inproc" or key not in _LISTINGS:
        async with proxy.client(mode) as client:
            # listed twice on one connection: the order must not change
            fetched = Listing(
                client.protocol_version, await client.list_tools(), await client.list_tools()
            )
        if proxy.kind == "inproc":
            return fetched
        _LISTINGS[key] = fetched
    return _LISTINGS[key]


async def test_tools_list_advertises_no_output_schema_in_either_era(
    listing: Listing, mode: Mode
) -> None:
    assert listing.protocol_version == PROTOCOL[mode]
    page, again = listing.page, listing.again
    # the default is one page with everything: each native tool once, in registry order
    assert page.next_cursor is None
    assert [tool.name for tool in page.tools] == NATIVE
    assert len(set(NATIVE)) == len(NATIVE)
    assert again.tools == page.tools
    for tool in page.tools:
        assert tool.output_schema is None, tool.name
        assert "outputSchema" not in tool.model_dump(by_alias=True, exclude_none=True)


async def test_result_view_is_in_the_input_schema_of_exactly_the_tools_with_views(
    listing: Listing,
) -> None:
    listed = listing.by_name
    with_views = [tool for tool in REGISTRY if tool.has_views]
    assert "compozy__session_status" in {t.id for t in with_views}
    assert "compozy__skill_view" not in {t.id for t in with_views}
    for native in REGISTRY:
        schema = listed[native.id].input_schema
        assert schema == native.input_schema, native.id
        assert schema["type"] == "object"
        selector = schema.get("properties", {}).get("result_view")
        if native.has_views:
            assert selector is not None, native.id
            assert {k: selector[k] for k in SELECTOR} == SELECTOR, native.id
        else:
            assert selector is None, native.id


async def test_annotations_are_derived_from_the_risk_class(listing: Listing) -> None:
    listed = listing.by_name
    risks = {tool.risk for tool in REGISTRY}
    assert {Risk.READ, Risk.MUTATING, Risk.DESTRUCTIVE} <= risks
    for native in REGISTRY:
        assert hints(listed[native.id]) == expected_hints(
            native.risk, native.definition.idempotent
        ), native.id


async def _noop(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {}


def _tool(name: str, risk: Risk, *, idempotent: bool) -> ToolDefinition:
    return ToolDefinition(
        id=f"test__{name}",
        description=f"A {risk.value} tool.",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object"},
        handler=_noop,
        risk=risk,
        toolsets=("test",),
        idempotent=idempotent,
    )


RISKY = [
    _tool("read", Risk.READ, idempotent=True),
    _tool("read_once", Risk.READ, idempotent=False),
    _tool("write", Risk.MUTATING, idempotent=False),
    _tool("put", Risk.MUTATING, idempotent=True),
    _tool("delete", Risk.DESTRUCTIVE, idempotent=True),
    _tool("fetch", Risk.OPEN_WORLD, idempotent=False),
]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_risk_class_maps_to_its_own_annotations(
    settings: Settings, clock: FixedClock, mode: Mode
) -> None:
    with open_app(settings, store=SQLiteStore.memory(), clock=clock, extra_tools=RISKY) as app:
        async with Client(ProxyServer(app).server, mode=mode, cache=None) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    for defn in RISKY:
        assert hints(listed[defn.id]) == expected_hints(defn.risk, defn.idempotent), defn.id
    assert hints(listed["test__fetch"])["openWorldHint"] is True
    assert hints(listed["test__read"])["destructiveHint"] is False


# --- pages --------------------------------------------------------------------------------


async def test_cursors_walk_the_whole_catalog_three_tools_at_a_time(
    proxy: Proxy, mode: Mode
) -> None:
    async with proxy.client(mode, page_size=3) as client:
        pages = await list_all(client)
        first_again = await client.list_tools()
        await assert_invalid_cursors(client)
    assert [len(page.tools) for page in pages[:-1]] == [3] * (len(pages) - 1)
    assert 1 <= len(pages[-1].tools) <= 3
    assert len(pages) == -(-len(NATIVE) // 3)
    assert [tool.name for page in pages for tool in page.tools] == NATIVE
    assert first_again == pages[0]


async def assert_invalid_cursors(client: McpClient) -> None:
    for cursor in ["not-a-cursor", "1", "-3", "0", str(len(NATIVE) + 3)]:
        with pytest.raises(MCPError) as caught:
            await client.list_tools(cursor=cursor)
        assert caught.value.error.code == INVALID_PARAMS, cursor
    # and the connection still serves
    assert (await client.list_tools()).tools


async def test_an_invalid_cursor_is_a_json_rpc_invalid_params_error(
    proxy: Proxy, mode: Mode
) -> None:
    async with proxy.client(mode) as client:
        await assert_invalid_cursors(client)


def test_page_size_must_be_positive(app: App) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ProxyServer(app, page_size=0)


# --- input schemas without listing --------------------------------------------------------


def test_the_server_looks_up_input_schemas_without_the_list_handler(app: App) -> None:
    # a schema is lent only when it declares an Mcp-Param header (no native tool does): the
    # SDK has nothing to check without one, and walks a lent schema on every HTTP call
    server = ProxyServer(app).server
    lookup = server.get_tool_input_schema
    assert lookup is not None
    for native in REGISTRY:
        lent = native.input_schema if declares_mcp_headers(native.input_schema) else None
        assert lookup(native.id) == lent
    assert lookup("compozy__nope") is None


class CountingProxy(ProxyServer):
    """A proxy server that counts how often its ``tools/list`` handler runs."""

    lists = 0

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.lists += 1
        return await super()._list_tools(ctx, params)


async def test_http_calls_of_the_2026_era_do_not_run_the_list_handler(app: App) -> None:
    counting = CountingProxy(app)
    async with served_over_http(counting) as url, Client(url, mode="auto", cache=None) as client:
        assert client.protocol_version == "2026-07-28"
        await client.list_tools()
        assert counting.lists == 1
        sid = (await create_session(client))["id"]
        for view in ["compact", "full", "compact"]:
            record(
                await client.call_tool(
                    "compozy__session_status", {"session_id": sid, "result_view": view}
                )
            )
        assert counting.lists == 1


async def test_every_tool_on_the_wire_has_a_title_and_described_inputs(listing: Listing) -> None:
    """Issue 17, item 5, as a client receives it (each transport and protocol era)."""
    from tests.native.test_model_facing import undescribed

    for tool in listing.page.tools:
        assert tool.title, tool.name
        assert list(undescribed(tool.input_schema)) == [], tool.name
