"""Warm time to first token: from a prompt sent to the first message chunk seen, on a bound
agent, through a daemon against a bare ACP client on the same agent (issue 21, item 6: live
events are pushed; target: at most 20 ms over the bare client).

Rows, for ``echo`` always and for Claude, Codex and Gemini when their adapters are installed
(``make node-deps``), each against its fake model API (tests/fakes):

(acp)     the ACP SDK's client on the agent's own command: ``session/prompt`` sent, the first
          ``agent_message_chunk`` notification received;
(daemon)  ``compozy serve``: the session's event stream followed (``GET .../events``, Server-Sent
          Events), ``POST .../prompt`` sent, the first ``agent_message_chunk`` event received;
          the agent without MCP servers, as the bare client runs it (the overhead is compozy's);
          then the same with compozy's MCP server given to the agent, as sessions run it (some
          agents list its tools at every turn: their cost, not the event path's).

    python -m benchmarks.first_token [--json] [--quick] [--prompts N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table
from benchmarks.prompt_roundtrip import _start_daemon
from compozy_mcp.agents.definitions import BUILTINS

PROMPT = "hello, first token"
TARGET_MS = 20.0


def _agents() -> list[str]:
    from tests.fakes.agents import not_installed

    return ["echo"] if not_installed() else ["echo", "claude", "codex", "gemini"]


@contextlib.contextmanager
def _environment(name: str, scratch: Path) -> Iterator[dict[str, str]]:
    """The environment that runs agent ``name`` against its fake (which runs meanwhile)."""
    if name == "echo":
        yield {}
        return
    from tests.fakes.agents import AGENTS, BIN
    from tests.fakes.server import FakeModel

    agent = AGENTS[name]
    root = scratch / f"env-{name}"
    root.mkdir()
    with FakeModel(agent.api()) as fake:
        env = agent.environment(fake.url, root)
        env["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        yield env


async def bare_row(name: str, env: dict[str, str], cwd: Path, prompts: int) -> list[float]:
    """The agent without MCP servers (the daemon's row runs it so too: see below)."""
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    first = asyncio.Event()

    class Client:
        async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
            if getattr(update, "session_update", "") == "agent_message_chunk":
                first.set()

        async def request_permission(self, *args: Any, **kw: Any) -> Any:
            raise RuntimeError("the benchmark's prompt asks no permission")

    definition = BUILTINS[name]
    command = definition.command
    if name != "echo":  # the installed adapter, as the daemon finds it on PATH
        command = str(Path(env["PATH"].split(os.pathsep)[0]) / definition.command)
    client: Any = Client()
    environment = {**os.environ, **definition.env, **env}
    async with spawn_agent_process(
        client, command, *definition.args, env=environment, cwd=str(cwd)
    ) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        times = []
        for index in range(prompts + 1):  # the first is the warm-up
            first.clear()
            started = time.perf_counter()
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[text_block(PROMPT)])
            )
            await first.wait()
            if index:
                times.append(time.perf_counter() - started)
            await turn
        # some adapters (codex-acp) do not exit when stdin closes: end it here, while the
        # event loop can still close its pipes
        process.terminate()
        await process.wait()
        return times


async def _sse(client: Any, path: str, cursor: int) -> AsyncGenerator[dict[str, Any], None]:
    async with client.stream(
        "GET", path, params={"cursor": str(cursor)}, headers={"Accept": "text/event-stream"}
    ) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])


def _plain(name: str) -> str:
    """The provider that runs agent ``name`` without compozy's MCP server (as the bare client
    runs it), declared in the daemon's agents.yaml (:func:`_daemon`)."""
    return f"{name}-plain"


@contextlib.contextmanager
def _daemon(home: Path, env: dict[str, str], *, plain: str | None) -> Iterator[str]:
    """``compozy serve`` on a new home, its URL; with ``plain``, that agent's plain provider
    declared too."""
    (home / "ws").mkdir(parents=True)
    if plain is not None:
        definition = BUILTINS[plain]
        (home / "daemon").mkdir(mode=0o700)
        declared = {
            "command": definition.command,
            "args": list(definition.args),
            "env": dict(definition.env),
            "compozy_tools": False,
        }
        (home / "daemon" / "agents.yaml").write_text(
            json.dumps({"agents": {_plain(plain): declared}}), encoding="utf-8"
        )
    process, url = _start_daemon(home, extra_env=env)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


async def daemon_row(
    name: str, env: dict[str, str], scratch: Path, prompts: int, *, tools: bool
) -> list[float]:
    """``tools``: the agent has compozy's MCP server, as a session's agent normally does (the
    model is sent every tool, and some agents list them at each turn)."""
    home = scratch / f"daemon-{name}-{'tools' if tools else 'plain'}"
    with _daemon(home, env, plain=None if tools else name) as url:
        return await _through(url, name if tools else _plain(name), prompts)


