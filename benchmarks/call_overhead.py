"""Call overhead: calls/s and per-call latency of one tool call, across servers and transports.

Rows, side by side in one run:

(a) the SDK's bare low-level ``Server``, trivial ``echo`` tool;
(b) our proxy, the same trivial tool registered as a native tool;
(c) our ``compozy__session_status``, compact, on a realistic record;
(d) the same, full;
(e) the SDK's high-level ``MCPServer``, ``echo`` as a ``@tool``;
(f) FastMCP (PyPI ``fastmcp``, in its own virtualenv under ``.bench/``), ``echo`` as a tool;
(g) the SDK's bare ``Server`` of (a) answering the compact record of (c) as a constant (its
    ``record_compact`` tool): what the SDK alone spends to carry that record, the floor of (c);
(h) the same with the full record of (d), the floor of (d).

Transports: ``inproc`` (``mcp.client.Client`` given the server object: 2026-07-28 direct
dispatch; FastMCP uses its own in-memory client, which runs the 2025-11-25 handshake over
memory streams), ``inproc-legacy`` (``Client(mode="legacy")``: 2025-11-25 JSON-RPC over memory
streams, FastMCP's in-memory client again), ``stdio`` (the SDK client spawns each server) and
``http`` (each server on a free loopback port, JSON responses; the SDK client).

Each row keeps one client connected for the whole run; after a warm-up, sets of sequential calls
are interleaved across rows (a different row order in each set) and repeated, so that drift on
a shared machine hits every row alike. calls/s is the median over sets; a ratio is the median of
per-set ratios to (a) in the same set; latencies pool every measured call.

    python -m benchmarks.call_overhead [--json] [--quick] [--no-fastmcp] [--transports ...]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.abc import Process
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from benchmarks import fastmcp_env
from benchmarks.common import (
    REPO_ROOT,
    clients_out_of_the_collectors_reach,
    emit_json,
    machine,
    machine_line,
    median,
    percentile,
    spread,
    table,
)
from benchmarks.records import DEFAULT_SEED, Size, build_world, open_world_app
from benchmarks.servers import (
    ECHO_ARGS,
    ECHO_TOOL,
    WORLD_DB,
    WORLD_NOW,
    WORLD_RECORDS,
    mcpserver,
    proxy_on_world,
    record_tool,
    sdk_server,
    world_records,
)
from compozy_mcp import jsonutil
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.store import SQLiteStore

TRANSPORTS = ("inproc", "inproc-legacy", "stdio", "http")
ROWS = {
    "a": "SDK low-level Server, echo",
    "b": "proxy, echo as a native tool",
    "c": "proxy, session_status compact",
    "d": "proxy, session_status full",
    "e": "SDK MCPServer, echo",
    "f": "FastMCP, echo",
    "g": "SDK low-level Server, (c)'s record",
    "h": "SDK low-level Server, (d)'s record",
}
STATUS = "compozy__session_status"
#: issue 29's least ratios of calls/s to (a), by transport and row
TARGETS = {
    "inproc": {"b": 1.0, "c": 0.8, "d": 0.7},
    "stdio": {"b": 1.0, "c": 1.0, "d": 1.0},
    "http": {"b": 1.0, "c": 1.0, "d": 1.0},
}
#: each status row's floor: the row of the SDK alone carrying the same record
FLOORS = {"c": "g", "d": "h"}


@dataclass(frozen=True, slots=True)
class Plan:
    calls: int
    sets: int
    warmup: int


PLANS = {
    "inproc": Plan(calls=400, sets=5, warmup=200),
    "inproc-legacy": Plan(calls=300, sets=5, warmup=150),
    "stdio": Plan(calls=200, sets=5, warmup=100),
    "http": Plan(calls=150, sets=5, warmup=75),
}
QUICK = Plan(calls=15, sets=2, warmup=5)


@dataclass(slots=True)
class Sample:
    latencies_ns: list[int]
    elapsed_ns: int

    @property
    def calls_per_s(self) -> float:
        return len(self.latencies_ns) / (self.elapsed_ns / 1e9)


@dataclass(slots=True)
class Row:
    key: str
    transport: str
    protocol: str = "?"
    samples: list[Sample] = field(default_factory=list)


# --- clients -------------------------------------------------------------------------------

Call = Callable[[], Awaitable[None]]
Connect = Callable[[], AbstractAsyncContextManager[tuple[Call, str]]]


def _checked(expect: Callable[[Any], bool], what: str) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        if getattr(result, "is_error", False) or not expect(result):
            raise RuntimeError(f"{what}: unexpected result {result!r}"[:500])

    return check


ECHO_OK = _checked(lambda r: r.structured_content["echo"] == ECHO_ARGS["text"], "echo")
STATUS_OK = _checked(lambda r: "session" in r.structured_content, STATUS)


@asynccontextmanager
async def sdk_client(
    server: Any, tool: str, args: dict[str, Any], check: Callable[[Any], None], mode: str = "auto"
) -> AsyncIterator[tuple[Call, str]]:
    """One SDK client session; ``call`` makes one checked tool call."""
    async with Client(server, mode=mode) as client, client_calls(client, tool, args, check) as made:
        yield made


@asynccontextmanager
async def client_calls(
    client: Client, tool: str, args: dict[str, Any], check: Callable[[Any], None]
) -> AsyncIterator[tuple[Call, str]]:
    """``call`` makes one call of ``tool`` through ``client`` (open), checked once first."""
    check(await client.call_tool(tool, args))

    async def call() -> None:
        await client.call_tool(tool, args)

    yield call, str(client.protocol_version)


def stdio_params(kind: str, world: Path) -> StdioServerParameters:
    if kind == "fastmcp":
        return StdioServerParameters(
            command=str(fastmcp_env.python()),
            args=[str(fastmcp_env.script()), "serve", "--transport", "stdio"],
            cwd=REPO_ROOT,
        )
    args = ["-m", "benchmarks.servers", kind, "--transport", "stdio", "--world", str(world)]
    return StdioServerParameters(command=sys.executable, args=args, cwd=REPO_ROOT, env=_env())


def stdio_transport(kind: str, world: Path, log: TextIO) -> Any:
    """The SDK's stdio client spawning one server; its stderr goes to ``log``."""
    return stdio_client(stdio_params(kind, world), errlog=log)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


