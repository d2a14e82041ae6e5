"""What the model reads, measured where the model reads it (issue 21, item 7).

A typical agent workflow is driven through each real agent (Claude Code, Codex, Gemini CLI:
their adapters from ``make node-deps``) run by ``compozy serve`` against its fake model API
(tests/fakes), each step one prompt that makes the model call one of compozy's tools:

    tool_list once (the catalog), session_create, session_status x5 (of its own session),
    session_spawn (an echo child), session_prompt to the child (wait), session_history,
    session_archive, tool_info once

once with the default (compact) results and once with ``result_view: "full"`` on every tool
that has views. From the fake's own request log: the bytes of tool definitions the model is
sent with each request, and the bytes of the tool results the workflow brought back to it.
Goal: the workflow's result bytes compact at most 20% of full. A result an agent would not
pass to its model whole (Claude Code caps a tool result) reaches the model as the agent's own
error: it is counted as read, and reported. A last column: the tool definitions per request
when the agent's compozy server runs in ``--discovery search`` mode.

    python -m benchmarks.model_reads [--json] [--quick] [--agents claude,codex,gemini]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from benchmarks.common import emit_json, machine, machine_line, median, table
from benchmarks.prompt_roundtrip import _start_daemon
from compozy_mcp.agents.definitions import BUILTINS

GOAL = 0.20
STATUS_CALLS = 5
TURN_SECONDS = 120


@dataclass
class Step:
    tool: str
    arguments: dict[str, Any]
    has_views: bool = True


def _workflow(parent: str, quick: bool) -> list[Step]:
    """The steps before the ids they need are known; see :func:`_run_workflow`."""
    statuses = 1 if quick else STATUS_CALLS
    return [
        Step("tool_list", {}),
        Step("session_create", {"agent_name": "worker", "name": "Look at the flaky test"}),
        # an agent looking at its own session (bound: its commands, its policy) now and then
        *(Step("session_status", {"session_id": parent}) for _ in range(statuses)),
        Step(
            "session_spawn",
            {
                "agent_name": "helper",
                "ttl_seconds": 600,
                "provider": "echo",
                "parent_session_id": parent,
            },
        ),
        Step(
            "session_prompt",
            {
                "session_id": "{spawned}",
                "prompt": "hello child",
                "wait": True,
                "timeout_seconds": 60,
            },
        ),
        Step("session_history", {"session_id": "{spawned}"}),
        Step("session_archive", {"session_id": "{created}"}),
        Step("tool_info", {"tool_id": "compozy__session_status"}, has_views=False),
    ]


class Served:
    def __init__(self, http: httpx2.Client, agent: str, allow: str | None) -> None:
        self.http = http
        self.agent = agent
        self.allow = allow
        self._stop = threading.Event()

    @contextmanager
    def answering(self, sid: str) -> Iterator[None]:
        """Answer the agent's permission requests (it asks before each MCP tool) meanwhile."""

        def answer() -> None:
            while not self._stop.is_set():
                pending = self.http.get(f"/api/sessions/{sid}").json()["session"][
                    "pending_interactions"
                ]
                for item in pending:
                    if self.allow is not None:
                        self.http.post(
                            f"/api/sessions/{sid}/approve",
                            json={"interaction_id": item["interaction_id"], "decision": self.allow},
                        )
                time.sleep(0.05)

        self._stop.clear()
        runner = threading.Thread(target=answer, daemon=True)
        runner.start()
        try:
            yield
        finally:
            self._stop.set()
            runner.join(timeout=5)

    def prompt(self, sid: str, text: str) -> dict[str, Any]:
        done = self.http.post(
            f"/api/sessions/{sid}/prompt",
            json={"prompt": text, "wait": True, "timeout_seconds": TURN_SECONDS},
            timeout=TURN_SECONDS + 30,
        )
        done.raise_for_status()
        turn: dict[str, Any] = done.json()["turn"]
        if turn["status"] != "completed":
            raise RuntimeError(f"a workflow turn ended {turn['status']}: {turn}")
        return turn

    def children(self, sid: str) -> list[str]:
        page = self.http.get("/api/sessions", params={"parent_session_id": sid}).json()
        return [s["id"] for s in page["sessions"]]