async def _through(url: str, provider: str, prompts: int) -> list[float]:
    """The first token of each prompt to a new session of ``provider`` on the daemon."""
    import httpx2

    async with httpx2.AsyncClient(base_url=url, trust_env=False, timeout=120) as http:
        made = await http.post("/api/sessions", json={"agent_name": "bench", "provider": provider})
        sid = made.json()["session"]["id"]
        base = f"/api/sessions/{sid}"
        times = []
        for index in range(prompts + 1):  # the first binds the agent: the warm-up
            page = (await http.get(f"{base}/events", params={"limit": 500})).json()
            cursor = page["next_cursor"]
            while page["events"]:
                page = (await http.get(f"{base}/events", params={"cursor": cursor})).json()
                cursor = page["next_cursor"]
            stream = _sse(http, f"{base}/events", cursor)
            started = time.perf_counter()
            sent = asyncio.ensure_future(
                http.post(f"{base}/prompt", json={"prompt": PROMPT, "wait": True})
            )
            async for event in stream:
                if event["kind"] == "agent_message_chunk":
                    if index:
                        times.append(time.perf_counter() - started)
                    break
            await stream.aclose()
            await sent
        return times


async def both_daemon_rows(
    name: str, env: dict[str, str], scratch: Path, prompts: int
) -> tuple[list[float], list[float]]:
    """Both daemon rows, plain then with compozy's tools, on one daemon (``--quick``: a
    daemon's start and stop is about a second of CPU; the full run starts one per row so that
    neither row's agent runs beside the other's)."""
    with _daemon(scratch / f"daemon-{name}-both", env, plain=name) as url:
        return await _through(url, _plain(name), prompts), await _through(url, name, prompts)


def _figures(times: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(median(times) * 1000, 2),
        "p95_ms": round(percentile(times, 0.95) * 1000, 2),
    }


async def measure(
    prompts: int, agents: list[str] | None = None, *, one_daemon: bool = False
) -> list[dict[str, Any]]:
    """A row per agent (default: echo, and the real agents when installed); ``one_daemon``:
    both daemon rows of an agent on one daemon (:func:`both_daemon_rows`)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="cz-first-") as scratch_text:
        scratch = Path(scratch_text)
        for name in agents or _agents():
            with _environment(name, scratch) as env:
                cwd = scratch / f"ws-{name}"
                cwd.mkdir()
                bare = await bare_row(name, env, cwd, prompts)
                if one_daemon:
                    through, with_tools = await both_daemon_rows(name, env, scratch, prompts)
                else:
                    through = await daemon_row(name, env, scratch, prompts, tools=False)
                    with_tools = await daemon_row(name, env, scratch, prompts, tools=True)
            overhead = median(through) - median(bare)
            rows.append(
                {
                    "agent": name,
                    "prompts": prompts,
                    "acp": _figures(bare),
                    "daemon": _figures(through),
                    "overhead_ms": round(overhead * 1000, 2),
                    "target_met": overhead * 1000 <= TARGET_MS,
                    "daemon_with_compozy_tools": _figures(with_tools),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="three prompts per row, echo only, both daemon rows on one daemon",
    )
    parser.add_argument("--prompts", type=int, default=20, help="prompts per row")
    args = parser.parse_args(argv)
    agents = ["echo"] if args.quick else None
    rows = asyncio.run(measure(3 if args.quick else args.prompts, agents, one_daemon=args.quick))
    info = machine()
    if args.json:
        emit_json({"machine": info, "target_overhead_ms": TARGET_MS, "results": rows})
        return 0
    print(machine_line(info))
    print(report(rows))
    return 0


def report(rows: list[dict[str, Any]]) -> str:
    return "\n".join(
        [
            f"warm time to first token (target: at most {TARGET_MS:g} ms over the bare client)",
            "",
            _table(rows),
        ]
    )


def _table(rows: list[dict[str, Any]]) -> str:
    return table(
        [
            "agent",
            "acp median ms",
            "daemon median ms",
            "daemon p95 ms",
            "overhead ms",
            "met",
            "with compozy's tools ms",
        ],
        [
            [
                r["agent"],
                r["acp"]["median_ms"],
                r["daemon"]["median_ms"],
                r["daemon"]["p95_ms"],
                r["overhead_ms"],
                "yes" if r["target_met"] else "no",
                r["daemon_with_compozy_tools"]["median_ms"],
            ]
            for r in rows
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
