"""``asking``: an upstream MCP server that asks its client things, for the tests of issue 30
(item 2): what client capabilities compozy declares to it, and how its questions (sampling,
elicitation, roots) are answered. On the MCP SDK's low-level ``Server``; served on stdio
(``python -m tests.upstream.servers.asking``) or in-process (:func:`build`)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.shared.exceptions import MCPError

TOOLS = {
    "declared": "The client capabilities compozy declared to this server.",
    "ask_name": "Ask the person for a name (form elicitation); greet them.",
    "ask_link": "Ask the person to visit a page (URL elicitation).",
    "sample": "Ask the client's model to say hello (sampling).",
    "roots": "The roots the client gives this server.",
    "progress": "Count to four, reporting progress at each step.",
}
NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name"}},
    "required": ["name"],
}


def _result(record: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=orjson.dumps(record).decode())],
        structured_content=record,
    )


def build() -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    description=description,
                    input_schema={"type": "object", "properties": {}},
                )
                for name, description in TOOLS.items()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = ctx.session
        related = ctx.request_id
        if params.name == "declared":
            caps = session.client_capabilities or types.ClientCapabilities()
            return _result(
                {
                    "sampling": caps.sampling is not None,
                    "elicitation": caps.elicitation is not None,
                    "roots": caps.roots is not None,
                }
            )
        if params.name == "ask_name":
            answer = await session.elicit_form("What is your name?", NAME_SCHEMA, related)
            name = (answer.content or {}).get("name")
            return _result({"action": answer.action, "greeting": f"hello {name}"})
        if params.name == "ask_link":
            answer = await session.elicit_url(
                "Please sign in", "https://example.test/sign-in", "elicit-1", related
            )
            return _result({"action": answer.action})
        if params.name == "sample":
            # the request itself: the SDK's helper warns that sampling leaves MCP 2026-07-28
            request = types.CreateMessageRequest(
                params=types.CreateMessageRequestParams(
                    messages=[
                        types.SamplingMessage(role="user", content=types.TextContent(text="hello?"))
                    ],
                    max_tokens=20,
                )
            )
            made = await session.send_request(
                request, types.CreateMessageResult, metadata=_related(related)
            )
            text = made.content.text if isinstance(made.content, types.TextContent) else ""
            return _result({"model": made.model, "said": text})
        if params.name == "roots":
            listed = await session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                metadata=_related(related),
            )
            return _result({"roots": [str(root.uri) for root in listed.roots]})
        if params.name == "progress":
            for step in (1, 2, 3, 4):
                await session.report_progress(step, 4, f"step {step} of 4")
            return _result({"counted": 4})
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")

    return Server("asking", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def _related(request_id: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=request_id)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    options = server.create_initialization_options(NotificationOptions())
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    anyio.run(serve_stdio)
