"""Start-up: how long a ``compozy`` command takes from ``exec`` to exit, as a user runs it.

Each command runs as a process of its own (the console script of this checkout's venv) on a
scratch ``COMPOZY_HOME`` that already holds a store and one session, so that a figure is the
cost of starting Python, importing what the command needs, opening the store and printing:

- ``compozy --help``: argument parsing alone;
- ``compozy tool list``: the registry, the store and a table;
- ``compozy tool invoke compozy__session_status --input ...``: one native tool call.

A figure is the median of ``--runs`` runs after one warm-up (the first run of a fresh home
creates the store). ``-X importtime`` shows where the time goes:
``python -X importtime -m compozy_mcp tool list 2>&1 | sort -t'|' -k2 -n | tail``.

    python -m benchmarks.startup [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table

COMPOZY = Path(sys.executable).with_name("compozy")
SESSION = "sess-startup"
COMMANDS: dict[str, tuple[str, ...]] = {
    "compozy --help": ("--help",),
    "compozy tool list": ("tool", "list"),
    "compozy tool invoke": (
        "tool",
        "invoke",
        "compozy__session_status",
        "--input",
        '{"session_id":"' + SESSION + '"}',
    ),
}


def _run(args: tuple[str, ...], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [str(COMPOZY), *args], env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"compozy {' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compozy-startup-") as scratch:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("COMPOZY_") and key != "NO_COLOR"
        }
        env.update(COMPOZY_HOME=str(Path(scratch) / "home"), COMPOZY_WORKSPACE=scratch)
        _run(("session", "create", "--agent", "general", "--id", SESSION), env)
        figures: dict[str, Any] = {}
        for label, args in COMMANDS.items():
            _run(args, env)  # warm-up: the OS file cache, the store's first open
            times = [_run(args, env) * 1000 for _ in range(runs)]
            figures[label] = {
                "median_ms": round(median(times), 1),
                "p90_ms": round(percentile(times, 0.9), 1),
                "min_ms": round(min(times), 1),
                "runs": runs,
            }
    return {"startup": figures, "machine": machine()}


def report(result: dict[str, Any]) -> str:
    rows = [
        (label, f["median_ms"], f["p90_ms"], f["min_ms"]) for label, f in result["startup"].items()
    ]
    lines = [
        "Start-up: wall time of one command, exec to exit (ms)",
        "",
        table(("command", "median", "p90", "min"), rows),
        "",
        machine_line(result["machine"]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    result = measure(max(1, args.runs))
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
