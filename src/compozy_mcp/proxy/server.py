"""The proxy's MCP server: ``tools/list`` from the catalog, ``tools/call`` through dispatch."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.caching import CacheHint
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from compozy_mcp import __version__
from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, CallScope, scope_of
from compozy_mcp.dispatch import ToolResult
from compozy_mcp.errors import CompozyError, ToolBackendFailed, ToolNotFound
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.proxy.listing import mcp_tool
from compozy_mcp.proxy.paging import Pages

log = logging.getLogger(__name__)

SERVER_NAME = "compozy-mcp"
INSTRUCTIONS = (
    "Native compozy tools for managed agent sessions. Results are compact by default; pass "
    'result_view "full" for the complete record. compozy__tool_info has both contracts.'
)
CATALOG_TTL_MS = 3_600_000
#: ``_meta`` keys of truncated results
META_ARTIFACTS = "compozy.dev/artifacts"
META_READ_TOOL = "compozy.dev/read_tool"
#: ``_meta`` key of the title a tool.post_call hook gave a result
META_TITLE = "compozy.dev/title"


def call_result(result: ToolResult) -> CallToolResult:
    """``structuredContent`` is the record; the one text block is the same JSON, serialized."""
    meta: dict[str, Any] | None = None
    if result.truncated:
        meta = {
            META_ARTIFACTS: [ref.payload() for ref in result.artifacts],
            META_READ_TOOL: result.structured["read_tool"],
        }
    if result.title is not None:
        meta = {**(meta or {}), META_TITLE: result.title}
    return CallToolResult(
        content=[TextContent(text=result.structured_json.decode())],
        structured_content=result.structured,
        _meta=meta,
    )


def mcp_error(error: CompozyError) -> CallToolResult:
    """How an error reaches an MCP client, in one place: an unknown tool is a protocol error
    (JSON-RPC ``-32602``, as the MCP spec says); every other error is a tool result with
    ``isError`` (:func:`error_result`)."""
    if isinstance(error, ToolNotFound):
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {error.tool_id}")
    return error_result(error)


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
CallTool = Callable[[ServerRequestContext[Any], CallToolRequestParams], Awaitable[CallToolResult]]


def native_server(
    list_tools: ListTools, call_tool: CallTool, schemas: Mapping[str, Mapping[str, Any]]
) -> Server[Any]:
    """The SDK server every native-tool surface serves (the proxy and the relay): the same name,
    instructions and catalog cache hint; input schemas by name, so that a Streamable HTTP call
    does not re-run the listing."""
    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
        # The catalog is fixed for the life of the process (and per session scope).
        cache_hints={"tools/list": CacheHint(ttl_ms=CATALOG_TTL_MS, scope="private")},
    )


class ProxyServer:
    """One MCP server over one app, serving the catalog a caller's scope allows.

    The scope is ``scope`` for every call (``compozy proxy --session``), or with
    ``scope_per_request`` the one each HTTP request names in ``X-Compozy-Session`` (the
    daemon's ``/mcp``, which serves every session; none named is the operator). Each scope's
    listing is built once. ``page_size`` ``None`` serves the whole catalog in one page.
    """

    #: listings kept for this many scopes at most (a daemon may serve many sessions)
    MAX_LISTINGS = 256

    def __init__(
        self,
        app: App,
        *,
        scope: CallScope = OPERATOR,
        page_size: int | None = None,
        scope_per_request: bool = False,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.app = app
        self.scope = scope
        self.page_size = page_size
        self.scope_per_request = scope_per_request
        self._listings: dict[CallScope, Pages] = {}
        # A scope changes which tools are listed, never their schemas.
        visible = app.catalog.visible(OPERATOR if scope_per_request else scope)
        self._schemas: dict[str, Mapping[str, Any]] = {
            tool.name: tool.input_schema for tool in map(self.advertise, visible)
        }
        self.server = native_server(self._list_tools, self._call_tool, self._schemas)

    def advertise(self, tool: RegisteredTool) -> Tool:
        """How ``tools/list`` shows a tool."""
        return mcp_tool(tool)

    def listing(self, scope: CallScope) -> Pages:
        """The pages of the tools ``scope`` may see."""
        pages = self._listings.get(scope)
        if pages is None:
            visible = self.app.catalog.visible(scope)
            pages = Pages([self.advertise(tool) for tool in visible], self.page_size)
            if visible:  # a session not created yet sees nothing for now: not kept
                if len(self._listings) >= self.MAX_LISTINGS:
                    self._listings.pop(next(iter(self._listings)))
                self._listings[scope] = pages
        return pages

    def _scope(self, ctx: ServerRequestContext[Any]) -> CallScope:
        if not self.scope_per_request:
            return self.scope
        headers = getattr(ctx.request, "headers", None)
        return scope_of(headers.get(SESSION_HEADER) if headers is not None else None)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self.listing(self._scope(ctx)).page(params)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        name = params.name
        scope = self._scope(ctx)
        try:
            result = await self.app.dispatcher.call(name, params.arguments or {}, scope=scope)
        except CompozyError as error:
            return mcp_error(error)
        except Exception:  # never take the proxy down; the next call must work
            log.exception("tools/call %s failed", name)
            return error_result(ToolBackendFailed(name, f'tool "{name}" failed unexpectedly'))
        return call_result(result)
