"""What every benchmark script shares: tables, statistics, machine facts and JSON output."""

from __future__ import annotations

import gc
import importlib.metadata
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil

REPO_ROOT = Path(__file__).resolve().parent.parent
#: packages whose versions decide the figures
PACKAGES = ("compozy-mcp", "mcp", "mcp-types", "pydantic", "orjson", "httpx2", "uvicorn")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: text columns left-aligned, numbers right-aligned."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [
        all(isinstance(row[i], int | float) for row in rows) if rows else False
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if numeric[i] else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(headers)), rule, *(line(row) for row in cells)])


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile by linear interpolation (``0.95`` is p95)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def spread(values: Sequence[float]) -> float:
    """(max - min) / median: how far apart repeated sets landed."""
    mid = median(values)
    return (max(values) - min(values)) / mid if mid else 0.0


@contextmanager
def clients_out_of_the_collectors_reach() -> Iterator[Callable[[], object]]:
    """Once a benchmark's clients are warm: what they hold lives for the whole run, in the one
    process that measures every row. Left to the cyclic collector, each full collection walks
    all of it (in ``http_load``: 58 in a run of four rows, up to 155 ms each) and every call in
    flight on the row that happens to be running waits it out; frozen, it is no longer walked.
    Yields what to call between sets, outside their timed window: it collects what the last
    set left, so that no set pays for another's garbage."""
    gc.collect()
    gc.freeze()
    try:
        yield gc.collect
    finally:
        gc.unfreeze()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict[str, Any]:
    """Where the figures were taken: CPUs, CPU model, load, Python and package versions."""
    versions: dict[str, str] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "nproc": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_average": _load(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": versions,
    }


def machine_line(info: dict[str, Any]) -> str:
    packages = ", ".join(f"{k} {v}" for k, v in info["packages"].items())
    return (
        f"machine: {info['nproc']} CPU(s), {info['cpu_model']}, load {info['load_average']}; "
        f"Python {info['python']}; {packages}"
    )


def emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(jsonutil.dumps_pretty(payload) + "\n")


def scratch_env(home: Path, workspace: str) -> dict[str, str]:
    """This environment without any ``COMPOZY_`` setting, on a scratch home and workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_") and k != "NO_COLOR"}
    env.update(COMPOZY_HOME=str(home), COMPOZY_WORKSPACE=workspace)
    return env


def serve_on_socket(env: dict[str, str], home: Path) -> subprocess.Popen[bytes]:
    """``compozy serve --no-tcp`` (this venv's) on ``home``'s socket, once it answers there;
    the caller terminates it."""
    daemon = subprocess.Popen(
        [str(Path(sys.executable).with_name("compozy")), "serve", "--no-tcp"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    path = home / "compozy.sock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and daemon.poll() is None:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            return daemon
        except OSError:
            time.sleep(0.1)
        finally:
            probe.close()
    daemon.kill()
    daemon.wait()
    raise SystemExit("compozy serve did not start")


def initialize_request(client: str) -> dict[str, Any]:
    """A 2025-11-25 MCP client's first request (JSON-RPC id 1), from ``client``."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }
