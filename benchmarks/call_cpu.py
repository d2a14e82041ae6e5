"""CPU time per call of the status path, layer by layer, and the SDK's own floor.

On a machine others load, wall time measures them as much as us; the CPU this process spends
per call moves much less. Rows, in process (``Client(server)``, 2026-07-28 direct dispatch):

- ``sessions.status``: the session service alone; ``dispatch ...``: ``Dispatcher.call``;
- ``mcp (a)``-``(d)``: the rows of :mod:`benchmarks.call_overhead`;
- ``sdk constant ...``: the SDK's bare ``Server`` answering the compact (full) record of (c)
  ((d)) as a constant: what the SDK alone spends to carry that record, the floor of (c) and (d).

Each row runs ``--calls`` calls per set, ``--sets`` sets interleaved; the minimum and the
median over sets are printed, in µs of CPU (``time.process_time``) per call.

    python -m benchmarks.call_cpu [--calls 300] [--sets 7] [--json]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from benchmarks.call_overhead import STATUS, prepared
from benchmarks.common import emit_json, machine, machine_line, median, table
from benchmarks.records import DEFAULT_SEED
from benchmarks.servers import ECHO_ARGS, ECHO_TOOL, record_tool, sdk_server
from compozy_mcp.calls import OPERATOR, CallInfo

Call = Callable[[], Awaitable[Any]]


async def cpu_per_call(call: Call, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        await call()
    return (time.process_time() - started) / calls * 1e6


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as directory:
        async with prepared(Path(directory), args.seed, quick=args.quick) as setup:
            app = setup.proxy.app
            dispatcher, sessions = app.dispatcher, app.sessions
            info = CallInfo(STATUS, OPERATOR)
            compact = {"session_id": setup.session_id}
            full = {**compact, "result_view": "full"}
            records = {
                "compact": (await dispatcher.call(STATUS, compact)).structured,
                "full": (await dispatcher.call(STATUS, full)).structured,
            }
            compact_tool, full_tool = record_tool("compact"), record_tool("full")
            async with AsyncExitStack() as stack:

                async def client(server: Any) -> Client:
                    opened: Client = await stack.enter_async_context(Client(server))
                    return opened

                sdk, proxy = await client(sdk_server()), await client(setup.proxy.server)
                floor = await client(sdk_server(records))
                rows: dict[str, Call] = {
                    "sessions.status": lambda: sessions.status(info, setup.session_id),
                    "dispatch, echo": lambda: dispatcher.call(ECHO_TOOL.id, ECHO_ARGS),
                    "dispatch, status compact": lambda: dispatcher.call(STATUS, compact),
                    "dispatch, status full": lambda: dispatcher.call(STATUS, full),
                    "mcp (a) SDK echo": lambda: sdk.call_tool("echo", ECHO_ARGS),
                    "mcp (b) proxy echo": lambda: proxy.call_tool(ECHO_TOOL.id, ECHO_ARGS),
                    "mcp (c) status compact": lambda: proxy.call_tool(STATUS, compact),
                    "mcp (d) status full": lambda: proxy.call_tool(STATUS, full),
                    "sdk constant, compact record": lambda: floor.call_tool(compact_tool, {}),
                    "sdk constant, full record": lambda: floor.call_tool(full_tool, {}),
                }
                for call in rows.values():  # warm-up: caches, compiled validators
                    await cpu_per_call(call, min(args.calls, 200))
                samples: dict[str, list[float]] = {name: [] for name in rows}
                for index in range(args.sets):
                    names = list(rows)
                    shift = index % len(names)
                    for name in names[shift:] + names[:shift]:
                        samples[name].append(await cpu_per_call(rows[name], args.calls))
    return {
        "benchmark": "call_cpu",
        "quick": args.quick,
        "calls_per_set": args.calls,
        "sets": args.sets,
        "rows": [
            {"row": name, "cpu_us_min": round(min(v), 1), "cpu_us_median": round(median(v), 1)}
            for name, v in samples.items()
        ],
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"CPU per call, in process: {result['sets']} sets of {result['calls_per_set']} calls "
            "per row, interleaved; µs of CPU (time.process_time)",
            table(
                ["row", "min us", "median us"],
                [[r["row"], r["cpu_us_min"], r["cpu_us_median"]] for r in result["rows"]],
            ),
            "",
            machine_line(result["machine"]),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.call_cpu", description=__doc__)
    parser.add_argument("--calls", type=int, default=300, help="calls per set")
    parser.add_argument("--sets", type=int, default=7)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="world seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="20 calls per set, two sets")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.sets = 20, 2
    result = anyio.run(measure, args)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
