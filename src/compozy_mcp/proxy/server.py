"""The proxy's MCP server: ``tools/list`` from the catalog, ``tools/call`` through dispatch."""

from __future__ import annotations

import logging
from collections.abc import Mapping
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
from compozy_mcp.app import App
from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.dispatch import ToolResult
from compozy_mcp.errors import ToolBackendFailed, ToolError, ToolNotFound
from compozy_mcp.proxy.listing import mcp_tool

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


def call_result(result: ToolResult) -> CallToolResult:
    """``structuredContent`` is the record; the one text block is the same JSON, serialized."""
    meta: dict[str, Any] | None = None
    if result.truncated:
        meta = {
            META_ARTIFACTS: [ref.payload() for ref in result.artifacts],
            META_READ_TOOL: result.structured["read_tool"],
        }
    return CallToolResult(
        content=[TextContent(text=result.structured_json.decode())],
        structured_content=result.structured,
        _meta=meta,
    )


def error_result(error: ToolError) -> CallToolResult:
    """A tool error is a result with ``isError``; its text is the dispatch message."""
    return CallToolResult(
        content=[TextContent(text=error.message)],
        structured_content={"error": error.payload(redact=False)},
        is_error=True,
    )


class ProxyServer:
    """One MCP server over one app, serving the catalog a caller's scope allows.

    ``page_size`` ``None`` serves the whole catalog in one page: SDK clients re-list before
    calling a tool they have not seen, and only read the first page to do it.
    """

    def __init__(
        self, app: App, *, scope: CallScope = OPERATOR, page_size: int | None = None
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.app = app
        self.scope = scope
        self.page_size = page_size
        visible = app.catalog.visible(scope)
        self.tools: list[Tool] = [mcp_tool(tool) for tool in visible]
        self._schemas: dict[str, Mapping[str, Any]] = {t.id: t.input_schema for t in visible}
        self._pages = self._paginate()
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            get_tool_input_schema=self._schemas.get,
            # The catalog is fixed for the life of the process (and per session scope).
            cache_hints={"tools/list": CacheHint(ttl_ms=CATALOG_TTL_MS, scope="private")},
        )

    def _paginate(self) -> dict[str, ListToolsResult]:
        size = self.page_size or max(1, len(self.tools))
        starts = list(range(0, max(1, len(self.tools)), size))
        pages: dict[str, ListToolsResult] = {}
        for index, start in enumerate(starts):
            cursor = "" if index == 0 else str(start)
            following = str(starts[index + 1]) if index + 1 < len(starts) else None
            pages[cursor] = ListToolsResult(
                tools=self.tools[start : start + size], next_cursor=following
            )
        return pages

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        cursor = params.cursor if params is not None and params.cursor is not None else ""
        page = self._pages.get(cursor)
        if page is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
        return page

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        name = params.name
        try:
            result = await self.app.dispatcher.call(name, params.arguments or {}, scope=self.scope)
        except ToolNotFound:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}") from None
        except ToolError as error:
            return error_result(error)
        except Exception as exc:  # never take the proxy down; the next call must work
            log.exception("tools/call %s failed", name)
            return error_result(ToolBackendFailed(name, f'tool "{name}" failed: {exc}'))
        return call_result(result)
