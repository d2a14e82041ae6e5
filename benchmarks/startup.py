"""Start-up: how long a ``compozy`` command takes from ``exec`` to exit, as a user runs it.

Each command runs as a process of its own (the console script of this checkout's venv) on a
scratch ``COMPOZY_HOME`` that already holds a store and one session, so that a figure is the
cost of starting Python, importing what the command needs, opening the store and printing:

- ``compozy --help``: argument parsing alone;
- ``compozy tool list``: the registry, the store and a table;
- ``compozy tool invoke compozy__session_status --input ...``: one native tool call;
- the same and ``compozy session list`` / ``session status`` against a daemon
  (``compozy serve`` on the scratch home: the CLI finds it on its socket), the normal case:
  one request and the printing of its answer;
- the echo agent, as a session starts it: its ACP ``initialize`` answered, then its input ends
  and it exits (most of it is importing the ACP SDK, which a daemon pays too when it starts
  its first agent).

Each row also counts the modules the command imports (``-X importtime``, one run).

A figure is the median of ``--runs`` runs after one warm-up (the first run of a fresh home
creates the store). ``-X importtime`` shows where the time goes:
``python -X importtime -m compozy_mcp tool list 2>&1 | sort -t'|' -k2 -n | tail``.

    python -m benchmarks.startup [--runs N] [--json] [--no-daemon] [--quick]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    emit_json,
    machine,
    machine_line,
    median,
    percentile,
    scratch_env,
    serve_on_socket,
    table,
)

COMPOZY = Path(sys.executable).with_name("compozy")
SESSION = "sess-startup"
STATUS_INPUT = '{"session_id":"' + SESSION + '"}'
COMMANDS: dict[str, tuple[str, ...]] = {
    "compozy --version": ("--version",),
    "compozy --help": ("--help",),
    "compozy tool list": ("tool", "list"),
    "compozy tool invoke": (
        "tool",
        "invoke",
        "compozy__session_status",
        "--input",
        STATUS_INPUT,
    ),
}
#: run while ``compozy serve`` listens on the scratch home's socket
DAEMON_COMMANDS: dict[str, tuple[str, ...]] = {
    "daemon: compozy tool list": ("tool", "list"),
    "daemon: compozy tool invoke": (
        "tool",
        "invoke",
        "compozy__session_status",
        "--input",
        STATUS_INPUT,
    ),
    "daemon: compozy session list": ("session", "list"),
    "daemon: compozy session status": ("session", "status", SESSION),
}


#: an agent process: the echo agent, given an ACP ``initialize`` and then the end of its input
AGENT_COMMANDS: dict[str, tuple[str, ...]] = {
    "echo agent: initialize": (sys.executable, "-m", "compozy_mcp.echo_agent"),
}
INITIALIZE = (
    '{"jsonrpc":"2.0","id":0,"method":"initialize",'
    '"params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
)


def _argv(args: tuple[str, ...]) -> tuple[list[str], str | None]:
    """The command line of a row (a compozy command, or an agent's whole command) and the
    input it is given."""
    if args[0] == sys.executable:
        return list(args), INITIALIZE
    return [str(COMPOZY), *args], None


def _run(args: tuple[str, ...], env: dict[str, str]) -> tuple[float, str]:
    """One run of the command: its wall time (s) and what it wrote on stderr."""
    argv, given = _argv(args)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, input=given, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    if given is not None and '"result"' not in done.stdout:
        raise SystemExit(f"{' '.join(argv)} did not answer initialize: {done.stdout.strip()}")
    return elapsed, done.stderr


def _imported(stderr: str) -> int:
    """How many modules a run under ``-X importtime`` imported (its header line aside)."""
    return sum(1 for line in stderr.splitlines() if line.startswith("import time:")) - 1


def _modules(args: tuple[str, ...], env: dict[str, str]) -> int:
    """How many modules one run of the command imports."""
    argv, given = _argv(args)
    python = [sys.executable, "-X", "importtime"]
    argv = [*python, *argv[1:]] if given is not None else [*python, "-m", "compozy_mcp", *args]
    done = subprocess.run(argv, env=env, input=given, capture_output=True, text=True, check=False)
    return _imported(done.stderr)


def _figures(
    commands: dict[str, tuple[str, ...]], env: dict[str, str], runs: int, *, quick: bool
) -> dict[str, Any]:
    """``quick``: no warm-up, and the modules counted from the timed run itself (run under
    ``PYTHONPROFILEIMPORTTIME``, which adds a little to its time) instead of a run of their
    own: a process per command instead of three."""
    figures: dict[str, Any] = {}
    counting = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
    for label, args in commands.items():
        if quick:
            elapsed, stderr = _run(args, counting)
            times, modules = [elapsed * 1000], _imported(stderr)
        else:
            _run(args, env)  # warm-up: the OS file cache, the store's first open
            times = [_run(args, env)[0] * 1000 for _ in range(runs)]
            modules = _modules(args, env)
        figures[label] = {
            "median_ms": round(median(times), 1),
            "p90_ms": round(percentile(times, 0.9), 1),
            "min_ms": round(min(times), 1),
            "modules": modules,
            "runs": len(times),
        }
    return figures


def measure(runs: int, *, with_daemon: bool = True, quick: bool = False) -> dict[str, Any]:
    """``quick``: one run per command, which is timed and counted (see :func:`_figures`)."""
    with tempfile.TemporaryDirectory(prefix="compozy-startup-") as scratch:
        home = Path(scratch) / "home"
        env = scratch_env(home, scratch)
        _run(("session", "create", "--agent", "general", "--id", SESSION), env)
        figures = _figures(COMMANDS | AGENT_COMMANDS, env, runs, quick=quick)
        if with_daemon:
            daemon = serve_on_socket(env, home)
            try:
                figures |= _figures(DAEMON_COMMANDS, env, runs, quick=quick)
            finally:
                daemon.terminate()
                daemon.wait(timeout=30)
    return {"startup": figures, "machine": machine()}


def report(result: dict[str, Any]) -> str:
    rows = [
        (label, f["median_ms"], f["p90_ms"], f["min_ms"], f["modules"])
        for label, f in result["startup"].items()
    ]
    lines = [
        "Start-up: wall time of one command, exec to exit (ms)",
        "",
        table(("command", "median", "p90", "min", "modules"), rows),
        "",
        machine_line(result["machine"]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--no-daemon", action="store_true", help="only the in-process commands (no compozy serve)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one run per command, no warm-up, its imports counted from that run (tests)",
    )
    args = parser.parse_args(argv)
    result = measure(max(1, args.runs), with_daemon=not args.no_daemon, quick=args.quick)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
