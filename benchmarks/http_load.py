"""MCP over HTTP under load: calls/s and latency with many clients calling at once.

Rows, each against its own server process (:mod:`benchmarks.servers`, JSON responses):

(a) the SDK's bare low-level ``Server``, ``echo``;
(b) our proxy, ``echo`` as a native tool;
(c) our ``compozy__session_status``, compact, on the realistic world of ``call_overhead``;
(d) the same, full;
(g) the SDK's bare ``Server`` answering the compact record of (c) as a constant: what the SDK
    alone spends to carry that record, the floor of (c);
(h) the same with the full record of (d), the floor of (d).

One client process (this one) holds ``--clients`` SDK client sessions per row, each calling in a
loop; a set runs every row for ``--seconds`` in turn (a different row order in each set), and
sets repeat, so that drift on a shared machine hits every row alike. calls/s is the median over
sets; a ratio is the median of per-set ratios to (a); latencies pool every call. The server's
CPU time per call (from ``/proc``) is what the shared machine's load moves least.

    python -m benchmarks.http_load [--clients 30] [--seconds 10] [--sets 3] [--rows abcdgh] [--json]
        [--quick]

The clients share the machine's cores with the servers (and with whatever else runs): the
figures compare rows, they do not measure a server alone.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.abc import Process, TaskStatus

from benchmarks.call_overhead import (
    CALLS,
    FLOORS,
    KIND,
    Call,
    Setup,
    prepared,
    sdk_client,
    start_http,
)
from benchmarks.common import (
    clients_out_of_the_collectors_reach,
    emit_json,
    machine,
    machine_line,
    median,
    percentile,
    table,
)
from benchmarks.records import DEFAULT_SEED

ROWS = {
    "a": "SDK low-level Server, echo",
    "b": "proxy, echo as a native tool",
    "c": "proxy, session_status compact",
    "d": "proxy, session_status full",
    "g": "SDK low-level Server, (c)'s record",
    "h": "SDK low-level Server, (d)'s record",
}
#: the issue's targets, as ratios of calls/s to (a)
TARGETS = {"b": 1.0, "c": 0.9}


@dataclass(slots=True)
class LoadSet:
    calls: int
    seconds: float
    latencies_ns: list[int]
    #: CPU seconds the server process spent during the set (user + system)
    server_cpu_s: float = 0.0

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.seconds


@dataclass(slots=True)
class LoadRow:
    key: str
    sets: list[LoadSet] = field(default_factory=list)


async def run_set(calls: list[Call], seconds: float) -> LoadSet:
    """Every client calls in a loop until ``seconds`` pass; calls under way then finish."""
    latencies: list[int] = []
    clock = time.perf_counter_ns
    deadline = clock() + int(seconds * 1e9)

    async def client(call: Call) -> None:
        while clock() < deadline:
            began = clock()
            await call()
            latencies.append(clock() - began)

    started = clock()
    async with anyio.create_task_group() as tg:
        for call in calls:
            tg.start_soon(client, call)
    return LoadSet(len(latencies), (clock() - started) / 1e9, latencies)


async def _held(
    connect: Callable[[], AbstractAsyncContextManager[tuple[Call, str]]],
    closing: anyio.Event,
    *,
    task_status: TaskStatus[Call] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """One client, held open in a task of its own until ``closing``. Entered one after another
    in one task, the clients' task groups nested: a later row's calls then walked a longer
    chain of cancel scopes at every checkpoint, and the client spent 5-10 % more CPU per call
    on row (b) than on (a), opened first (the rows' ratios moved accordingly)."""
    async with connect() as (call, _protocol):
        task_status.started(call)
        await closing.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``): on a shared machine what
    a server spends per call says more than its calls/s, which others' load moves."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_rows(
    setup: Setup,
    rows: list[str],
    clients: int,
    seconds: float,
    sets: int,
    log: TextIO,
    *,
    shared: bool = False,
) -> list[LoadRow]:
    """``shared`` (``--quick``): the rows of one server kind (the proxy's b, c and d; the SDK's
    a, g and h) load one server process instead of one each; the rows still run one at a time,
    and each row's server CPU is what that process spent during the row's own sets."""
    inputs = {
        "echo": {"text": "hello, compozy"},
        "compact": {"session_id": setup.session_id},
        "full": {"session_id": setup.session_id, "result_view": "full"},
        "none": {},
    }
    procs: list[Process] = []
    results = {key: LoadRow(key) for key in rows}
    try:
        urls: dict[str, str] = {}
        pids: dict[str, int] = {}
        started: dict[str, tuple[str, int]] = {}
        for key in rows:  # one server process per row: a row's load never slows another's
            if not shared or KIND[key] not in started:
                proc, url = await start_http(KIND[key], setup.world, log)
                procs.append(proc)
                started[KIND[key]] = (url, proc.pid)
            urls[key], pids[key] = started[KIND[key]]
        async with anyio.create_task_group() as holders:
            closing = anyio.Event()
            callers: dict[str, list[Call]] = {}
            for key in rows:
                tool, args, check = CALLS[key]
                connect = partial(sdk_client, urls[key], tool, inputs[args], check)
                callers[key] = [
                    await holders.start(_held, connect, closing) for _ in range(clients)
                ]
            try:
                for key in rows:  # warm-up: connections, caches
                    await run_set(callers[key], min(seconds, 2.0))
                with clients_out_of_the_collectors_reach() as between_sets:
                    for index in range(sets):
                        shift = index % len(rows)
                        for key in rows[shift:] + rows[:shift]:
                            between_sets()
                            before = cpu_seconds(pids[key])
                            done = await run_set(callers[key], seconds)
                            done.server_cpu_s = cpu_seconds(pids[key]) - before
                            results[key].sets.append(done)
            finally:
                closing.set()
    finally:
        for proc in procs:
            proc.terminate()
            with anyio.move_on_after(10):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
    return [results[key] for key in rows]


