"""The servers ``call_overhead`` compares, and how to serve each one over stdio or HTTP.

- ``sdk``: the SDK's bare low-level ``Server`` with one trivial tool, ``echo``, answering a small
  dict as ``structuredContent`` plus its JSON text (no input validation, no output schema);
- ``proxy``: our proxy on a realistic world (:mod:`benchmarks.records`) with the same trivial
  tool registered as a native tool (``bench__echo``), next to ``compozy__session_status``;
- ``mcpserver``: the SDK's high-level ``MCPServer`` with ``echo`` as a ``@tool`` returning
  ``dict[str, Any]`` (so it advertises an output schema and the client validates results).

Given the world, ``sdk`` also has ``record_compact`` and ``record_full``: they answer the
compact (full) ``session_status`` record the proxy answers, as a constant, so what the SDK alone
spends to carry that record (the floor of the proxy's status rows) is measured on the same
server as its echo.

FastMCP lives in its own virtualenv; see :mod:`benchmarks.fastmcp_bench`.

    python -m benchmarks.servers {sdk,proxy,mcpserver} --transport {stdio,http} [--world DIR]

Over HTTP the server binds a free loopback port (:func:`compozy_mcp.net.bind_tcp`), prints
``PORT <n>`` and serves JSON responses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import orjson
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import MCPServer
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

from benchmarks.records import open_world_app
from compozy_mcp import net
from compozy_mcp.interpreter import freeze_start_up
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.proxy import transports
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.schemas import INTEGER, STRING, array, obj, tool_input
from compozy_mcp.store import SQLiteStore

ECHO_ARGS = {"text": "hello, compozy"}
ECHO_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
NO_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
KINDS = ("sdk", "proxy", "mcpserver")
WORLD_DB = "world.db"
WORLD_NOW = "now.txt"
#: the status records (structured content) the proxy answers for the world's chosen session
WORLD_RECORDS = "records.json"


def record_tool(view: str) -> str:
    """The SDK server's tool answering the ``view`` record as a constant."""
    return f"record_{view}"


def world_records(world: Path) -> dict[str, dict[str, Any]]:
    """The records of the world's chosen session by view, as ``call_overhead`` wrote them."""
    records: dict[str, dict[str, Any]] = orjson.loads((world / WORLD_RECORDS).read_bytes())
    return records


def echo_data(text: str) -> dict[str, Any]:
    return {"echo": text, "items": [1, 2, 3]}


# --- (a) the SDK's low-level Server -----------------------------------------------------------


def sdk_server(records: dict[str, dict[str, Any]] | None = None) -> Server[Any]:
    """Row (a); with ``records`` (by view), also a tool per view answering that record as a
    constant (:func:`record_tool`): what the SDK alone spends carrying it."""
    tools = [Tool(name="echo", description="Echo the text back.", input_schema=ECHO_INPUT_SCHEMA)]
    constants: dict[str, tuple[str, dict[str, Any]]] = {}  # a record and its JSON text, by tool
    for view, record in (records or {}).items():
        name = record_tool(view)
        tools.append(Tool(name=name, description=f"The {view} record.", input_schema=NO_INPUT))
        constants[name] = (orjson.dumps(record).decode(), record)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name != "echo":
            if params.name not in constants:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
            text, record = constants[params.name]
            return CallToolResult(content=[TextContent(text=text)], structured_content=record)
        data = echo_data(str((params.arguments or {}).get("text", "")))
        return CallToolResult(
            content=[TextContent(text=orjson.dumps(data).decode())], structured_content=data
        )

    return Server(
        "bench-sdk",
        version="0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


# --- (b)-(d) our proxy ----------------------------------------------------------------------


async def _echo_handler(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return echo_data(args["text"])


ECHO_TOOL = ToolDefinition(
    id="bench__echo",
    description="Echo the text back.",
    input_schema=tool_input({"text": STRING}),
    output_schema=obj({"echo": STRING, "items": array(INTEGER)}),
    handler=_echo_handler,
    risk=Risk.READ,
    toolsets=("bench",),
    preview=lambda record: str(record["echo"]),
    idempotent=True,
    answers_at_once=True,
)


@contextmanager
def proxy_on_world(world: Path) -> Iterator[ProxyServer]:
    """The proxy over a world that ``call_overhead`` built into ``world`` (a directory)."""
    now = datetime.fromisoformat((world / WORLD_NOW).read_text(encoding="utf-8").strip())
    store = SQLiteStore(world / WORLD_DB)
    with open_world_app(world / "home", store=store, now=now, extra_tools=[ECHO_TOOL]) as (
        app,
        _,
        _,
    ):
        yield ProxyServer(app)


# --- (e) the SDK's MCPServer ----------------------------------------------------------------


def mcpserver() -> MCPServer:
    server = MCPServer("bench-mcpserver")

    @server.tool()
    def echo(text: str) -> dict[str, Any]:
        """Echo the text back."""
        return echo_data(text)

    return server


# --- serving --------------------------------------------------------------------------------


async def serve_http(app: Any) -> None:
    sock = net.bind_tcp("127.0.0.1", 0)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await net.serve_sockets(app, [sock])


async def sdk_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(kind: str, transport: str, world: Path | None) -> None:
    if kind == "sdk":  # the SDK's own transports: the baseline
        low = sdk_server(world_records(world) if world is not None else None)
        if transport == "stdio":
            anyio.run(sdk_stdio, low)
        else:
            anyio.run(serve_http, low.streamable_http_app(json_response=True))
    elif kind == "mcpserver":
        high = mcpserver()
        if transport == "stdio":
            anyio.run(high.run_stdio_async)
        else:
            anyio.run(serve_http, high.streamable_http_app(json_response=True))
    else:
        if world is None:
            raise SystemExit("the proxy needs --world")
        with proxy_on_world(world) as proxy:
            freeze_start_up()  # as `compozy proxy` does before it serves
            if transport == "stdio":
                anyio.run(transports.serve_stdio, proxy.server)
            else:
                anyio.run(
                    serve_http,
                    transports.http_app(
                        proxy.server, proxy.app.settings, answers_at_once=proxy.answers_at_once
                    ),
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.servers", description=__doc__)
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--world", type=Path, help="directory call_overhead built the world in")
    args = parser.parse_args(argv)
    serve(args.kind, args.transport, args.world)
    return 0


if __name__ == "__main__":
    sys.exit(main())
