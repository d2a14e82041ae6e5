"""``docs``: an upstream MCP server for the tests, written with the MCP SDK's ``MCPServer`` and
served on Streamable HTTP (SSE responses, so that progress streams)::

    python -m tests.upstream.servers.docs [--port N]

It prints ``docs serving at http://127.0.0.1:PORT/mcp`` once it listens; ``--port`` lets a test
start it again at the same address.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from compozy_mcp import net

server = MCPServer("docs", version="2.0.0")


@server.tool(
    description="Search the documentation for a phrase; returns the matching page titles.",
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
def search_docs(phrase: str, limit: int = 3) -> dict[str, list[str]]:
    return {"pages": [f"{phrase} page {n}" for n in range(1, limit + 1)]}


@server.tool(description="Build the documentation, reporting progress.")
async def build_docs(ctx: Context, steps: int = 2) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"built {step} of {steps}")
    return "built"


@server.tool(description="The server's process id.")
def docs_pid() -> dict[str, int]:
    return {"pid": os.getpid()}


grown: list[str] = []


@server.tool(description="Add a tool and say the tool list changed.")
async def grow_docs(ctx: Context) -> str:
    name = f"docs_extra_{len(grown) + 1}"
    grown.append(name)
    server.add_tool(lambda: "extra ran", name=name, description="A tool added at run time.")
    await ctx.request_context.session.send_tool_list_changed()  # the 2025-11-25 era
    await ctx.notify_tools_changed()  # the 2026-07-28 era
    return name


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    sock = net.bind_tcp("127.0.0.1", args.port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"docs serving at {url}", file=sys.stderr, flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main(sys.argv[1:])
