"""The input schemas the proxy lends the SDK for ``Mcp-Param-*`` header checks: only those
that declare a header (the SDK walks a lent schema on every Streamable HTTP call)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client import Client
from tests.proxy.support import served_over_http

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.proxy.server import ProxyServer, declares_mcp_headers
from compozy_mcp.schemas import STRING, obj
from compozy_mcp.store import SQLiteStore

ROUTED_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
    "additionalProperties": False,
}


async def _where(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"region": args["region"]}


ROUTED = ToolDefinition(
    id="test__where",
    description="Answer the region it was routed to.",
    input_schema=ROUTED_INPUT,
    output_schema=obj({"region": STRING}),
    handler=_where,
    risk=Risk.READ,
    toolsets=("test",),
    preview=lambda record: str(record["region"]),
    idempotent=True,
)


@pytest.fixture
def routed_app(settings: Settings, clock: FixedClock) -> Iterator[App]:
    with open_app(settings, store=SQLiteStore.memory(), clock=clock, extra_tools=[ROUTED]) as app:
        yield app


def test_a_schema_declaring_a_header_anywhere_is_one_that_declares_headers() -> None:
    nested = {
        "type": "object",
        "properties": {"target": {"type": "object", "properties": ROUTED_INPUT["properties"]}},
    }
    assert declares_mcp_headers(nested)
    assert not declares_mcp_headers({"type": "object", "properties": {"x": {"type": "string"}}})


def test_a_tool_declaring_a_header_lends_its_schema_and_others_lend_none(routed_app: App) -> None:
    lookup = ProxyServer(routed_app).server.get_tool_input_schema
    assert lookup is not None
    assert lookup("test__where") == ROUTED_INPUT
    assert lookup("compozy__session_status") is None
    assert lookup("compozy__tool_call") is None


@pytest.mark.anyio
async def test_a_call_with_its_header_goes_through_over_http(routed_app: App) -> None:
    async with (
        served_over_http(ProxyServer(routed_app)) as url,
        Client(url, mode="auto", cache=None) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        await client.list_tools()  # the client learns which argument rides in a header
        result = await client.call_tool("test__where", {"region": "eu-west"})
        assert not result.is_error
        assert result.structured_content == {"region": "eu-west"}
    await routed_app.shutdown()
