"""FastMCP's side of ``call_overhead``. Runs inside the FastMCP virtualenv, never imports compozy.

    .bench/fastmcp/bin/python benchmarks/fastmcp_bench.py serve --transport {stdio,http}
    .bench/fastmcp/bin/python benchmarks/fastmcp_bench.py worker

``serve`` runs a FastMCP server with the trivial ``echo`` tool (``@tool`` returning
``dict[str, Any]``, as the SDK's ``MCPServer`` does); over HTTP it binds a free loopback port,
prints ``PORT <n>`` and answers with JSON responses. ``worker`` measures in-process calls with
FastMCP's own in-memory ``Client``: it reads one JSON command per line (``{"calls": N}``) and
answers one JSON line with the latency of each call, so that ``call_overhead`` can interleave
its sets with the other servers'.
"""

from __future__ import annotations

import argparse
import importlib
import json
import socket
import sys
import time
from typing import Any

import anyio

ECHO_ARGS = {"text": "hello, compozy"}


def build() -> Any:
    fastmcp = importlib.import_module("fastmcp")
    server = fastmcp.FastMCP("bench-fastmcp")

    def echo(text: str) -> dict[str, Any]:
        """Echo the text back."""
        return {"echo": text, "items": [1, 2, 3]}

    server.tool(echo)  # what the @server.tool decorator does
    return server


async def serve_http(server: Any) -> None:
    uvicorn = importlib.import_module("uvicorn")
    # IPPROTO_TCP, as uvicorn binds host and port (FastMCP's own run_http_async), so that
    # asyncio turns Nagle's algorithm off on each connection
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.http_app(path="/mcp", json_response=True, transport="http")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    await uvicorn.Server(config).serve(sockets=[sock])


async def worker() -> None:
    fastmcp = importlib.import_module("fastmcp")
    server = build()
    async with fastmcp.Client(server) as client:
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                return
            calls = int(json.loads(line)["calls"])
            latencies = []
            start = time.perf_counter_ns()
            for _ in range(calls):
                began = time.perf_counter_ns()
                result = await client.call_tool("echo", ECHO_ARGS)
                latencies.append(time.perf_counter_ns() - began)
            elapsed = time.perf_counter_ns() - start
            if result.structured_content != {"echo": ECHO_ARGS["text"], "items": [1, 2, 3]}:
                raise RuntimeError(f"unexpected echo result: {result!r}")
            answer = {"latencies_ns": latencies, "elapsed_ns": elapsed}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve")
    serve_cmd.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    commands.add_parser("worker")
    args = parser.parse_args()
    if args.command == "worker":
        anyio.run(worker)
    elif args.transport == "stdio":
        build().run(transport="stdio", show_banner=False)
    else:
        anyio.run(serve_http, build())
    return 0


if __name__ == "__main__":
    sys.exit(main())
