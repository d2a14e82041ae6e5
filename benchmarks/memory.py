"""Memory: the resident set (RSS) of a ``compozy serve`` daemon, idle, per 1,000 stored
sessions and per bound ``echo`` session.

The daemon runs as a user runs it (``compozy serve --no-tcp`` on a scratch ``COMPOZY_HOME``);
requests go through its socket with the Host API client the CLI uses. Figures are read from
``/proc/PID/status`` (``VmRSS``), after a short settle, in this order:

1. idle: the daemon started and answered one request of its HTTP API;
2. MCP: after one MCP client initialized a session on its ``/mcp`` (the endpoint, and the MCP
   SDK with it, is loaded by the first MCP request);
3. stored: after ``--sessions`` sessions were created (not bound: no agent runs), the growth
   per 1,000;
4. bound: after ``--bound`` sessions on the shipped ``echo`` agent each ran one prompt (an agent
   process each), the daemon's growth per session and the RSS of one agent process (its
   children, summed, divided by their number).

    python -m benchmarks.memory [--sessions 1000] [--bound 5] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2

from benchmarks.common import (
    emit_json,
    initialize_request,
    machine,
    machine_line,
    scratch_env,
    serve_on_socket,
    table,
)
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.remote import RemoteHost
from compozy_mcp.hostapi.target import parse_target
from compozy_mcp.hostapi.wire import MCP_PATH
from compozy_mcp.runtime import _procfs as procfs

SETTLE_S = 1.0


def rss_kib(pid: int) -> int:
    """The resident set of process ``pid``, in KiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


async def _initialize_mcp(socket_path: Path) -> None:
    """One MCP session initialized on the daemon's ``/mcp`` (over its socket)."""
    transport = httpx2.AsyncHTTPTransport(uds=str(socket_path))
    async with httpx2.AsyncClient(
        transport=transport, base_url="http://localhost", trust_env=False, timeout=60
    ) as client:
        answer = await client.post(
            MCP_PATH,
            json=initialize_request("benchmarks.memory"),
            headers={"Accept": "application/json, text/event-stream"},
        )
        answer.raise_for_status()


async def _load(
    host: RemoteHost, daemon: int, socket_path: Path, sessions: int, bound: int
) -> dict[str, Any]:
    await host.call(ops.LIST_SESSIONS, {"limit": 1})
    await asyncio.sleep(SETTLE_S)
    idle = rss_kib(daemon)
    await _initialize_mcp(socket_path)
    await asyncio.sleep(SETTLE_S)
    serving_mcp = rss_kib(daemon)
    for _ in range(sessions):
        await host.call(ops.CREATE_SESSION, {"agent_name": "general"})
    await asyncio.sleep(SETTLE_S)
    stored = rss_kib(daemon)
    for _ in range(bound):
        made = await host.call(
            ops.INVOKE,
            {
                "tool_id": "compozy__session_create",
                "input": {"agent_name": "bench", "provider": "echo"},
            },
        )
        sid = made["result"]["structured"]["session"]["id"]
        await host.call(
            ops.INVOKE,
            {
                "tool_id": "compozy__session_prompt",
                "input": {"session_id": sid, "prompt": "hello", "wait": True},
            },
        )
    await asyncio.sleep(SETTLE_S)
    after = rss_kib(daemon)
    agents = list(procfs.children(daemon))
    agent_kib = sum(rss_kib(pid) for pid in agents)
    return {
        "idle_mib": round(idle / 1024, 1),
        "mcp_mib": round(serving_mcp / 1024, 1),
        "sessions": sessions,
        "per_1000_stored_mib": round((stored - serving_mcp) / 1024 * 1000 / max(1, sessions), 2),
        "bound": bound,
        "agent_processes": len(agents),
        "daemon_per_bound_mib": round((after - stored) / 1024 / max(1, bound), 2),
        "agent_process_mib": round(agent_kib / 1024 / max(1, len(agents)), 1),
        "after_mib": round(after / 1024, 1),
    }


def measure(sessions: int, bound: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compozy-memory-") as scratch:
        home = Path(scratch) / "home"
        env = scratch_env(home, scratch)
        daemon = serve_on_socket(env, home)
        try:
            host = RemoteHost(parse_target(f"unix:{home / 'compozy.sock'}"))

            async def run() -> dict[str, Any]:
                try:
                    return await _load(host, daemon.pid, home / "compozy.sock", sessions, bound)
                finally:
                    await host.aclose()

            figures = asyncio.run(run())
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    return {"memory": figures, "machine": machine()}


def report(result: dict[str, Any]) -> str:
    f = result["memory"]
    rows = [
        ("daemon idle (MiB)", f["idle_mib"]),
        ("daemon after its first MCP session (MiB)", f["mcp_mib"]),
        (f"growth per 1,000 stored sessions (MiB, {f['sessions']} made)", f["per_1000_stored_mib"]),
        (f"growth per bound echo session (MiB, {f['bound']} bound)", f["daemon_per_bound_mib"]),
        (f"one echo agent process (MiB, {f['agent_processes']} running)", f["agent_process_mib"]),
        ("daemon at the end (MiB)", f["after_mib"]),
    ]
    lines = [
        "Memory: resident set (VmRSS) of compozy serve",
        "",
        table(("figure", "value"), rows),
        "",
        machine_line(result["machine"]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__)
    parser.add_argument("--sessions", type=int, default=1000, help="sessions stored (1000)")
    parser.add_argument("--bound", type=int, default=5, help="echo sessions bound (5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quick", action="store_true", help="20 sessions, 1 bound (tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.bound = 20, 1
    result = measure(max(0, args.sessions), max(0, args.bound))
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
