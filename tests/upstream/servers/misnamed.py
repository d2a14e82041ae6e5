"""``misnamed``: an in-process upstream server for the tests whose listing holds tool names
clients cannot take (issue 22: ``../../x`` and a name of 310 characters), beside a good one."""

from __future__ import annotations

from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

BAD_NAMES = ["../../x", "a" * 310]
GOOD = "fine"


def build() -> Server[Any]:
    def tool(name: str) -> Tool:
        return Tool(name=name, description="A tool.", input_schema={"type": "object"})

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[tool(name) for name in [*BAD_NAMES, GOOD]])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        return CallToolResult(content=[TextContent(text=f"called {params.name}")])

    return Server("misnamed", on_list_tools=list_tools, on_call_tool=call_tool)
