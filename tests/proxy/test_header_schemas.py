"""The input schemas the proxy lends the SDK for ``Mcp-Param-*`` header checks: only those
that declare a header (the SDK walks a lent schema on every Streamable HTTP call)."""

from __future__ import annotations

from compozy_mcp.assembly import App
from compozy_mcp.proxy.server import ProxyServer, declares_mcp_headers


def test_a_schema_declaring_a_header_anywhere_is_one_that_declares_headers() -> None:
    nested = {
        "type": "object",
        "properties": {
            "target": {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            }
        },
    }
    assert declares_mcp_headers(nested)
    assert not declares_mcp_headers({"type": "object", "properties": {"x": {"type": "string"}}})


def test_no_native_tool_lends_a_schema_for_header_checks(app: App) -> None:
    lookup = ProxyServer(app).server.get_tool_input_schema
    assert lookup is not None
    assert lookup("compozy__session_status") is None
    assert lookup("compozy__tool_call") is None
    assert lookup("no_such_tool") is None