def _run_workflow(served: Served, sid: str, full: bool, quick: bool) -> None:
    known: dict[str, str] = {}
    with served.answering(sid):
        for step in _workflow(sid, quick):
            text = json.dumps(step.arguments)
            for name, value in known.items():  # the ids earlier steps made
                text = text.replace("{" + name + "}", value)
            arguments = json.loads(text)
            if full and step.has_views:
                arguments["result_view"] = "full"
            before = set(served.children(sid))
            served.prompt(sid, f"tool:{step.tool} {json.dumps(arguments)}")
            made = [c for c in served.children(sid) if c not in before]
            if step.tool == "session_create" and made:
                known["created"] = made[0]
            if step.tool == "session_spawn" and made:
                known["spawned"] = made[0]


def _compact_json(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode())


def _declarations(tools: list[Any]) -> Iterator[dict[str, Any]]:
    """Each tool the request offers, wherever the API nests it (Gemini's
    functionDeclarations, Codex's namespaces)."""
    for item in tools:
        if not isinstance(item, dict):
            continue
        nested = item.get("functionDeclarations") or (
            item.get("tools") if item.get("type") == "namespace" else None
        )
        if isinstance(nested, list):
            if item.get("type") == "namespace" and "compozy" in str(item.get("name", "")):
                yield item  # the namespace header is compozy's bytes too
                continue
            yield from _declarations(nested)
        else:
            yield item


def _tool_bytes(body: dict[str, Any]) -> tuple[int, int]:
    """(all tool definitions, compozy's own) in one request, in bytes."""
    tools = body.get("tools", [])
    ours = [d for d in _declarations(tools) if "compozy" in str(d.get("name", ""))]
    return _compact_json(tools), sum(_compact_json(d) for d in ours)


_STORED = re.compile(r"result truncated: (\d+) bytes exceed")


def _recorded_bytes(result: str) -> int:
    """A result compozy cut to its ceiling counts at the size it stored whole (what a model
    that needs it reads through compozy__tool_artifact_read); any other at its own size."""
    found = _STORED.search(result[:400])
    return int(found.group(1)) if found else len(result.encode())


def _measure_log(agent: str, bodies: list[dict[str, Any]]) -> dict[str, Any]:
    from tests.fakes.agents import AGENTS

    results = [r for body in bodies for r in AGENTS[agent].results(body)]
    sizes = [_tool_bytes(b) for b in bodies if b.get("tools")]
    return {
        "requests": len(bodies),
        "tool_definitions_bytes_per_request": int(median([a for a, _ in sizes])) if sizes else 0,
        "compozy_definitions_bytes_per_request": (
            int(median([c for _, c in sizes])) if sizes else 0
        ),
        "tool_results": len(results),
        "tool_result_bytes": sum(len(r.encode()) for r in results),
        "recorded_result_bytes": sum(_recorded_bytes(r) for r in results),
        "each_result_bytes": [len(r.encode()) for r in results],
        # results the agent would not hand its model whole (too large for it): it sent an
        # error of its own instead, which is what the model read
        "cut_by_the_agent": sum(1 for r in results if _cut(r)),
        "cut_by_compozy": sum(1 for r in results if _STORED.search(r[:400])),
    }


def _cut(result: str) -> bool:
    lowered = result[:300].lower()
    return "exceeds maximum allowed tokens" in lowered or "too large" in lowered


