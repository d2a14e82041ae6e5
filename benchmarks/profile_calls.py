"""Profile in-process calls of one ``call_overhead`` row with pyinstrument.

    pip install pyinstrument   # not a project dependency
    python -m benchmarks.profile_calls --row b [--calls 3000] [--mode auto|legacy] [--dispatch]
        [--all] [--flat]

``--dispatch`` profiles ``Dispatcher.call`` alone (no MCP client or server), to separate our
code from the SDK's. Prints pyinstrument's call tree, and the mean time per call.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from benchmarks.call_overhead import STATUS, prepared
from benchmarks.records import DEFAULT_SEED
from benchmarks.servers import ECHO_ARGS, ECHO_TOOL, sdk_server

ROWS = ("a", "b", "c", "d")


async def profile(args: argparse.Namespace) -> None:
    try:
        pyinstrument = importlib.import_module("pyinstrument")
    except ImportError:
        raise SystemExit("profile_calls needs pyinstrument: pip install pyinstrument") from None
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as directory:
        async with prepared(Path(directory), args.seed, quick=False) as setup:
            tool, tool_input = {
                "a": ("echo", ECHO_ARGS),
                "b": (ECHO_TOOL.id, ECHO_ARGS),
                "c": (STATUS, {"session_id": setup.session_id}),
                "d": (STATUS, {"session_id": setup.session_id, "result_view": "full"}),
            }[args.row]
            call: Callable[[], Awaitable[Any]]
            if args.dispatch:
                if args.row == "a":
                    raise SystemExit("--dispatch profiles our dispatcher; row a has none")
                dispatcher = setup.proxy.app.dispatcher

                async def call() -> Any:
                    return await dispatcher.call(tool, tool_input)

                await _run(pyinstrument, call, args)
                return
            server = sdk_server() if args.row == "a" else setup.proxy.server
            async with Client(server, mode=args.mode) as client:

                async def call() -> Any:
                    return await client.call_tool(tool, tool_input)

                await _run(pyinstrument, call, args)


async def _run(
    pyinstrument: Any, call: Callable[[], Awaitable[Any]], args: argparse.Namespace
) -> None:
    for _ in range(200):  # warm-up: caches, compiled validators, the client's tool list
        await call()
    profiler = pyinstrument.Profiler(interval=0.0001, async_mode="disabled")
    started = time.perf_counter()
    profiler.start()
    for _ in range(args.calls):
        await call()
    profiler.stop()
    elapsed = time.perf_counter() - started
    print(profiler.output_text(unicode=False, color=False, show_all=args.all, flat=args.flat))
    print(f"{args.calls} calls, {elapsed / args.calls * 1e6:.1f} us/call (under the profiler)")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_calls", description=__doc__)
    parser.add_argument("--row", choices=ROWS, default="b")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--dispatch", action="store_true", help="Dispatcher.call only")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--all", action="store_true", help="show the SDK's frames too")
    parser.add_argument("--flat", action="store_true", help="functions by their own time")
    anyio.run(profile, parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
