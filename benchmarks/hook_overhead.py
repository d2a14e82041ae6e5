"""Hook overhead: what one no-op hook costs a tool call, as a ratio to the same call with none.

Rows, each on an app of its own (a file store, so that run records are real WAL writes):

(n) no hooks;
(i) one no-op in-process hook on ``tool.pre_call`` (an async function returning ``None``);
(c) one no-op command hook on ``tool.pre_call``: argv ``["true"]`` (no shell);
(s) one no-op shell hook on ``tool.pre_call``: ``cat >/dev/null`` under ``/bin/sh -c`` (reads
    its payload, as a real hook does).

The call is the trivial native tool ``bench__echo`` (as in ``call_overhead``), measured at two
levels: ``dispatch`` (``Dispatcher.call``: the hook engine and nothing else) and ``inproc`` (an
SDK ``mcp.client.Client`` on the proxy in this process, 2026-07-28 direct dispatch: what an
agent's call costs). A set is N sequential calls followed by waiting for the hooks' run
records, so background writes are paid for in the row that makes them. Sets are interleaved
across rows in a rotating order; calls/s is the median over sets, the ratio the median of
per-set ratios to (n).

    python -m benchmarks.hook_overhead [--json] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client import Client

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table
from benchmarks.servers import ECHO_ARGS, ECHO_TOOL
from compozy_mcp.assembly import App, open_app
from compozy_mcp.config import Settings
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.store import SQLiteStore

ROWS = {
    "n": "no hooks",
    "i": "one no-op in-process hook",
    "c": 'one no-op command hook (argv ["true"])',
    "s": "one no-op shell hook (sh -c 'cat >/dev/null')",
}
LEVELS = ("dispatch", "inproc")
COMMANDS: dict[str, str | list[str]] = {"c": ["true"], "s": "cat >/dev/null"}


@dataclass(frozen=True, slots=True)
class Plan:
    calls: int
    sets: int
    warmup: int


PLAN = Plan(calls=300, sets=5, warmup=50)
QUICK = Plan(calls=8, sets=2, warmup=2)

Call = Callable[[], Awaitable[None]]


@dataclass(slots=True)
class Row:
    key: str
    level: str
    rates: list[float] = field(default_factory=list)
    latencies_ns: list[int] = field(default_factory=list)


async def _noop(payload: dict[str, Any]) -> None:
    return None


async def _app(stack: AsyncExitStack, key: str, root: Path) -> App:
    home = root / key
    home.mkdir()
    settings = Settings(home=home, default_workspace_path=home)
    app = stack.enter_context(
        open_app(settings, store=SQLiteStore(home / "compozy.db"), extra_tools=[ECHO_TOOL])
    )
    if key == "i":
        app.hooks.registry.add_code_hook(_noop, events=("tool.pre_call",))
    elif key in COMMANDS:
        await app.dispatcher.call(
            "compozy__hooks_create",
            {"id": "noop", "event": "tool.pre_call", "command": COMMANDS[key]},
        )
    return app


@asynccontextmanager
async def _caller(stack: AsyncExitStack, app: App, level: str) -> AsyncIterator[Call]:
    if level == "dispatch":

        async def dispatch() -> None:
            await app.dispatcher.call(ECHO_TOOL.id, ECHO_ARGS)

        yield dispatch
        return
    client = await stack.enter_async_context(Client(ProxyServer(app).server))

    async def inproc() -> None:
        result = await client.call_tool(ECHO_TOOL.id, ECHO_ARGS)
        if result.is_error:
            raise RuntimeError(f"echo failed: {result}")

    yield inproc


async def _set(call: Call, app: App, row: Row, calls: int) -> None:
    latencies = []
    started = time.perf_counter_ns()
    for _ in range(calls):
        before = time.perf_counter_ns()
        await call()
        latencies.append(time.perf_counter_ns() - before)
    await app.hooks.drain()  # the row pays for its run records
    elapsed = time.perf_counter_ns() - started
    row.rates.append(calls / (elapsed / 1e9))
    row.latencies_ns += latencies


async def measure_level(level: str, plan: Plan, root: Path) -> list[Row]:
    async with AsyncExitStack() as stack:
        callers: dict[str, tuple[Call, App]] = {}
        for key in ROWS:
            app = await _app(stack, key, root / level)
            call = await stack.enter_async_context(_caller(stack, app, level))
            callers[key] = (call, app)
        rows = {key: Row(key, level) for key in ROWS}
        for call, app in callers.values():
            for _ in range(plan.warmup):
                await call()
            await app.hooks.drain()
        keys = list(ROWS)
        for number in range(plan.sets):
            order = keys[number % len(keys) :] + keys[: number % len(keys)]
            for key in order:
                call, app = callers[key]
                await _set(call, app, rows[key], plan.calls)
        return list(rows.values())


def summarize(rows: list[Row]) -> list[dict[str, Any]]:
    base = next(row for row in rows if row.key == "n")
    out = []
    for row in rows:
        latencies = [ns / 1000 for ns in row.latencies_ns]
        paired = [r / b for r, b in zip(row.rates, base.rates, strict=True)]
        out.append(
            {
                "row": row.key,
                "what": ROWS[row.key],
                "level": row.level,
                "sets": len(row.rates),
                "calls_per_s": round(median(row.rates), 1),
                "latency_median_us": round(median(latencies), 1),
                "latency_p95_us": round(percentile(latencies, 0.95), 1),
                "ratio_to_none": round(median(paired), 4),
                "ratio_min": round(min(paired), 4),
                "ratio_max": round(max(paired), 4),
            }
        )
    return out


async def measure(quick: bool) -> dict[str, Any]:
    plan = QUICK if quick else PLAN
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as tmp:
        for level in LEVELS:
            (Path(tmp) / level).mkdir()
            results[level] = summarize(await measure_level(level, plan, Path(tmp)))
    return {
        "machine": machine(),
        "plan": {"calls": plan.calls, "sets": plan.sets, "warmup": plan.warmup},
        "results": results,
    }


def report(result: dict[str, Any]) -> str:
    lines = [machine_line(result["machine"]), ""]
    for level, rows in result["results"].items():
        lines.append(
            f"{level} (bench__echo, {result['plan']['calls']} calls x "
            f"{result['plan']['sets']} sets)"
        )
        lines.append(
            table(
                ["row", "what", "calls/s", "p50 us", "p95 us", "ratio to none"],
                [
                    [
                        r["row"],
                        r["what"],
                        r["calls_per_s"],
                        r["latency_median_us"],
                        r["latency_p95_us"],
                        r["ratio_to_none"],
                    ]
                    for r in rows
                ],
            )
        )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--quick", action="store_true", help="a tiny run (tests)")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.quick))
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