def measure_agent(name: str, scratch: Path, quick: bool) -> dict[str, Any]:
    from tests.fakes.agents import AGENTS, BIN
    from tests.fakes.server import FakeModel

    agent = AGENTS[name]
    root = scratch / name
    root.mkdir()
    with FakeModel(agent.api()) as fake:
        env = agent.environment(fake.url, root)
        env["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        env["COMPOZY_PERMISSION_MODE"] = "bypass"  # the workflow's calls are never held
        home = root / "compozy"
        (home / "ws").mkdir(parents=True)
        (home / "daemon").mkdir(mode=0o700)
        builtin = BUILTINS[name]
        searching = {
            "command": builtin.command,
            "args": list(builtin.args),
            "env": dict(builtin.env),
            "discovery": "search",
        }
        (home / "daemon" / "agents.yaml").write_text(
            json.dumps({"agents": {f"{name}-search": searching}}), encoding="utf-8"
        )
        process, url = _start_daemon(home, extra_env=env, uds=True)
        try:
            with httpx2.Client(base_url=url, trust_env=False, timeout=60) as http:
                served = Served(http, name, agent.allow)
                row: dict[str, Any] = {"agent": name}
                for view in ("compact", "full"):
                    made = http.post("/api/sessions", json={"agent_name": "lead", "provider": name})
                    sid = made.json()["session"]["id"]
                    mark = len(fake.log.snapshot())
                    _run_workflow(served, sid, view == "full", quick)
                    bodies = [b for b in fake.bodies()[mark:] if isinstance(b, dict)]
                    row[view] = _measure_log(name, bodies)
                made = http.post(
                    "/api/sessions", json={"agent_name": "lead", "provider": f"{name}-search"}
                )
                sid = made.json()["session"]["id"]
                mark = len(fake.log.snapshot())
                served.prompt(sid, "hello in search mode")
                bodies = [b for b in fake.bodies()[mark:] if isinstance(b, dict)]
                row["search"] = _measure_log(name, bodies)
        finally:
            process.terminate()
            process.wait(timeout=30)
    compact, full = row["compact"]["tool_result_bytes"], row["full"]["tool_result_bytes"]
    row["result_bytes_compact_to_full"] = round(compact / full, 4) if full else None
    row["goal_met"] = bool(full) and compact / full <= GOAL
    recorded = row["full"]["recorded_result_bytes"]
    row["result_bytes_compact_to_full_recorded"] = (
        round(compact / recorded, 4) if recorded else None
    )
    # without the two contract reads (tool_list first, tool_info last; the latter the same
    # in both): the records the workflow works on
    compact_records = sum(row["compact"]["each_result_bytes"][1:-1])
    full_records = sum(row["full"]["each_result_bytes"][1:-1])
    row["records_compact_to_full"] = (
        round(compact_records / full_records, 4) if full_records else None
    )
    return row


def _installed_agents() -> list[str]:
    from tests.fakes.agents import not_installed

    return [] if not_installed() else ["claude", "codex", "gemini"]


def report(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "model reads: the real agents are not installed (make node-deps); nothing measured"
    body = [
        [
            r["agent"],
            r["compact"]["tool_definitions_bytes_per_request"],
            r["compact"]["compozy_definitions_bytes_per_request"],
            r["search"]["compozy_definitions_bytes_per_request"],
            r["compact"]["tool_results"],
            r["compact"]["tool_result_bytes"],
            r["full"]["tool_result_bytes"],
            r["result_bytes_compact_to_full"],
            r["result_bytes_compact_to_full_recorded"],
            r["records_compact_to_full"],
            "yes" if r["goal_met"] else "no",
        ]
        for r in rows
    ]
    cut = [
        f"{r['agent']}: full results cut by compozy's ceiling {r['full']['cut_by_compozy']},"
        f" by the agent {r['full']['cut_by_the_agent']}"
        for r in rows
    ]
    return "\n".join(
        [
            "what the model reads over one workflow (from the fake model's request log)",
            table(
                [
                    "agent",
                    "tool defs B/req",
                    "compozy's B/req",
                    "compozy's B/req search",
                    "results",
                    "result B compact",
                    "result B full",
                    "compact/full",
                    "/full as stored",
                    "/full records only",
                    f"<= {GOAL:.0%}",
                ],
                body,
            ),
            "as stored: a full result compozy cut to its ceiling counted at its whole size;"
            " records only: without tool_list and tool_info",
            *cut,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_reads", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="Claude only, one status call")
    parser.add_argument("--agents", help="comma-separated agents (default: every one installed)")
    args = parser.parse_args(argv)
    agents = _installed_agents()
    if args.agents:
        agents = [a for a in args.agents.split(",") if a in agents]
    if args.quick:
        agents = agents[:1]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cz-reads-") as scratch:
        for name in agents:
            rows.append(measure_agent(name, Path(scratch), args.quick))
    info = machine()
    if args.json:
        emit_json({"machine": info, "goal": GOAL, "results": rows})
    else:
        print(machine_line(info))
        print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
