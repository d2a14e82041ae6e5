"""Prompt round trip on the ``echo`` agent: what a turn costs through compozy, as a ratio to a
direct ACP client on the same agent.

Rows (each one echo agent process, bound once, then N sequential prompts of a short text):

(acp)     the ACP SDK's own client on ``python -m compozy_mcp.echo_agent``: ``session/prompt``
          to its end (the floor: the agent and the protocol);
(runtime) ``compozy__session_prompt`` with ``wait`` through ``Dispatcher.call`` in this process:
          the runtime's cost (queue in the store, the turn and its events written, the record);
(mcp)     the same call over MCP (Streamable HTTP, 2026-07-28) to ``compozy serve``: what an agent
          or tool using the daemon pays.

Each row reports prompts/s, median and p95 latency, and its median latency as a ratio to (acp).
The (mcp) row's daemon is fresh: while its first prompt binds the agent (the process started,
the ACP SDK imported), a thread asks its ``/healthz`` every 5 ms, and the longest answer is
reported: how long the daemon's event loop was held meanwhile (other requests wait that long).
Then the warm time to first token through the daemon against a bare ACP client, for echo and
each real agent that is installed (:mod:`benchmarks.first_token`).

    python -m benchmarks.prompt_roundtrip [--json] [--quick] [--no-first-token]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table

ROWS = {
    "acp": "direct ACP client (the agent and the protocol)",
    "runtime": "compozy__session_prompt, in-process dispatch",
    "mcp": "compozy__session_prompt, MCP over HTTP to compozy serve",
}
PROMPT = "hello from the benchmark"


async def _timed(prompts: int, once: Callable[[], Awaitable[Any]]) -> list[float]:
    await once()  # warm-up: the first turn pays for lazy imports and caches
    times = []
    for _ in range(prompts):
        started = time.perf_counter()
        await once()
        times.append(time.perf_counter() - started)
    return times


async def acp_row(prompts: int) -> list[float]:
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    class Client:
        async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
            return None

        async def request_permission(self, *args: Any, **kw: Any) -> Any:
            raise NotImplementedError

    client: Any = Client()
    command = [sys.executable, "-m", "compozy_mcp.echo_agent"]
    async with spawn_agent_process(client, *command) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])

        async def once() -> None:
            await conn.prompt(session_id=session.session_id, prompt=[text_block(PROMPT)])

        return await _timed(prompts, once)


async def runtime_row(prompts: int, home: Path) -> list[float]:
    from compozy_mcp.assembly import open_app
    from compozy_mcp.config import Settings

    (home / "ws").mkdir(parents=True, exist_ok=True)
    settings = Settings(home=home / "runtime", default_workspace_path=home / "ws")
    with open_app(settings) as app:
        try:
            made = await app.dispatcher.call(
                "compozy__session_create", {"agent_name": "bench", "provider": "echo"}
            )
            sid = made.structured["session"]["id"]
            args = {"session_id": sid, "prompt": PROMPT, "wait": True}

            async def once() -> None:
                done = await app.dispatcher.call("compozy__session_prompt", args)
                assert done.structured["turn"]["status"] == "completed"

            return await _timed(prompts, once)
        finally:
            await app.shutdown()


def _start_daemon(
    home: Path, extra_env: dict[str, str] | None = None, *, uds: bool = False
) -> tuple[subprocess.Popen[str], str]:
    """``compozy serve`` on a free port; with ``uds`` its socket too, which the MCP
    servers of the agents it runs relay to (without it they serve in-process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env.update(extra_env or {})
    env["COMPOZY_HOME"] = str(home / "daemon")
    env["COMPOZY_WORKSPACE"] = str(home / "ws")
    compozy = Path(sys.executable).parent / "compozy"
    process = subprocess.Popen(
        [str(compozy), "serve", "--port", "0", *(() if uds else ("--no-uds",))],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            return process, found.group(1)
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError("compozy serve did not start")


@dataclass(slots=True)
class HealthWaits:
    """What a thread asking ``/healthz`` again and again saw: how many answers, the longest."""

    answers: int = 0
    longest_s: float = 0.0


@contextlib.contextmanager
def health_waits(url: str) -> Iterator[HealthWaits]:
    """While the block runs, ask ``url``'s ``/healthz`` every 5 ms (at least once) in a thread.
    The daemon answers it at once from its event loop: a long answer is the loop held."""
    seen = HealthWaits()
    done = threading.Event()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ask() -> None:
        while True:
            started = time.perf_counter()
            with opener.open(f"{url}/healthz", timeout=60) as answer:
                answer.read()
            seen.answers += 1
            seen.longest_s = max(seen.longest_s, time.perf_counter() - started)
            if done.wait(0.005):
                return

    thread = threading.Thread(target=ask, name="healthz", daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join(timeout=120)


async def mcp_row(prompts: int, home: Path) -> tuple[list[float], HealthWaits]:
    from mcp.client import Client

    (home / "ws").mkdir(parents=True, exist_ok=True)
    process, url = _start_daemon(home)
    try:
        async with Client(f"{url}/mcp") as client:
            made = await client.call_tool(
                "compozy__session_create", {"agent_name": "bench", "provider": "echo"}
            )
            sid = made.structured_content["session"]["id"]
            args = {"session_id": sid, "prompt": PROMPT, "wait": True}

            async def once() -> None:
                done = await client.call_tool("compozy__session_prompt", args)
                assert not done.is_error, done

            with health_waits(url) as first_bind:
                await once()  # the daemon's first bind
            return await _timed(prompts, once), first_bind
    finally:
        process.terminate()
        process.wait(timeout=30)


def _row(name: str, times: list[float], floor: float) -> dict[str, Any]:
    middle = median(times)
    return {
        "row": name,
        "prompts": len(times),
        "prompts_per_s": round(len(times) / sum(times), 1),
        "latency_median_ms": round(middle * 1000, 2),
        "latency_p95_ms": round(percentile(times, 0.95) * 1000, 2),
        "ratio_to_acp": round(middle / floor, 2),
    }


async def measure(prompts: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows, and what the daemon's event loop did during its first bind."""
    with tempfile.TemporaryDirectory(prefix="cz-bench-") as scratch:
        home = Path(scratch)
        acp = await acp_row(prompts)
        runtime = await runtime_row(prompts, home)
        mcp, first_bind = await mcp_row(prompts, home)
    timings = {"acp": acp, "runtime": runtime, "mcp": mcp}
    floor = median(timings["acp"])
    bind = {
        "healthz_answers": first_bind.answers,
        "longest_healthz_ms": round(first_bind.longest_s * 1000, 2),
    }
    return [_row(name, times, floor) for name, times in timings.items()], bind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="a few prompts (for the tests)")
    parser.add_argument("--prompts", type=int, default=200, help="prompts per row")
    parser.add_argument(
        "--no-first-token",
        action="store_true",
        help="skip the time to first token (its own benchmark, benchmarks.first_token, has it)",
    )
    args = parser.parse_args(argv)
    prompts = 5 if args.quick else args.prompts
    rows, first_bind = asyncio.run(measure(prompts))
    # warm time to first token, pushed through the daemon: echo always, the real agents when
    # installed (issue 21)
    from benchmarks import first_token

    firsts: list[dict[str, Any]] = []
    if not args.no_first_token:
        firsts = asyncio.run(
            first_token.measure(3, ["echo"], one_daemon=True)
            if args.quick
            else first_token.measure(20)
        )
    info = machine()
    if args.json:
        emit_json(
            {
                "machine": info,
                "prompts": prompts,
                "results": rows,
                "first_bind": first_bind,
                "first_token": firsts,
            }
        )
        return 0
    print(machine_line(info))
    print(f"prompt round trip on the echo agent, {prompts} sequential prompts per row\n")
    print(
        table(
            ["row", "what", "prompts/s", "median ms", "p95 ms", "x acp"],
            [
                [
                    r["row"],
                    ROWS[r["row"]],
                    r["prompts_per_s"],
                    r["latency_median_ms"],
                    r["latency_p95_ms"],
                    r["ratio_to_acp"],
                ]
                for r in rows
            ],
        )
    )
    print(
        f"\nthe (mcp) daemon's first bind: longest /healthz answer meanwhile "
        f"{first_bind['longest_healthz_ms']} ms ({first_bind['healthz_answers']} answers)"
    )
    if firsts:
        print()
        print(first_token.report(firsts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
