"""What streaming over HTTP costs a call that streams nothing (issue 30).

The proxy's HTTP app serves in the SDK's SSE mode, with compozy's middleware that answers in
JSON when nothing was streamed (``compozy_mcp.proxy._streaming``). Before, it served in the SDK's
JSON mode, which cannot stream at all. Both serve the same ``ProxyServer`` here, each on a free
loopback port (uvicorn, in this process), and an SDK client makes sequential
``compozy__session_status`` calls on each, in both protocol eras, the variants interleaved set
by set so that a change of load falls on both.

    python -m benchmarks.http_streaming [--json] [--quick] [--calls N] [--sets N]
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.client import Client
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from starlette.applications import Starlette
from starlette.routing import Route

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table
from compozy_mcp import net
from compozy_mcp.assembly import open_app
from compozy_mcp.config import Settings
from compozy_mcp.hostapi.wire import MCP_PATH
from compozy_mcp.proxy import transports
from compozy_mcp.proxy.server import ProxyServer

VARIANTS = ("json", "streaming")
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
TOOL = "compozy__session_status"


def json_only_app(proxy: ProxyServer) -> Starlette:
    """The app as it was: the SDK's JSON response mode (no stream, ever)."""
    manager = StreamableHTTPSessionManager(app=proxy.server, json_response=True)
    return Starlette(
        routes=[Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager))],
        lifespan=lambda _: manager.run(),
    )


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    sock = net.bind_tcp("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}"
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    )
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, [sock])
            try:
                yield url
            finally:
                server.should_exit = True
    finally:
        sock.close()


async def _era_rows(
    urls: dict[str, str], era: str, mode: str, calls: int, sets: int, warmup: int
) -> list[dict[str, Any]]:
    """Both variants in one protocol era, interleaved set by set."""
    async with contextlib.AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(Client(url, mode=mode, cache=None))
            for name, url in urls.items()
        }
        made = await clients["json"].call_tool("compozy__session_create", {"agent_name": "b"})
        assert made.structured_content is not None
        sid = made.structured_content["session"]["id"]
        rates: dict[str, list[float]] = {name: [] for name in VARIANTS}
        latencies: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for client in clients.values():
            for _ in range(warmup):
                await client.call_tool(TOOL, {"session_id": sid})
        for round_ in range(sets):
            for name in VARIANTS if round_ % 2 == 0 else tuple(reversed(VARIANTS)):
                started = time.perf_counter()
                for _ in range(calls):
                    begun = time.perf_counter()
                    await clients[name].call_tool(TOOL, {"session_id": sid})
                    latencies[name].append((time.perf_counter() - begun) * 1e6)
                rates[name].append(calls / (time.perf_counter() - started))
    return [
        {
            "era": era,
            "variant": name,
            "calls_per_s": round(median(rates[name]), 1),
            "p50_us": round(percentile(latencies[name], 0.5), 1),
            "p95_us": round(percentile(latencies[name], 0.95), 1),
            "ratio_to_json": round(median(rates[name]) / median(rates["json"]), 3),
        }
        for name in VARIANTS
    ]


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    calls, sets, warmup = (20, 2, 5) if args.quick else (args.calls, args.sets, 50)
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="compozy-bench-") as root,
        open_app(Settings(home=Path(root))) as app,
    ):
        proxy = ProxyServer(app)
        apps = {
            "json": json_only_app(proxy),
            "streaming": transports.http_app(proxy.server, app.settings),
        }
        async with contextlib.AsyncExitStack() as stack:
            urls = {name: await stack.enter_async_context(served(a)) for name, a in apps.items()}
            for era, mode in ERAS.items():
                rows += await _era_rows(urls, era, mode, calls, sets, warmup)
        await app.shutdown()
    return {"calls": calls, "sets": sets, "rows": rows, "machine": machine()}


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.http_streaming", description=__doc__
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="a few calls per set, two sets")
    parser.add_argument("--calls", type=int, default=200, help="calls per set (default 200)")
    parser.add_argument("--sets", type=int, default=6, help="sets per variant (default 6)")
    args = parser.parse_args()
    result = anyio.run(measure, args)
    if args.json:
        emit_json(result)
        return
    print(
        f"HTTP answers: JSON mode (before) and SSE mode with JSON when nothing streams (now); "
        f"{result['sets']} sets of {result['calls']} sequential {TOOL} calls each"
    )
    headers = ["era", "variant", "calls/s", "p50 us", "p95 us", "ratio to json"]
    print(
        table(
            headers,
            [
                [
                    r["era"],
                    r["variant"],
                    r["calls_per_s"],
                    r["p50_us"],
                    r["p95_us"],
                    r["ratio_to_json"],
                ]
                for r in result["rows"]
            ],
        )
    )
    print(machine_line(result["machine"]))


if __name__ == "__main__":
    main()
