"""The SDK server every native-tool surface serves (the in-process proxy and the relay), and
how a tool error reaches an MCP client.

Nothing of the app is imported here: the relay (``compozy --socket D proxy``) serves a daemon's
tools without a store, a registry or dispatch of its own, and starts faster without them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from compozy_mcp import __version__
from compozy_mcp.errors import CompozyError
from compozy_mcp.proxy._notify import ToolsChanged
from compozy_mcp.proxy._spans import spans_when_traced
from compozy_mcp.proxy._tool_calls import ToolCalls, WireResult

SERVER_NAME = "compozy-mcp"
INSTRUCTIONS = (
    "Native compozy tools for managed agent sessions. Results are compact by default; pass "
    'result_view "full" for the complete record. compozy__tool_info has both contracts.'
)
CATALOG_TTL_MS = 3_600_000
#: with MCP servers the listing changes as they come and go; clients that do not listen for
#: ``tools/list_changed`` re-list this often
CHANGING_CATALOG_TTL_MS = 10_000
#: ``_meta`` key of a call's one-shot approval token (``compozy approvals mint``)
META_APPROVAL_TOKEN = "compozy.dev/approval_token"


def error_result(error: CompozyError) -> CallToolResult:
    """A tool error is a result with ``isError``; its text is the dispatch message (MCP is the
    model's surface: nothing is redacted, spec Errors)."""
    return CallToolResult(
        content=[TextContent(text=error.message)],
        structured_content={"error": error.payload(redact=False)},
        is_error=True,
    )


ListTools = Callable[
    [ServerRequestContext[Any], PaginatedRequestParams | None], Awaitable[ListToolsResult]
]
#: a ``tools/call`` handler, given the tool's name and arguments
CallTool = Callable[
    [ServerRequestContext[Any], str, dict[str, Any] | None],
    Awaitable[CallToolResult | InputRequiredResult | WireResult],
]
InputSchema = Callable[[str], Mapping[str, Any] | None]


class CatalogServer(Server[Any]):
    """The SDK's low-level server, saying in the 2025-11-25 handshake that its tool list can
    change (in the 2026-07-28 era, serving ``subscriptions/listen`` says it)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def native_server(
    list_tools: ListTools,
    call_tool: CallTool,
    input_schema: InputSchema,
    changes: ToolsChanged,
    *,
    catalog_ttl_ms: int = CATALOG_TTL_MS,
) -> Server[Any]:
    """The SDK server every native-tool surface serves (the proxy and the relay): the same name,
    instructions and catalog cache hint; input schemas by name, so that a Streamable HTTP call
    does not re-run the listing; ``tools/list_changed`` through ``changes``."""
    server = CatalogServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_subscriptions_listen=changes.listen,
        get_tool_input_schema=input_schema,
        cache_hints={"tools/list": CacheHint(ttl_ms=catalog_ttl_ms, scope="private")},
    )
    # registered by method: a handler may answer in wire form (:func:`call_result`), which
    # ``on_call_tool`` does not let it; plain calls skip the SDK's per-call model work
    # (:mod:`._tool_calls`), and its span when nothing traces (:mod:`._spans`)

    async def sdk_call(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult | WireResult:
        return await call_tool(ctx, params.name, params.arguments)

    server.add_request_handler("tools/call", CallToolRequestParams, sdk_call)
    server.middleware = [*map(spans_when_traced, server.middleware)]
    server.middleware.append(ToolCalls(call_tool, server.server_info_stamp))
    return server
