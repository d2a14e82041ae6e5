"""``notes``: an upstream MCP server for the tests, written on the MCP SDK's low-level
``Server`` and served on stdio (``python -m tests.upstream.servers.notes``), or in-process
(:func:`build`, as the ``compozy.tools`` extension of ``ext/``).

Its ``lookup`` tool declares its own input named ``result_view`` (with values that are not
compozy's) and its own ``outputSchema``: both must reach clients unchanged, and compozy's
selector must never look at them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import orjson
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ContentBlock,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

#: lookup's own selector: deliberately not compozy's "compact"/"full"
LOOKUP_VIEWS = ["brief", "verbose"]
LOOKUP_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": "string", "description": "The note's name."},
        "result_view": {"type": "string", "enum": LOOKUP_VIEWS, "default": "brief"},
    },
    "required": ["note"],
}
LOOKUP_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": "string"},
        "view": {"type": "string"},
        "text": {"type": "string"},
    },
    "required": ["note", "view"],
}
LOOKUP_ANNOTATIONS = ToolAnnotations(
    title="Look a note up", read_only_hint=True, idempotent_hint=True
)
REJECT_CODE = -32042


def _text(text: str) -> list[ContentBlock]:
    return [TextContent(text=text)]


def _plain(name: str, description: str) -> Tool:
    """A tool that takes no input."""
    return Tool(
        name=name, description=description, input_schema={"type": "object", "properties": {}}
    )


def build(name: str = "notes") -> Server[Any]:
    """A fresh server (its ``grow`` tool adds tools to this instance only)."""
    bus = InMemorySubscriptionBus()
    grown: list[Tool] = []

    def tools() -> list[Tool]:
        return [
            Tool(
                name="lookup",
                title="Look a note up",
                description="Read one note. Pass result_view 'verbose' for its whole text.",
                input_schema=LOOKUP_INPUT,
                output_schema=LOOKUP_OUTPUT,
                annotations=LOOKUP_ANNOTATIONS,
            ),
            _plain("progress", "Count to three, reporting progress at each step."),
            _plain("fail", "Fail as a tool (isError)."),
            _plain("reject", "Refuse with a JSON-RPC error."),
            Tool(
                name="bad_output",
                description="Return structured content that breaks its own outputSchema.",
                input_schema={"type": "object", "properties": {}},
                output_schema={"type": "object", "required": ["never"]},
            ),
            _plain("pid", "The server's process id."),
            Tool(
                name="sleep",
                description="Sleep for some seconds.",
                input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
            ),
            _plain("grow", "Add a tool and say the tool list changed."),
            *grown,
        ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        args = params.arguments or {}
        tool = params.name
        if tool == "lookup":
            view = args.get("result_view", "brief")
            record = {"note": args["note"], "view": view}
            if view == "verbose":
                record["text"] = f"the whole text of {args['note']}"
            return CallToolResult(
                content=_text(orjson.dumps(record).decode()), structured_content=record
            )
        if tool == "progress":
            for step in (1, 2, 3):
                await ctx.session.report_progress(step, 3, f"step {step} of 3")
            return CallToolResult(content=_text("counted to 3"))
        if tool == "fail":
            return CallToolResult(content=_text("it failed on purpose"), is_error=True)
        if tool == "reject":
            raise MCPError(code=REJECT_CODE, message="rejected on purpose", data={"why": "a test"})
        if tool == "bad_output":
            return CallToolResult(content=_text("{}"), structured_content={"other": 1})
        if tool == "pid":
            return CallToolResult(
                content=_text(str(os.getpid())), structured_content={"pid": os.getpid()}
            )
        if tool == "sleep":
            await anyio.sleep(float(args.get("seconds", 3600)))
            return CallToolResult(content=_text("slept"))
        if tool == "grow":
            grown.append(_plain(f"extra_{len(grown) + 1}", "A tool added at run time."))
            await ctx.session.send_tool_list_changed()  # the 2025-11-25 era
            await bus.publish(ToolsListChanged())  # the 2026-07-28 era
            return CallToolResult(content=_text(f"now {len(tools())} tools"))
        if any(t.name == tool for t in grown):
            return CallToolResult(content=_text(f"{tool} ran"))
        raise MCPError(code=-32602, message=f"Unknown tool: {tool}")

    return Server(
        name,
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


async def serve_stdio(name: str) -> None:
    from mcp.server.stdio import stdio_server

    server = build(name)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    anyio.run(serve_stdio, sys.argv[1] if len(sys.argv) > 1 else "notes")