async def start_http(kind: str, world: Path, log: TextIO) -> tuple[Process, str]:
    """Start one HTTP server process; returns it and its URL once it listens."""
    if kind == "fastmcp":
        command = [str(fastmcp_env.python()), str(fastmcp_env.script()), "serve"]
        command += ["--transport", "http"]
    else:
        command = [sys.executable, "-m", "benchmarks.servers", kind, "--transport", "http"]
        command += ["--world", str(world)]
    proc = await anyio.open_process(command, cwd=REPO_ROOT, env=_env(), stderr=log)
    assert proc.stdout is not None
    buffer = b""
    with anyio.fail_after(120):
        while b"\n" not in buffer:
            chunk = await proc.stdout.receive()
            buffer += chunk
    line = buffer.split(b"\n", 1)[0].decode()
    if not line.startswith("PORT "):
        raise RuntimeError(f"{kind} http server said {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/mcp"


@asynccontextmanager
async def fastmcp_worker(
    log: TextIO,
) -> AsyncIterator[tuple[Callable[[int], Awaitable[Sample]], str]]:
    """FastMCP's in-process benchmark, in its virtualenv, driven one set at a time."""
    proc = await anyio.open_process(
        [str(fastmcp_env.python()), str(fastmcp_env.script()), "worker"], stderr=log
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    pending = b""

    async def run(calls: int) -> Sample:
        nonlocal pending
        await stdin.send(jsonutil.dumps({"calls": calls}) + b"\n")
        while b"\n" not in pending:
            pending += await stdout.receive()
        line, pending = pending.split(b"\n", 1)
        answer = jsonutil.loads(line)
        return Sample(answer["latencies_ns"], answer["elapsed_ns"])

    try:
        await run(1)
        yield run, "2025-11-25 (FastMCP in-memory client)"
    finally:
        await stdin.aclose()
        with anyio.move_on_after(10):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()


# --- measuring -------------------------------------------------------------------------------


async def timed(call: Call, calls: int) -> Sample:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(calls):
        began = clock()
        await call()
        latencies.append(clock() - began)
    return Sample(latencies, clock() - start)


@dataclass(slots=True)
class Runner:
    """A task that holds one row's client open and runs sets when asked."""

    row: Row
    run: Callable[[int], Awaitable[Sample]] | None = None
    ready: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None


async def hold_client(runner: Runner, connect: Connect) -> None:
    try:
        async with connect() as (call, protocol):
            runner.row.protocol = protocol

            async def run(calls: int) -> Sample:
                return await timed(call, calls)

            runner.run = run
            runner.ready.set()
            await runner.done.wait()
    except BaseException as exc:
        runner.error = exc
        runner.ready.set()
        raise


async def hold_fastmcp(runner: Runner, log: TextIO) -> None:
    try:
        async with fastmcp_worker(log) as (run, protocol):
            runner.row.protocol = protocol
            runner.run = run
            runner.ready.set()
            await runner.done.wait()
    except BaseException as exc:
        runner.error = exc
        runner.ready.set()
        raise


async def run_sets(runners: list[Runner], plan: Plan) -> None:
    for runner in runners:
        await runner.ready.wait()
        if runner.error is not None:
            raise RuntimeError(f"row {runner.row.key} failed to start") from runner.error
    for runner in runners:
        assert runner.run is not None
        await runner.run(plan.warmup)
    # a full collection of the clients had stalled one set of one row
    with clients_out_of_the_collectors_reach() as between_sets:
        for index in range(plan.sets):
            # rotate the order so no row always runs first (or right after the slowest)
            shift = index % len(runners)
            for runner in runners[shift:] + runners[:shift]:
                assert runner.run is not None
                between_sets()
                runner.row.samples.append(await runner.run(plan.calls))


@dataclass(slots=True)
class Setup:
    world: Path
    session_id: str
    status_bytes: dict[str, int]
    proxy: ProxyServer


CALLS: dict[str, tuple[str, str, Callable[[Any], None]]] = {
    "a": ("echo", "echo", ECHO_OK),
    "b": (ECHO_TOOL.id, "echo", ECHO_OK),
    "c": (STATUS, "compact", STATUS_OK),
    "d": (STATUS, "full", STATUS_OK),
    "e": ("echo", "echo", ECHO_OK),
    "f": ("echo", "echo", ECHO_OK),
    "g": (record_tool("compact"), "none", STATUS_OK),
    "h": (record_tool("full"), "none", STATUS_OK),
}
#: which server each row calls (b, c and d share one proxy; a, g and h the SDK's)
KIND = {
    "a": "sdk",
    "b": "proxy",
    "c": "proxy",
    "d": "proxy",
    "e": "mcpserver",
    "f": "fastmcp",
    "g": "sdk",
    "h": "sdk",
}


async def targets_for(
    transport: str,
    setup: Setup,
    rows: list[str],
    log: TextIO,
    procs: list[Process],
    *,
    shared: bool = False,
) -> dict[str, Any]:
    """What each row's client connects to on ``transport``; ``shared``: over stdio, the rows
    of one server kind get the same transport (see :func:`measure_transport`)."""
    if transport.startswith("inproc"):
        servers = {
            "sdk": sdk_server(world_records(setup.world)),
            "mcpserver": mcpserver(),
            "proxy": setup.proxy.server,
        }
        return {key: servers[KIND[key]] for key in rows if key != "f"}
    if transport == "stdio":
        if shared:
            made = dict.fromkeys(KIND[key] for key in rows)
            kinds = {kind: stdio_transport(kind, setup.world, log) for kind in made}
            return {key: kinds[KIND[key]] for key in rows}
        return {key: stdio_transport(KIND[key], setup.world, log) for key in rows}
    urls: dict[str, str] = {}
    for kind in dict.fromkeys(KIND[key] for key in rows if key in KIND):
        proc, urls[kind] = await start_http(kind, setup.world, log)
        procs.append(proc)
    return {key: urls[KIND[key]] for key in rows if key in KIND}


async def measure_transport(
    transport: str, setup: Setup, plan: Plan, rows: list[str], log: TextIO, *, quick: bool = False
) -> list[Row]:
    """``quick``: over stdio, the rows of one server (the proxy's b, c, d; the SDK's a, g, h)
    share one client session, so one server process instead of three (a proxy opens the world:
    about a second of CPU a start);
    their sets run one at a time either way. The full run keeps a process per row."""
    runners = [Runner(Row(key, transport)) for key in rows]
    inputs = {
        "echo": ECHO_ARGS,
        "compact": {"session_id": setup.session_id},
        "full": {"session_id": setup.session_id, "result_view": "full"},
        "none": {},
    }
    mode = "legacy" if transport == "inproc-legacy" else "auto"
    shared = quick and transport == "stdio"
    procs: list[Process] = []
    try:
        targets = await targets_for(transport, setup, rows, log, procs, shared=shared)
        async with AsyncExitStack() as stack:
            clients: dict[int, Client] = {}
            if shared:
                for key in rows:
                    target = targets[key]
                    if key != "f" and id(target) not in clients:
                        opened = await stack.enter_async_context(Client(target, mode=mode))
                        clients[id(target)] = opened
            async with anyio.create_task_group() as tg:
                for runner in runners:
                    key = runner.row.key
                    if key == "f" and transport.startswith("inproc"):
                        tg.start_soon(hold_fastmcp, runner, log)
                        continue
                    tool, args, check = CALLS[key]

                    def connect(
                        target: Any = targets[key],
                        tool: str = tool,
                        args: Any = inputs[args],
                        check: Any = check,
                    ) -> AbstractAsyncContextManager[tuple[Call, str]]:
                        if id(target) in clients:
                            return client_calls(clients[id(target)], tool, args, check)
                        return sdk_client(target, tool, args, check, mode)

                    tg.start_soon(hold_client, runner, connect)
                try:
                    await run_sets(runners, plan)
                finally:
                    for runner in runners:
                        runner.done.set()
    finally:
        for proc in procs:
            proc.terminate()
            with anyio.move_on_after(10):
                await proc.wait()
    return [runner.row for runner in runners]


@asynccontextmanager
async def prepared(directory: Path, seed: int, quick: bool) -> AsyncIterator[Setup]:
    """Build the realistic world into a file, then open it as the subprocess proxies do."""
    world = directory / "world"
    world.mkdir(mode=0o700)  # it holds a store: private, as compozy asks of its home
    with open_world_app(world / "home", store=SQLiteStore(world / WORLD_DB)) as (
        app,
        clock,
        driver,
    ):
        built = await build_world(app, clock, driver, seed, Size.quick() if quick else Size())
        (world / WORLD_NOW).write_text(built.now.replace("Z", "+00:00"), encoding="utf-8")
        bound = []
        for session_id in built.sessions:
            full = await app.dispatcher.call(
                STATUS, {"session_id": session_id, "result_view": "full"}
            )
            if len(full.structured["session"]["available_commands"]) == 30:
                bound.append((len(full.structured_json), session_id))
        bound.sort()
        chosen = bound[len(bound) // 2][1]  # the bound session of median size
        compact = await app.dispatcher.call(STATUS, {"session_id": chosen})
        full = await app.dispatcher.call(STATUS, {"session_id": chosen, "result_view": "full"})
        status_bytes = {"compact": len(compact.structured_json), "full": len(full.structured_json)}
        records = {"compact": compact.structured, "full": full.structured}  # rows g and h
        (world / WORLD_RECORDS).write_bytes(jsonutil.dumps(records))
    with proxy_on_world(world) as proxy:
        yield Setup(world, chosen, status_bytes, proxy)


def summarize(rows: list[Row]) -> list[dict[str, Any]]:
    by_key = {row.key: row for row in rows}
    base = by_key.get("a")
    out = []
    for row in rows:
        rates = [s.calls_per_s for s in row.samples]
        latencies = [lat / 1000 for s in row.samples for lat in s.latencies_ns]
        entry: dict[str, Any] = {
            "row": row.key,
            "what": ROWS[row.key],
            "transport": row.transport,
            "protocol": row.protocol,
            "sets": len(rates),
            "calls_per_set": len(row.samples[0].latencies_ns) if row.samples else 0,
            "calls_per_s": round(median(rates), 1),
            "calls_per_s_min": round(min(rates), 1),
            "calls_per_s_max": round(max(rates), 1),
            "spread": round(spread(rates), 3),
            "latency_median_us": round(median(latencies), 1),
            "latency_p95_us": round(percentile(latencies, 0.95), 1),
        }
        if base is not None and base.samples:
            paired = [
                s.calls_per_s / b.calls_per_s
                for s, b in zip(row.samples, base.samples, strict=True)
            ]
            entry["ratio_to_a"] = round(median(paired), 3)
            entry["ratio_to_a_min"] = round(min(paired), 3)
            entry["ratio_to_a_max"] = round(max(paired), 3)
        out.append(entry)
    return out


def targets(results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Issue 29's targets met or missed; a status row's comes with its floor (``floor``: the
    ratio to (a) of the SDK alone carrying the same record), and (c) with FastMCP's when it
    ran."""
    out: dict[str, Any] = {}
    for transport, rows in results.items():
        by_row = {r["row"]: r for r in rows}
        for key, wanted in TARGETS.get(transport, {}).items():
            if "ratio_to_a" not in by_row.get(key, {}):
                continue
            value = by_row[key]["ratio_to_a"]
            target: dict[str, Any] = {"target": f">= {wanted} x (a)", "value": value}
            floor = by_row.get(FLOORS.get(key, ""), {}).get("ratio_to_a")
            if floor is not None:
                target["floor"] = floor
            out[f"{transport}_{key}_over_a"] = {**target, "met": value >= wanted}
        if "c" in by_row and "f" in by_row:
            c, f = by_row["c"]["calls_per_s"], by_row["f"]["calls_per_s"]
            out[f"{transport}_c_vs_f"] = {
                "target": "c calls/s >= f calls/s",
                "value": round(c / f, 3),
                "met": c >= f,
            }
    return out


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    rows = [key for key in ROWS if key != "f" or args.fastmcp]
    if args.fastmcp:
        await anyio.to_thread.run_sync(fastmcp_env.ensure)
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as directory:
        log_path = Path(directory) / "servers.log"
        async with prepared(Path(directory), args.seed, args.quick) as setup:
            log = log_path.open("a", encoding="utf-8")
            try:
                await _run_transports(args, setup, rows, results, log)
            except BaseException:
                log.close()
                sys.stderr.write(log_path.read_text(encoding="utf-8")[-4000:])
                raise
            log.close()
    return {
        "benchmark": "call_overhead",
        "quick": args.quick,
        "session": {"seed": args.seed, "status_bytes": setup.status_bytes},
        "fastmcp": fastmcp_env.FASTMCP_VERSION if args.fastmcp else None,
        "results": results,
        "targets": targets(results),
        "machine": machine(),
    }


async def _run_transports(
    args: argparse.Namespace,
    setup: Setup,
    rows: list[str],
    results: dict[str, list[dict[str, Any]]],
    log: TextIO,
) -> None:
    for transport in args.transports:
        plan = QUICK if args.quick else PLANS[transport]
        if args.calls:
            plan = Plan(args.calls, plan.sets, plan.warmup)
        if args.sets:
            plan = Plan(plan.calls, args.sets, plan.warmup)
        measured = await measure_transport(transport, setup, plan, rows, log, quick=args.quick)
        results[transport] = summarize(measured)


def report(result: dict[str, Any]) -> str:
    status = result["session"]["status_bytes"]
    lines = [
        "Call overhead: sequential calls through one client; calls/s = median over sets "
        "[min-max], ratio = median of per-set ratios to (a)",
        f"(c)/(d) read a bound session: compact {status['compact']:,} B, full {status['full']:,} B",
    ]
    for transport, rows in result["results"].items():
        lines += ["", f"{transport}:"]
        lines.append(
            table(
                ["row", "protocol", "calls/s", "range", "spread", "p50 us", "p95 us", "ratio to a"],
                [
                    [
                        f"({r['row']}) {r['what']}",
                        r["protocol"],
                        r["calls_per_s"],
                        f"{r['calls_per_s_min']:,.0f}-{r['calls_per_s_max']:,.0f}",
                        f"{r['spread']:.0%}",
                        r["latency_median_us"],
                        r["latency_p95_us"],
                        f"{r['ratio_to_a']:.2f}" if "ratio_to_a" in r else "-",
                    ]
                    for r in rows
                ],
            )
        )
    lines += ["", "targets:"]
    for name, target in result["targets"].items():
        verdict = "met" if target["met"] else "MISSED"
        if "floor" in target:
            verdict += f"; the SDK alone carrying the same record: {target['floor']}"
        lines.append(f"  {name}: {target['target']}: {target['value']} ({verdict})")
    lines += ["", machine_line(result["machine"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    # MCPServer() calls logging.basicConfig(level=INFO), which would make the HTTP client log
    # every request of every row; configured first, that call does nothing
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.call_overhead", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a few calls per set, two sets; over stdio one process for rows b-d, one for a, g, h",
    )
    parser.add_argument(
        "--no-fastmcp", dest="fastmcp", action="store_false", help="leave FastMCP out"
    )
    parser.add_argument(
        "--transports",
        type=lambda text: [t for t in text.split(",") if t],
        default=list(TRANSPORTS),
        help=f"comma-separated, from {','.join(TRANSPORTS)} (default: all)",
    )
    parser.add_argument("--calls", type=int, help="calls per set (default: per transport)")
    parser.add_argument("--sets", type=int, help="sets per row (default: 5)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="world seed")
    args = parser.parse_args(argv)
    unknown = set(args.transports) - set(TRANSPORTS)
    if unknown:
        parser.error(f"unknown transports: {', '.join(sorted(unknown))}")
    result = anyio.run(measure, args)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