def summarize(rows: list[LoadRow]) -> list[dict[str, Any]]:
    base = next((row for row in rows if row.key == "a"), None)
    out = []
    for row in rows:
        rates = [s.calls_per_s for s in row.sets]
        latencies = [lat / 1e6 for s in row.sets for lat in s.latencies_ns]
        entry: dict[str, Any] = {
            "row": row.key,
            "what": ROWS[row.key],
            "calls_per_s": round(median(rates), 1),
            "calls_per_s_min": round(min(rates), 1),
            "calls_per_s_max": round(max(rates), 1),
            "latency_p50_ms": round(median(latencies), 2),
            "latency_p99_ms": round(percentile(latencies, 0.99), 2),
            "server_cpu_us_per_call": round(
                sum(s.server_cpu_s for s in row.sets) / sum(s.calls for s in row.sets) * 1e6, 1
            ),
        }
        if base is not None:
            paired = [
                s.calls_per_s / b.calls_per_s for s, b in zip(row.sets, base.sets, strict=True)
            ]
            entry["ratio_to_a"] = round(median(paired), 3)
        out.append(entry)
    return out


def targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 29's targets met or missed; (c)'s comes with its floor (``floor``: the ratio to
    (a) and the p99 of the SDK alone carrying the same record, row (g))."""
    by_row = {r["row"]: r for r in rows}
    out: dict[str, Any] = {}
    base = by_row.get("a")
    for key, wanted in TARGETS.items():
        row = by_row.get(key)
        if row is None or base is None:
            continue
        target: dict[str, Any] = {
            "target": f"calls/s >= {wanted} x (a), p99 no worse",
            "value": row["ratio_to_a"],
            "p99_ms": [row["latency_p99_ms"], base["latency_p99_ms"]],
            "met": row["ratio_to_a"] >= wanted and row["latency_p99_ms"] <= base["latency_p99_ms"],
        }
        floor = by_row.get(FLOORS.get(key, ""))
        if floor is not None:
            target["floor"] = {"value": floor["ratio_to_a"], "p99_ms": floor["latency_p99_ms"]}
        out[f"{key}_over_a"] = target
    return out


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    rows = [key for key in ROWS if key in args.rows]
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as directory:
        log_path = Path(directory) / "servers.log"
        async with prepared(Path(directory), args.seed, quick=args.quick) as setup:
            with log_path.open("a", encoding="utf-8") as log:
                try:
                    measured = await measure_rows(
                        setup, rows, args.clients, args.seconds, args.sets, log, shared=args.quick
                    )
                except BaseException:
                    log.flush()
                    sys.stderr.write(log_path.read_text(encoding="utf-8")[-4000:])
                    raise
    summary = summarize(measured)
    return {
        "benchmark": "http_load",
        "quick": args.quick,
        "clients": args.clients,
        "seconds_per_set": args.seconds,
        "sets": args.sets,
        "results": summary,
        "targets": targets(summary),
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"MCP over HTTP, {result['clients']} clients at once, {result['sets']} sets of "
        f"{result['seconds_per_set']:g} s per row; calls/s = median over sets [min-max], "
        "ratio = median of per-set ratios to (a)",
        table(
            ["row", "calls/s", "range", "p50 ms", "p99 ms", "ratio to a", "server CPU us/call"],
            [
                [
                    f"({r['row']}) {r['what']}",
                    r["calls_per_s"],
                    f"{r['calls_per_s_min']:,.0f}-{r['calls_per_s_max']:,.0f}",
                    r["latency_p50_ms"],
                    r["latency_p99_ms"],
                    f"{r['ratio_to_a']:.2f}" if "ratio_to_a" in r else "-",
                    r["server_cpu_us_per_call"],
                ]
                for r in result["results"]
            ],
        ),
        "",
        "targets:",
    ]
    for name, target in result["targets"].items():
        verdict = "met" if target["met"] else "MISSED"
        floor = target.get("floor")
        if floor is not None:
            verdict += (
                f"; the SDK alone carrying the same record: {floor['value']}, "
                f"p99 {floor['p99_ms']} ms"
            )
        lines.append(
            f"  {name}: {target['target']}: {target['value']} "
            f"(p99 {target['p99_ms'][0]} vs {target['p99_ms'][1]} ms) ({verdict})"
        )
    lines += ["", machine_line(result["machine"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_load", description=__doc__)
    parser.add_argument("--clients", type=int, default=30, help="client sessions per row")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per row and set")
    parser.add_argument("--sets", type=int, default=3)
    parser.add_argument("--rows", default="abcdgh", help="which rows, e.g. abc (default: abcdgh)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="world seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 clients, one set of 0.2 s, one process for rows b-d, one for a, g, h",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.seconds, args.sets = 3, 0.2, 1
    if not set(args.rows) <= set(ROWS) or "a" not in args.rows:
        parser.error(f"--rows takes letters from {''.join(ROWS)}, (a) among them")
    result = anyio.run(measure, args)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
