"""Several daemons on one store (issue 28): ``session_status`` and ``session_create`` calls/s
with 1 and 3 daemons, on SQLite or PostgreSQL, and failover time.

1. **Calls**: ``N`` daemons (``compozy serve --advertise``, each with its own home) on one
   store (``--store sqlite``: every home's ``compozy.db`` a link to the first's;
   ``--store postgresql``: a new database on a PostgreSQL 16 server started from the
   ``pgserver`` wheel, as ``tests/pg.py`` starts it, with its durable settings) serve
   ``GET /api/sessions/{id}`` (the Host API's ``session_status``), then
   ``POST /api/sessions`` (``session_create``, no agent), to ``--clients`` concurrent clients,
   each sending its next request to the next daemon (a round-robin balancer). Calls/s, p50/p99
   latency, and the CPU seconds each process used during the run (the daemons from
   ``/proc/PID/stat``, the PostgreSQL server with all its backends, the client process from
   ``resource``): this machine's CPUs bound the client and the servers together, so the CPU
   split shows where the time went. Before the reads, the daemons are left idle for 3 s: the
   CPU an idle daemon spends per second (its poll of the store).
2. **Failover**: two daemons with ``COMPOZY_LEASE_SECONDS`` (``--lease``); a turn runs on the
   first (the shipped ``echo`` agent, ``slow 30``); the first is killed with -9 and a prompt
   (``wait``) is sent to the second: the time from the kill to that turn's completion (the
   lease runs out, the second daemon takes the session over, binds the agent and runs it).

    python -m benchmarks.cluster [--store sqlite|postgresql] [--clients 30] [--seconds 10]
        [--lease 15] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2

from benchmarks.common import emit_json, machine, machine_line, percentile, scratch_env, table
from compozy_mcp.runtime import _procfs as procfs

COMPOZY = str(Path(sys.executable).with_name("compozy"))
TICKS = os.sysconf("SC_CLK_TCK")
#: how long the daemons are left idle to measure what their poll costs (``--quick``: 0.5 s)
IDLE_S = 3.0
QUICK_IDLE_S = 0.5


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process (and its reaped children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / TICKS


def _server_cpu(postmaster: int | None) -> float:
    """The PostgreSQL server's CPU: the postmaster (with the backends it reaped) and every
    live backend; 0 with no server (SQLite runs inside the daemons)."""
    if postmaster is None:
        return 0.0
    used = _cpu_seconds(postmaster)
    for backend in procfs.children(postmaster):
        with contextlib.suppress(OSError):  # it ended since it was listed
            used += _cpu_seconds(backend)
    return used


def _client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def daemons(
    root: Path, count: int, store_url: str | None = None, **extra: str
) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    """``count`` daemons on one store (the PostgreSQL database at ``store_url``, else one
    SQLite file), each answering; all ended when the block ends. The first creates the store
    and answers before the others start (they find it migrated); the others start together."""
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    try:
        setups: list[tuple[dict[str, str], Path]] = []  # each daemon's environment and home
        for index in range(count):
            home = root / f"d{index + 1}"
            home.mkdir(parents=True)
            (root / "workspace").mkdir(exist_ok=True)
            if index and store_url is None:
                (home / "compozy.db").symlink_to(root / "d1" / "compozy.db")
            env = {**scratch_env(home, str(root / "workspace")), **extra}
            if store_url is not None:
                env["COMPOZY_STORE"] = store_url
            env["COMPOZY_PERMISSION_MODE"] = "bypass"
            setups.append((env, home))
            started.append(_serve(env, home))
            if index == 0:
                started[0] = _ready(started[0], env, home)
        for index in range(1, count):
            started[index] = _ready(started[index], *setups[index])
        yield started
    finally:
        for process, _ in started:
            if process.poll() is None:
                process.terminate()
        for process, _ in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


#: a daemon whose port another process took between the probe and its bind starts again on
#: another port, this many times in all (any outgoing connection may take an ephemeral port)
PORT_TRIES = 3


def _serve(env: dict[str, str], home: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``compozy serve`` on a free port, advertising it; its stderr in ``home``/serve.log
    (this start's only)."""
    url = f"http://127.0.0.1:{_free_port()}"
    with (home / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [COMPOZY, "serve", "--port", url.rsplit(":", 1)[1], "--no-uds", "--advertise", url],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    return process, url


def _ready(
    daemon: tuple[subprocess.Popen[bytes], str], env: dict[str, str], home: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """``daemon`` once it answers, or one started again on another port when its port was
    taken; exits with the daemon's stderr when it does not start."""
    for attempt in range(1, PORT_TRIES + 1):
        if _answers(*daemon):
            return daemon
        taken = b"Address already in use" in (home / "serve.log").read_bytes()
        if not taken or attempt == PORT_TRIES:
            break
        daemon = _serve(env, home)
    if daemon[0].poll() is None:
        daemon[0].kill()
        daemon[0].wait()
    told = (home / "serve.log").read_text(errors="replace")[-2000:]
    raise SystemExit(f"compozy serve at {daemon[1]} did not start:\n{told}")


def _answers(process: subprocess.Popen[bytes], url: str) -> bool:
    deadline = time.monotonic() + 60
    with httpx2.Client(base_url=url, trust_env=False, timeout=5) as http:
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(httpx2.TransportError):
                if http.get("/api/health").status_code == 200:
                    return True
            time.sleep(0.1)
    return False


async def _load(
    urls: list[str], session_id: str, clients: int, seconds: float, operation: str = "status"
) -> list[float]:
    """Every client sends requests back to back, each to the next daemon, until ``seconds``
    have passed (each at least one, however slow the machine); latencies (s). ``status``
    reads one session; ``create`` makes a session (no agent) per call."""
    latencies: list[float] = []
    stop = time.monotonic() + seconds
    turn = iter(range(10**9))
    limits = httpx2.Limits(max_connections=clients * len(urls))
    async with httpx2.AsyncClient(trust_env=False, timeout=30, limits=limits) as http:

        async def client() -> None:
            while True:
                url = urls[next(turn) % len(urls)]
                began = time.perf_counter()
                if operation == "create":
                    response = await http.post(f"{url}/api/sessions", json=CREATE)
                else:
                    response = await http.get(f"{url}/api/sessions/{session_id}")
                latencies.append(time.perf_counter() - began)
                if response.status_code != EXPECTED[operation]:
                    raise SystemExit(f"session_{operation} answered {response.status_code}")
                if time.monotonic() >= stop:
                    break

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


#: a session_create call's body (no provider: no agent is bound) and each call's success
CREATE = {"agent_name": "bench"}
EXPECTED = {"status": 200, "create": 201}


def _run(
    operation: str,
    running: list[tuple[subprocess.Popen[bytes], str]],
    session_id: str,
    clients: int,
    seconds: float,
    postmaster: int | None,
) -> dict[str, Any]:
    """One timed run of ``operation``: its figures and the CPU each process used."""
    urls = [url for _, url in running]
    before = [_cpu_seconds(process.pid) for process, _ in running]
    server_before = _server_cpu(postmaster)
    client_before = _client_cpu()
    began = time.perf_counter()
    latencies = asyncio.run(_load(urls, session_id, clients, seconds, operation))
    wall = time.perf_counter() - began
    used = [_cpu_seconds(p.pid) - b for (p, _), b in zip(running, before, strict=True)]
    return {
        "operation": f"session_{operation}",
        "daemons": len(running),
        "clients": clients,
        "calls": len(latencies),
        "calls_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "wall_s": round(wall, 2),
        "daemon_cpu_s": [round(value, 2) for value in used],
        "postgres_cpu_s": round(_server_cpu(postmaster) - server_before, 2),
        "client_cpu_s": round(_client_cpu() - client_before, 2),
    }


def measure_calls(
    count: int, clients: int, seconds: float, store: Store | None = None, idle_s: float = IDLE_S
) -> list[dict[str, Any]]:
    """session_status, then session_create, served by ``count`` daemons on a new store."""
    store_url = store.new_database() if store is not None else None
    postmaster = store.postmaster if store is not None else None
    with (
        tempfile.TemporaryDirectory(prefix="cz-cluster-") as scratch,
        daemons(Path(scratch), count, store_url) as running,
    ):
        return _calls_on(running, clients, seconds, postmaster, idle_s)


def _calls_on(
    running: list[tuple[subprocess.Popen[bytes], str]],
    clients: int,
    seconds: float,
    postmaster: int | None,
    idle_s: float,
) -> list[dict[str, Any]]:
    """session_status, then session_create, served by the ``running`` daemons."""
    urls = [url for _, url in running]
    with httpx2.Client(base_url=urls[0], trust_env=False, timeout=30) as http:
        made = http.post("/api/sessions", json=CREATE).json()
    session_id = made["session"]["id"]
    asyncio.run(_load(urls, session_id, clients, min(1.0, seconds)))  # warm-up
    # what a daemon costs idle (its poll of the store), per second
    idle = [_cpu_seconds(process.pid) for process, _ in running]
    time.sleep(idle_s)
    idle = [_cpu_seconds(p.pid) - b for (p, _), b in zip(running, idle, strict=True)]
    rows = [
        _run(operation, running, session_id, clients, seconds, postmaster)
        for operation in ("status", "create")
    ]
    rows[0]["idle_daemon_cpu_ms_per_s"] = round(max(idle) / idle_s * 1000, 1)
    return rows


def measure_quick(
    clients: int, seconds: float, lease: int, store: Store | None, idle_s: float
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``--quick``: the same rows and failover from three daemons started once (the full run
    starts 1, then 3, then 2 on a new store each; a daemon's start and stop costs about a
    second of CPU, which the bench tier pays on every run). The first serves the 1-daemon
    rows, all three the 3-daemon rows; the third is stopped before the failover, which the
    first two play as the full run's pair does."""
    store_url = store.new_database() if store is not None else None
    postmaster = store.postmaster if store is not None else None
    with (
        tempfile.TemporaryDirectory(prefix="cz-cluster-") as scratch,
        daemons(Path(scratch), 3, store_url, COMPOZY_LEASE_SECONDS=str(lease)) as running,
    ):
        calls = [
            row
            for count in (1, 3)
            for row in _calls_on(running[:count], clients, seconds, postmaster, idle_s)
        ]
        third = running[2][0]
        third.terminate()
        third.wait(timeout=20)
        return calls, _failover_on(running[:2], lease)


class Store:
    """A PostgreSQL server for the runs (durable settings: it measures the flushes), a new
    database for each."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.postmaster = int((server.data / "postmaster.pid").read_text().split()[0])

    def new_database(self) -> str:
        url: str = self.server.create_database("cluster")
        return url


@contextlib.contextmanager
def store_of(engine: str) -> Iterator[Store | None]:
    """``None`` for SQLite; else a PostgreSQL server started for the run, stopped after it."""
    if engine == "sqlite":
        yield None
        return
    from tests.pg import started

    try:
        with started(durable=True) as server:
            yield Store(server)
    except RuntimeError as exc:
        raise SystemExit(f"no PostgreSQL: {exc}") from exc


def measure_failover(lease: int, store: Store | None = None) -> dict[str, Any]:
    store_url = store.new_database() if store is not None else None
    with (
        tempfile.TemporaryDirectory(prefix="cz-cluster-") as scratch,
        daemons(Path(scratch), 2, store_url, COMPOZY_LEASE_SECONDS=str(lease)) as running,
    ):
        return _failover_on(running, lease)


def _failover_on(running: list[tuple[subprocess.Popen[bytes], str]], lease: int) -> dict[str, Any]:
    """A turn cut off by kill -9 of the first daemon, the next one run by the second."""
    (owner, first), (_, second) = running
    with httpx2.Client(trust_env=False, timeout=lease + 60) as http:
        made = http.post(
            f"{first}/api/sessions", json={"agent_name": "bench", "provider": "echo"}
        ).json()
        sid = made["session"]["id"]
        http.post(f"{first}/api/sessions/{sid}/prompt", json={"prompt": "hi", "wait": True})
        http.post(f"{first}/api/sessions/{sid}/prompt", json={"prompt": "slow 30"})
        deadline = time.monotonic() + 30
        while True:
            turns = http.get(f"{first}/api/sessions/{sid}/history").json()["turns"]
            if turns[-1]["status"] == "running":
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"the slow turn never ran: {turns[-1]['status']}")
            time.sleep(0.05)
        killed = time.monotonic()
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        done = http.post(
            f"{second}/api/sessions/{sid}/prompt",
            json={"prompt": "after", "wait": True, "timeout_seconds": lease + 50},
        ).json()
        failover = time.monotonic() - killed
        turns = http.get(f"{second}/api/sessions/{sid}/history").json()["turns"]
    return {
        "lease_seconds": lease,
        "failover_s": round(failover, 2),
        "next_turn": done["turn"]["status"],
        "cut_off_turn": [turns[1]["status"], turns[1]["stop_reason"]],
    }


def report(result: dict[str, Any]) -> str:
    rows = [
        [
            r["operation"],
            r["daemons"],
            r["clients"],
            r["calls_per_s"],
            r["p50_ms"],
            r["p99_ms"],
            " + ".join(str(v) for v in r["daemon_cpu_s"]),
            r["postgres_cpu_s"],
            r["client_cpu_s"],
            r["wall_s"],
            r.get("idle_daemon_cpu_ms_per_s", ""),
        ]
        for r in result["calls"]
    ]
    out = f"store: {result['store']}\n" + table(
        [
            "operation",
            "daemons",
            "clients",
            "calls/s",
            "p50 ms",
            "p99 ms",
            "daemon CPU s",
            "postgres CPU s",
            "client CPU s",
            "wall s",
            "idle CPU ms/s",
        ],
        rows,
    )
    failover = result["failover"]
    out += (
        f"\nfailover (lease {failover['lease_seconds']} s): {failover['failover_s']} s from "
        f"kill -9 to the next completed turn ({failover['next_turn']}); the turn cut off: "
        f"{' / '.join(failover['cut_off_turn'])}\n"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--lease", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the bench tier)")
    args = parser.parse_args(argv)
    idle_s = IDLE_S
    if args.quick:
        # a lease of 5 s, as the failover test's (tests/cluster): with 2 s, once in a whole
        # test run on a loaded machine (PostgreSQL flushing each commit), the first daemon's
        # first turn had not answered after 62 s (its renewals starved of CPU, it seems)
        args.clients, args.seconds, args.lease, idle_s = 4, 0.5, 5, QUICK_IDLE_S
        if args.store == "sqlite":
            # SQLite has no server whose CPU a run must show (PostgreSQL's, counted in clock
            # ticks, must be over 0: its runs keep 0.5 s on a loaded machine)
            args.seconds = 0.2
    info = machine()
    with store_of(args.store) as store:
        if args.quick:
            calls, failover = measure_quick(args.clients, args.seconds, args.lease, store, idle_s)
        else:
            calls = [
                row
                for n in (1, 3)
                for row in measure_calls(n, args.clients, args.seconds, store, idle_s)
            ]
            failover = measure_failover(args.lease, store)
    result = {
        "store": args.store,
        "calls": calls,
        "reads": [row for row in calls if row["operation"] == "session_status"],
        "failover": failover,
    }
    if args.json:
        emit_json({"machine": info, "cluster": result})
    else:
        print(machine_line(info))
        print(report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
