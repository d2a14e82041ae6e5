"""The HTTP load harness, and the store engines under it: one daemon (``compozy serve``) on the
SQLite store and one on a PostgreSQL store, each driven by 30 concurrent HTTP clients for a
short run per operation, the two daemons taking turns set by set:

- ``session_status``: ``POST /api/tools/compozy__session_status/invoke`` (the compact view) of
  one of the stored sessions, a different one each call;
- ``session_create``: ``POST /api/sessions``.

Per engine and operation: calls/s, p50 and p99 latency, and the CPU seconds each process used
(the daemon, the PostgreSQL server's processes, this client), so that what bounds the run on
this 2-core machine can be read off. :func:`drive` is the harness itself (clients, deadline,
latencies), for any ``httpx2`` request.

Three daemons: SQLite, PostgreSQL as the server is set (every commit flushed), and PostgreSQL
with ``synchronous_commit = off`` on its database (the durability of SQLite's WAL mode).

    python -m benchmarks.store_load [--seconds 10] [--clients 30] [--sets 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from benchmarks.common import (
    emit_json,
    machine,
    machine_line,
    median,
    percentile,
    scratch_env,
    table,
)

CLIENTS = 30
SESSIONS = 200
STATUS = "compozy__session_status"
#: PostgreSQL with ``synchronous_commit = off`` on the daemon's database
ASYNC_COMMIT = "postgresql-async-commit"
_TICKS = os.sysconf("SC_CLK_TCK")
_LISTENING = re.compile(r"listening on (http://\S+)")


@dataclass
class Load:
    """What one run of :func:`drive` saw."""

    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    failures: int = 0

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds


async def drive(
    base_url: str,
    request: Callable[[httpx2.AsyncClient, int], Any],
    *,
    clients: int = CLIENTS,
    seconds: float = 10.0,
) -> Load:
    """``clients`` concurrent clients (a connection each, kept alive), each calling
    ``await request(client, n)`` back to back until ``seconds`` have passed (each at least
    once, however short the run and however slow the machine); a response other than 2xx
    counts as a failure."""
    latencies: list[float] = []
    failures = 0
    deadline = time.perf_counter() + seconds

    async def client_loop(k: int) -> None:
        nonlocal failures
        async with httpx2.AsyncClient(base_url=base_url, trust_env=False, timeout=60) as http:
            n = k
            while True:
                started = time.perf_counter()
                response = await request(http, n)
                if 200 <= response.status_code < 300:
                    latencies.append((time.perf_counter() - started) * 1000)
                else:
                    failures += 1
                n += clients
                if time.perf_counter() >= deadline:
                    break

    began = time.perf_counter()
    await asyncio.gather(*(client_loop(k) for k in range(clients)))
    return Load(time.perf_counter() - began, latencies, failures)


def _cpu_of(pid: int, *, reaped_children: bool = False) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / _TICKS


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


class Engine:
    """A daemon on one store, and how much CPU it (and its database server) has used."""

    def __init__(self, name: str, url: str, daemon: subprocess.Popen[str], postmaster: int | None):
        self.name, self.url, self.daemon, self.postmaster = name, url, daemon, postmaster
        self.session_ids: list[str] = []

    def cpu(self) -> dict[str, float]:
        used = {"daemon": _cpu_of(self.daemon.pid)}
        if self.postmaster is not None:
            used["postgres"] = _cpu_of(self.postmaster, reaped_children=True) + sum(
                _cpu_of(child) for child in _children(self.postmaster)
            )
        return used


@contextmanager
def daemon_on(home: Path, store: str | None) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``compozy serve`` on loopback TCP (a free port), on ``store`` or the home's SQLite."""
    env = scratch_env(home, str(home.parent))
    args = [str(Path(sys.executable).with_name("compozy")), "serve", "--port", "0", "--no-uds"]
    if store is not None:
        args += ["--store", store]
    process = subprocess.Popen(
        args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                raise SystemExit(f"compozy serve ({store or 'sqlite'}) exited before listening")
            if found := _LISTENING.search(line):
                url = found.group(1)
        if url is None:
            raise SystemExit("compozy serve did not start")
        yield process, url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _seed(engine: Engine, count: int) -> None:
    async with httpx2.AsyncClient(base_url=engine.url, trust_env=False, timeout=60) as http:
        for _ in range(count):
            made = await http.post("/api/sessions", json={"agent_name": "general"})
            made.raise_for_status()
            engine.session_ids.append(made.json()["session"]["id"])


def _status(engine: Engine) -> Callable[[httpx2.AsyncClient, int], Any]:
    ids = engine.session_ids

    def call(http: httpx2.AsyncClient, n: int) -> Any:
        return http.post(
            f"/api/tools/{STATUS}/invoke", json={"input": {"session_id": ids[n % len(ids)]}}
        )

    return call


def _create(http: httpx2.AsyncClient, n: int) -> Any:
    return http.post("/api/sessions", json={"agent_name": "general"})


def _phase(engine: Engine, operation: str, args: argparse.Namespace) -> dict[str, Any]:
    request = _status(engine) if operation == "session_status" else _create
    before, own_before = engine.cpu(), resource.getrusage(resource.RUSAGE_SELF)
    load = asyncio.run(drive(engine.url, request, clients=args.clients, seconds=args.seconds))
    after, own_after = engine.cpu(), resource.getrusage(resource.RUSAGE_SELF)
    cpu = {name: round(after[name] - before[name], 2) for name in after}
    cpu["client"] = round(
        own_after.ru_utime + own_after.ru_stime - own_before.ru_utime - own_before.ru_stime, 2
    )
    return {
        "engine": engine.name,
        "operation": operation,
        "calls": len(load.latencies_ms),
        "failures": load.failures,
        "calls_per_s": round(load.rate, 1),
        "p50_ms": round(percentile(load.latencies_ms, 0.5), 2),
        "p99_ms": round(percentile(load.latencies_ms, 0.99), 2),
        "seconds": round(load.seconds, 2),
        "cpu_s": cpu,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from tests.pg import started

    runs: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="compozy-store-load-") as scratch,
        started(durable=True) as server,
    ):
        database = server.create_database("load")
        # SQLite's WAL with synchronous=NORMAL does not flush at each commit either: this is
        # PostgreSQL at the durability the SQLite store has (docs/deployment.md)
        relaxed = server.create_database("load_async_commit")
        server.set_database(relaxed, "synchronous_commit", "off")
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        with (
            daemon_on(Path(scratch) / "sqlite" / "home", None) as (sqlite_daemon, sqlite_url),
            daemon_on(Path(scratch) / "pg" / "home", database) as (pg_daemon, pg_url),
            daemon_on(Path(scratch) / "pga" / "home", relaxed) as (pga_daemon, pga_url),
        ):
            engines = [
                Engine("sqlite", sqlite_url, sqlite_daemon, None),
                Engine("postgresql", pg_url, pg_daemon, postmaster),
                Engine(ASYNC_COMMIT, pga_url, pga_daemon, postmaster),
            ]
            for engine in engines:
                asyncio.run(_seed(engine, args.sessions))
                # warm: the first calls of a daemon build caches the others use (not counted)
                asyncio.run(
                    drive(engine.url, _status(engine), clients=2, seconds=min(1.0, args.seconds))
                )
            for number in range(args.sets):
                order = engines[number % 3 :] + engines[: number % 3]
                for operation in ("session_status", "session_create"):
                    for engine in order:
                        runs.append({"set": number, **_phase(engine, operation, args)})
    summary = []
    for operation in ("session_status", "session_create"):
        for name in ("sqlite", "postgresql", ASYNC_COMMIT):
            mine = [r for r in runs if r["engine"] == name and r["operation"] == operation]
            summary.append(
                {
                    "engine": name,
                    "operation": operation,
                    "calls_per_s": round(median([r["calls_per_s"] for r in mine]), 1),
                    "p50_ms": round(median([r["p50_ms"] for r in mine]), 2),
                    "p99_ms": round(median([r["p99_ms"] for r in mine]), 2),
                    "failures": sum(r["failures"] for r in mine),
                }
            )

    def p50(engine: str, operation: str) -> float:
        return float(
            next(
                s["p50_ms"] for s in summary if (s["engine"], s["operation"]) == (engine, operation)
            )
        )

    ratios = {
        f"{engine} {operation}": round(p50(engine, operation) / p50("sqlite", operation), 2)
        for engine in ("postgresql", ASYNC_COMMIT)
        for operation in ("session_status", "session_create")
    }
    return {
        "machine": machine(),
        "clients": args.clients,
        "seconds_per_run": args.seconds,
        "summary": summary,
        "postgresql_p50_over_sqlite_p50": ratios,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="each run's length")
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--sets", type=int, default=3, help="runs per engine and operation")
    parser.add_argument("--sessions", type=int, default=SESSIONS, help="sessions stored first")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the tests')")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.clients, args.sets, args.sessions = 0.2, 4, 1, 5
    result = measure(args)
    if args.json:
        emit_json(result)
        return
    print(machine_line(result["machine"]))
    print(f"{args.clients} clients, {args.seconds:g} s a run, {args.sets} set(s), medians:")
    print(
        table(
            ["engine", "operation", "calls/s", "p50 ms", "p99 ms", "failures"],
            [
                [
                    s["engine"],
                    s["operation"],
                    s["calls_per_s"],
                    s["p50_ms"],
                    s["p99_ms"],
                    s["failures"],
                ]
                for s in result["summary"]
            ],
        )
    )
    for operation, ratio in result["postgresql_p50_over_sqlite_p50"].items():
        print(f"{operation}: p50 / SQLite's p50 = {ratio}")
    print("CPU seconds per run (daemon, postgres, client):")
    for run in result["runs"]:
        print(f"  set {run['set']} {run['engine']:<24} {run['operation']:<15} {run['cpu_s']}")


if __name__ == "__main__":
    main()
