"""Result bytes: compact and full results of every tool with views, on realistic records.

Two apps are filled from the same seed (:mod:`benchmarks.records`); the same script of calls
runs on both through the dispatcher, one asking for ``compact`` and the other for ``full``, so
that tools that change state (rewind, fork, spawn ...) are measured on identical states. A
figure is the bytes of the serialized structured result (what ``structuredContent`` and the
text block each carry).

    python -m benchmarks.result_bytes [--seed N] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import emit_json, machine, machine_line, median, table
from benchmarks.records import DEFAULT_SEED, TASKS, Size, World, build_world, open_world_app
from compozy_mcp import jsonutil
from compozy_mcp.native.hook_schema import FAILED_OUTCOMES
from compozy_mcp.store.base import HookRunRow
from compozy_mcp.views import ResultView

TARGET_TOOL = "compozy__session_status"
TARGET_RATIO = 0.20
SAMPLES = 8


@dataclass(slots=True)
class Recorder:
    """Calls tools in one view and keeps each result's size (and the status records)."""

    world: World
    view: ResultView
    sizes: dict[str, list[int]] = field(default_factory=dict)
    status_records: list[dict[str, Any]] = field(default_factory=list)

    async def measured(self, tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        result = await self.world.app.dispatcher.call(
            tool_id, {**tool_input, "result_view": self.view.value}
        )
        self.sizes.setdefault(tool_id, []).append(len(result.structured_json))
        return result.structured

    async def full(self, session_id: str) -> dict[str, Any]:
        """An unmeasured read, for fences and states."""
        result = await self.world.app.dispatcher.call(
            "compozy__session_status", {"session_id": session_id, "result_view": "full"}
        )
        record: dict[str, Any] = result.structured["session"]
        return record


Step = Callable[[Recorder, random.Random, int], Awaitable[None]]


async def _started(rec: Recorder, session_id: str) -> dict[str, Any]:
    """The session once the start its prompt queued is over (it binds in the background):
    measuring before would measure a record that differs from run to run."""
    await rec.world.app.runtime.settled()
    return await rec.full(session_id)


async def _open(rec: Recorder, ids: list[str]) -> list[str]:
    """The sessions of ``ids`` that are neither stopped nor archived."""
    out = []
    for session_id in ids:
        record = await rec.full(session_id)
        if record["state"] != "stopped" and record["archived_at"] is None:
            out.append(session_id)
    return out


def _pick(rng: random.Random, pool: list[str], k: int) -> list[str]:
    return rng.sample(pool, k=min(k, len(pool)))


async def reads(rec: Recorder, rng: random.Random, k: int) -> None:
    world = rec.world
    for session_id in world.sessions:
        structured = await rec.measured(TARGET_TOOL, {"session_id": session_id})
        rec.status_records.append(structured["session"])
    for archived in (False, True):
        cursor: str | None = None
        while True:
            page_input: dict[str, Any] = {"limit": 20, "archived": archived}
            if cursor:
                page_input["cursor"] = cursor
            page = await rec.measured("compozy__session_list", page_input)
            cursor = page.get("next_cursor")
            if cursor is None:
                break
    for root in _pick(rng, world.roots, k):
        await rec.measured("compozy__session_list", {"parent_session_id": root})
    await rec.measured("compozy__tool_list", {"limit": 500})
    await rec.measured("compozy__tool_list", {"limit": 5})
    await rec.measured("compozy__tool_list", {"toolset": "compozy__sessions"})
    await rec.measured("compozy__skill_list", {})
    for query in ("testing", "review", "release python", "database migrations"):
        await rec.measured("compozy__skill_search", {"query": query})


async def renames(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        await rec.measured(
            "compozy__session_rename", {"session_id": session_id, "name": rng.choice(TASKS)}
        )


async def archive_cycle(rec: Recorder, rng: random.Random, k: int) -> None:
    chosen = _pick(rng, await _open(rec, rec.world.sessions), k)
    for session_id in chosen:
        await rec.measured("compozy__session_archive", {"session_id": session_id})
    for session_id in chosen:
        await rec.measured("compozy__session_unarchive", {"session_id": session_id})


async def runtime_changes(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        runtime = (await rec.full(session_id))["runtime"]
        selected = runtime.get("selected") or {"provider": "claude"}
        await rec.measured(
            "compozy__session_runtime_set",
            {
                "session_id": session_id,
                "provider": selected["provider"],
                "selection_revision": runtime["selection_revision"],
                "generation": runtime.get("generation", 0),
            },
        )


async def continues(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        record = await rec.full(session_id)
        await rec.measured(
            "compozy__session_continue",
            {
                "session_id": session_id,
                "prompt": "Carry on with the next step and report when the tests pass.",
                "transcript_epoch": record.get("transcript_epoch", 0),
                "generation": record["runtime"].get("generation", 0),
            },
        )


async def rewinds(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        record = await rec.full(session_id)
        await rec.measured(
            "compozy__session_rewind",
            {
                "session_id": session_id,
                "to_turn": 1,
                "transcript_epoch": record.get("transcript_epoch", 0),
                "generation": record["runtime"].get("generation", 0),
            },
        )


async def forks(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        record = await rec.full(session_id)
        await rec.measured(
            "compozy__session_fork",
            {"session_id": session_id, "transcript_epoch": record.get("transcript_epoch", 0)},
        )


async def spawns(rec: Recorder, rng: random.Random, k: int) -> None:
    for parent in _pick(rng, await _open(rec, rec.world.roots), k):
        await rec.measured(
            "compozy__session_spawn",
            {
                "parent_session_id": parent,
                "agent_name": "tester",
                "ttl_seconds": 3600,
                "name": "Write a regression test",
                "prompt": "Write a test that fails on main and passes with the fix.",
                "tools": ["compozy__session_status", "compozy__skill_*", "compozy__tool_info"],
                "skills": ["python-testing"],
                "mcp_servers": ["github"],
                "workspace_paths": ["tests/upload"],
                "worktree": rng.random() < 0.5,
            },
        )


async def creates(rec: Recorder, rng: random.Random, k: int) -> None:
    for index in range(k):
        await rec.measured(
            "compozy__session_create",
            {
                "agent_name": "general",
                "name": rng.choice(TASKS),
                "branch": f"fix/bench-{index}",
                "provider": "claude",
                "model": "claude-sonnet-5",
            },
        )


async def clears(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        await rec.measured("compozy__session_runtime_clear", {"session_id": session_id})


async def stops(rec: Recorder, rng: random.Random, k: int) -> None:
    for session_id in _pick(rng, await _open(rec, rec.world.sessions), k):
        await rec.measured(
            "compozy__session_stop", {"session_id": session_id, "reason": "benchmark"}
        )


#: the hooks of the world: a guard, the migration recipe, an auditing webhook, a disabled one
HOOKS: tuple[dict[str, Any], ...] = (
    {
        "id": "no-archiving",
        "event": "tool.pre_call",
        "matcher": {"tool": "compozy__session_archive", "session_type": "user"},
        "command": "./hooks/no-archiving.sh",
        "timeout": 5,
        "on_error": "deny",
        "description": "Archiving is frozen during the release.",
    },
    {
        "id": "full-record",
        "event": "tool.pre_call",
        "matcher": {"tool": "compozy__session_*"},
        "command": ["python3", "hooks/full-record.py"],
    },
    {
        "id": "audit",
        "event": "tool.post_call",
        "mode": "async",
        "url": "https://audit.example.com/compozy/hooks",
        "headers": {"Authorization": "Bearer 0123456789abcdef"},
    },
    {"id": "notify-errors", "event": "tool.post_error", "command": "./hooks/notify.sh"},
)
#: what the runs of the world's hooks ended in, and why (weights of a working day)
RUN_ENDINGS: tuple[tuple[str, str, str | None, int | None, str], ...] = (
    ("ok", "allow", None, 0, ""),
    ("ok", "allow", None, 0, ""),
    ("ok", "allow", None, 0, ""),
    (
        "denied",
        "deny",
        "exited with code 2: archiving is frozen until Monday",
        2,
        "archiving is frozen until Monday\n",
    ),
    ("timeout", "allow", "timed out after 5 s", None, "waiting for the audit service...\n"),
    (
        "error",
        "allow",
        "exited with code 1",
        1,
        "Traceback (most recent call last):\n  File \"notify.py\", line 12\nKeyError: 'url'\n",
    ),
    ("invalid_output", "allow", "printed output that is not JSON: 'done'", 0, ""),
)


async def hooks(rec: Recorder, rng: random.Random, k: int) -> None:
    """The hook tools on a day of runs: the hooks above, then a seeded run history (written to
    the store as the run log writes it, so that durations are the seed's, not the machine's)."""
    app = rec.world.app
    for definition in HOOKS:
        await app.dispatcher.call("compozy__hooks_create", definition)
    rows = []
    for index in range(k * 12):
        hook = rng.choice(HOOKS)
        outcome, decision, detail, code, stderr = rng.choice(RUN_ENDINGS)
        applied = hook["id"] == "full-record" and outcome == "ok"
        patch = {
            "tool_input": {"session_id": rng.choice(rec.world.sessions), "result_view": "full"}
        }
        rows.append(
            HookRunRow(
                hook_id=hook["id"],
                event=hook["event"],
                tool_id="compozy__session_status",
                tool_call_id=f"call-{rng.getrandbits(48):012x}",
                session_id=rng.choice(rec.world.sessions),
                started_at=rec.world.now,
                duration_ms=round(rng.uniform(1.5, 40.0), 3),
                outcome=outcome,
                decision="none" if hook["event"] != "tool.pre_call" else decision,
                patch_applied=applied,
                detail=detail,
                exit_code=code,
                stderr_tail=stderr,
                patch=patch if applied else None,
                seq=index,
            )
        )
    with app.store.write() as writer:
        for row in rows:
            writer.add_hook_run(row, failed=row.outcome in FAILED_OUTCOMES)
    await rec.measured("compozy__hooks_list", {})
    await rec.measured("compozy__hooks_list", {"event": "tool.pre_call"})
    await rec.measured("compozy__hooks_runs", {"limit": 50})
    await rec.measured("compozy__hooks_runs", {"failed": True})
    for hook in HOOKS[:2]:
        await rec.measured("compozy__hooks_runs", {"hook_id": hook["id"], "limit": 20})


LOOP = """\
name: tools review
graph:
  nodes:
    - id: inspect
      class: action
      kind: compozy__session_status
      params:
        session_id: "{{ .inputs.session_id }}"
        result_view: full
    - id: tools
      class: action
      kind: transform
      params:
        output:
          allowed: "{{ .nodes.inspect.output.session.lineage.permission_policy.tools }}"
          state: "{{ .nodes.inspect.output.session.state }}"
    - id: review
      class: control
      kind: gate
      params:
        title: Tools review
        criteria:
          - id: tools_ok
            prompt: Are these the tools the agent should have?
          - id: state_ok
            prompt: Is the session in the state you expect?
  edges:
    - from: inspect
      to: tools
    - from: tools
      to: review
"""


async def loops(rec: Recorder, rng: random.Random, k: int) -> None:
    """The Loop tools: a three-node Loop (session_status full, a transform, a gate) stored in
    versions, run on sessions of the world, answered and cancelled."""
    for index in range(k):
        loop_id = f"review-{index % 2}"
        await rec.measured("compozy__loop_create", {"definition": LOOP, "loop_id": loop_id})
        await rec.measured("compozy__loop_inspect", {"loop_id": loop_id})
    await rec.measured("compozy__loop_list", {})
    run_ids = []
    for _ in range(k * 2):
        sid = rng.choice(rec.world.sessions)
        started = await rec.measured(
            "compozy__loop_run",
            {"loop_id": "review-0", "inputs": {"session_id": sid}, "wait": True},
        )
        assert started["run"]["status"] == "waiting", started["run"].get("error")
        run_ids.append(started["run"]["run_id"])
    for run_id in run_ids:
        await rec.measured("compozy__loop_status", {"run_id": run_id})
    await rec.measured("compozy__loop_runs", {"limit": 50})
    for run_id in run_ids[:k]:
        await rec.measured(
            "compozy__loop_approve", {"run_id": run_id, "decision": "approve", "wait": True}
        )
    for run_id in run_ids[k:]:
        await rec.measured("compozy__loop_cancel", {"run_id": run_id})


#: what agents said in a turn of the world (seeded pieces of a coding session)
TURN_PROMPTS = (
    "Find why the upload test is flaky and fix it",
    "Run the test suite and summarize the failures",
    "Review the diff of fix/upload-flake",
    "Write a changelog entry for the retry change",
)
TURN_REPLIES = (
    "The upload test races the background flush: it asserts before the worker wrote the part. "
    "I added a barrier in the fixture and the test passed 200 times in a row.",
    "2 failures: test_retry_backoff (timing assumption) and test_large_upload (fixture path). "
    "Both are fixed in the last commit; the suite is green.",
    "The diff is small and focused. One nit: the retry constant should live in config.py.",
    "Added under Unreleased: uploads retry a failed part up to three times with backoff.",
)


def _turn_doc(rng: random.Random, reply: str) -> dict[str, Any]:
    words = reply.split(" ")
    cut = max(1, len(words) // 3)
    chunks = [
        " ".join(words[:cut]) + " ",
        " ".join(words[cut : 2 * cut]) + " ",
        " ".join(words[2 * cut :]),
    ]
    calls = [
        {
            "tool_call_id": f"call-{n}",
            "title": title,
            "kind": kind,
            "status": "completed",
            "raw_input": {"path": "tests/test_upload.py", "line": rng.randint(1, 400)},
            "raw_output": {"exit_code": 0, "stdout": "....................  [100%]\n200 passed"},
        }
        for n, (title, kind) in enumerate(
            rng.sample(
                [
                    ("Read test_upload.py", "read"),
                    ("Run pytest -k upload", "execute"),
                    ("Edit conftest.py", "edit"),
                    ("Search for flush", "search"),
                ],
                2,
            )
        )
    ]
    plan = [
        {"content": step, "priority": "medium", "status": "completed"}
        for step in ("Reproduce", "Find the cause", "Fix and verify")
    ]
    usage = {"input_tokens": rng.randint(2000, 9000), "output_tokens": rng.randint(200, 900)}
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return {
        "chunks": chunks,
        "thoughts": ["Looking at the failing assertion first.", "The flush is asynchronous."],
        "tool_calls": calls,
        "plan": plan,
        "usage": usage,
        "timings": {"duration_ms": float(rng.randint(4000, 60000)), "first_update_ms": 850.0},
    }


async def agents(rec: Recorder, rng: random.Random, k: int) -> None:
    """The agent and turn tools on a day of turns: turns and their events written to the store
    as the runtime writes them (a benchmark runs no agent), then read back."""
    from compozy_mcp.calls import CallInfo
    from compozy_mcp.clock import timestamp
    from compozy_mcp.store.base import SessionEventRow, TranscriptTurn

    app = rec.world.app
    sessions = _pick(rng, await _open(rec, rec.world.sessions), k)
    now = timestamp(rec.world.clock.now())
    with app.store.write() as writer:
        for sid in sessions:
            row = writer.session(sid)
            assert row is not None
            state = app.sessions.ledger.state(row)
            for n in range(3):
                state.transcript_turns += 1
                reply = rng.choice(TURN_REPLIES)
                doc = _turn_doc(rng, reply)
                turn_id = f"turn-{sid[-6:]}-{n}"
                writer.append_turns(
                    [
                        TranscriptTurn(
                            sid,
                            state.transcript_turns,
                            state.transcript_epoch,
                            "user",
                            rng.choice(TURN_PROMPTS),
                            now,
                            turn_id,
                            "completed",
                            "end_turn",
                            reply,
                            now,
                            now,
                            jsonutil.dumps_text(doc),
                        )
                    ]
                )
                events: list[tuple[str, dict[str, Any]]] = [
                    ("turn_started", {"turn": state.transcript_turns})
                ]
                events += [
                    ("agent_thought_chunk", {"content": {"type": "text", "text": t}})
                    for t in doc["thoughts"]
                ]
                events += [("tool_call", c) for c in doc["tool_calls"]]
                events += [
                    ("agent_message_chunk", {"content": {"type": "text", "text": c}})
                    for c in doc["chunks"]
                ]
                events += [("turn_ended", {"status": "completed", "stop_reason": "end_turn"})]
                writer.append_session_events(
                    [
                        SessionEventRow(0, sid, turn_id, kind, now, jsonutil.dumps_text(payload))
                        for kind, payload in events
                    ]
                )
            app.sessions.ledger.save(writer, CallInfo("benchmark"), row, state)
    await rec.measured("compozy__agent_list", {})
    for sid in sessions:
        await rec.measured("compozy__session_history", {"session_id": sid})
        await rec.measured("compozy__session_events", {"session_id": sid, "limit": 50})
        await rec.measured("compozy__session_wait", {"session_id": sid, "timeout_seconds": 1})
        queued = await rec.measured(
            "compozy__session_prompt", {"session_id": sid, "prompt": rng.choice(TURN_PROMPTS)}
        )
        assert queued["turn"]["status"] in ("queued", "running", "completed")
    for sid in sessions:
        fences = await _started(rec, sid)
        await rec.measured(
            "compozy__session_clear",
            {
                "session_id": sid,
                "transcript_epoch": fences.get("transcript_epoch", 0),
                "generation": fences["runtime"].get("generation", 0),
            },
        )


async def approvals(rec: Recorder, rng: random.Random, k: int) -> None:
    """The approval tools: grants an operator remembered for the world's agents, listed."""
    tools = ("compozy__session_stop", "compozy__session_rename", "compozy__session_archive")
    for index in range(k * 2):
        grant: dict[str, Any] = {
            "tool_id": tools[index % len(tools)],
            "decision": "allow" if index % 3 else "reject",
        }
        if index % 2:
            grant["agent_name"] = "general"
            grant["input"] = {"session_id": rng.choice(rec.world.sessions), "name": "x"}
        result = await rec.world.app.dispatcher.call("compozy__tool_approvals_set", grant)
        assert "grant" in result.structured
    await rec.measured("compozy__tool_approvals_list", {})
    await rec.measured("compozy__tool_approvals_list", {"tool_id": "compozy__session_stop"})


async def worktrees(rec: Recorder, rng: random.Random, k: int) -> None:
    """Sessions in worktrees: each changes a few files, then its diff and worktree are read."""
    if not (await rec.world.app.dispatcher.call("compozy__worktree_list", {})).structured[
        "worktrees"
    ]:  # a small world spawned none: one session takes a worktree
        made = {"agent_name": "general", "name": "Worktree work", "worktree": True}
        await rec.world.app.dispatcher.call("compozy__session_create", made)
    trees = (await rec.measured("compozy__worktree_list", {}))["worktrees"]
    for tree in rng.sample(trees, k=min(len(trees), k * 2)):
        directory = Path(tree["directory"])
        for index in range(rng.randint(1, 6)):
            lines = [f"line {n} of change {index}" for n in range(rng.randint(3, 60))]
            (directory / f"change_{index}.py").write_text("\n".join(lines) + "\n")
        (directory / "README.md").write_text(f"Work of {tree['session_id']}.\n")
        await rec.measured("compozy__session_diff", {"session_id": tree["session_id"]})
        await rec.measured("compozy__worktree_inspect", {"worktree_id": tree["worktree_id"]})


async def tasks(rec: Recorder, rng: random.Random, k: int) -> None:
    """Tasks queued, claimed, delivered, reviewed; heartbeats set, woken and read."""
    sessions = rng.sample(rec.world.sessions, k=min(len(rec.world.sessions), k * 2))
    waiting = []  # tasks left todo: read, updated, one cancelled
    for index, session_id in enumerate(sessions):
        workspace = (await rec.full(session_id))["workspace_id"]
        for extra in range(2):
            task = {
                "title": f"Task {index}.{extra}: fix the {rng.choice(['parser', 'upload'])}",
                "description": "What is broken, how to see it, and where to start. " * 3,
                "acceptance_criteria": ["the suite passes", "a test covers it"],
                "labels": rng.sample(["bug", "perf", "docs", "ui"], k=2),
                "priority": 9 - extra,
                "workspace_id": workspace,
            }
            made = (await rec.measured("compozy__task_create", task))["task"]
            if extra:
                waiting.append(made)
        claim = await rec.measured("compozy__task_run_claim_next", {"session_id": session_id})
        run_id = claim["task"]["current_run"]["run_id"]
        await rec.measured("compozy__task_run_heartbeat", {"run_id": run_id})
        if index % 3 == 1:
            await rec.measured("compozy__task_run_fail", {"run_id": run_id, "reason": "broken"})
            continue
        if index % 3 == 2:
            await rec.measured("compozy__task_run_release", {"run_id": run_id})
            continue
        done = await rec.measured(
            "compozy__task_run_complete", {"run_id": run_id, "summary": "Fixed; a test covers it."}
        )
        decision = rng.choice(["accept", "request_changes"])
        await rec.measured(
            "compozy__task_run_review_submit",
            {"task_id": done["task"]["task_id"], "decision": decision, "comments": "Looks right."},
        )
    await rec.measured("compozy__task_list", {})
    for task in waiting[:k]:
        await rec.measured("compozy__task_status", {"task_id": task["task_id"]})
        await rec.measured("compozy__task_update", {"task_id": task["task_id"], "priority": 1})
    await rec.measured("compozy__task_cancel", {"task_id": waiting[-1]["task_id"]})
    for index, session_id in enumerate(sessions[:k]):
        schedule = {"cron": "*/30 9-17 * * 1-5"} if index % 2 else {"interval_seconds": 600}
        beat = {"session_id": session_id, **schedule, "quiet_hours": "22:00-06:00"}
        await rec.measured("compozy__agent_heartbeat_set", beat)
        await rec.measured("compozy__agent_heartbeat_status", {"session_id": session_id})
        await rec.measured("compozy__agent_heartbeat_wake", {"session_id": session_id})


#: the script, in order: reads first (on the world as built), then each kind of change
SCRIPT: tuple[Step, ...] = (
    reads,
    worktrees,
    renames,
    archive_cycle,
    runtime_changes,
    continues,
    rewinds,
    forks,
    spawns,
    creates,
    clears,
    stops,
    agents,
    approvals,
    tasks,
    loops,  # before hooks: the hooks step leaves hooks on session_status calls
    hooks,
)


async def run_script(seed: int, size: Size, view: ResultView, k: int) -> Recorder:
    with (
        tempfile.TemporaryDirectory(prefix="compozy-bench-") as home,
        open_world_app(Path(home)) as (app, clock, driver),
    ):
        world = await build_world(app, clock, driver, seed, size)
        rec = Recorder(world, view)
        rng = random.Random(seed + 1)  # the same targets in both runs
        for step in SCRIPT:
            await step(rec, rng, k)
        rec.world = world
        return rec


def field_bytes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Bytes of each top-level field of the session records (``"key":value,``), summed."""
    totals: Counter[str] = Counter()
    for record in records:
        for key, value in record.items():
            totals[key] += len(jsonutil.dumps({key: value})) - 1  # braces out, comma in
    grand = sum(totals.values())
    return [
        {"field": key, "bytes": n, "share": round(n / grand, 4)} for key, n in totals.most_common()
    ]


def world_facts(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What the full session records hold, to judge how realistic they are."""
    return {
        "sessions": len(records),
        "lineage": dict(Counter(r["lineage"]["kind"] for r in records)),
        "badges": dict(Counter(r["badge"] for r in records)),
        "bound_with_30_commands": sum(1 for r in records if len(r["available_commands"]) == 30),
        "with_pending_interactions": sum(1 for r in records if r["pending_interactions"]),
        "with_children": sum(1 for r in records if "children" in r),
        "with_pull_request": sum(1 for r in records if r["pull_request"]),
        "with_queue": sum(1 for r in records if "queue" in r),
        "with_diagnostics": sum(1 for r in records if r["diagnostics"]),
        "narrowed_policies": sum(
            1 for r in records if r["lineage"]["permission_policy"]["tools"] != ["*"]
        ),
    }


async def measure(seed: int, quick: bool) -> dict[str, Any]:
    size = Size.quick() if quick else Size()
    k = 2 if quick else SAMPLES
    compact = await run_script(seed, size, ResultView.COMPACT, k)
    full = await run_script(seed, size, ResultView.FULL, k)
    tools: list[dict[str, Any]] = []
    for tool in compact.world.app.dispatcher.registry:
        if not tool.has_views:
            continue
        c_sizes, f_sizes = compact.sizes.get(tool.id, []), full.sizes.get(tool.id, [])
        if len(c_sizes) != len(f_sizes):
            raise AssertionError(f"{tool.id}: the two runs made different calls")
        if not c_sizes:
            tools.append({"tool_id": tool.id, "calls": 0})
            continue
        per_call = [c / f for c, f in zip(c_sizes, f_sizes, strict=True)]
        tools.append(
            {
                "tool_id": tool.id,
                "calls": len(c_sizes),
                "compact_bytes": sum(c_sizes),
                "full_bytes": sum(f_sizes),
                "ratio": round(sum(c_sizes) / sum(f_sizes), 4),
                "median_call_ratio": round(median(per_call), 4),
                "max_call_ratio": round(max(per_call), 4),
                "compact_median_bytes": int(median(c_sizes)),
                "full_median_bytes": int(median(f_sizes)),
            }
        )
    status = next(t for t in tools if t["tool_id"] == TARGET_TOOL)
    bound = [
        (c, f)
        for c, f in zip(compact.status_records, full.status_records, strict=True)
        if len(f["available_commands"]) == 30
    ]
    bound_ratio = (
        sum(len(jsonutil.dumps(c)) for c, _ in bound)
        / sum(len(jsonutil.dumps(f)) for _, f in bound)
        if bound
        else None
    )
    return {
        "benchmark": "result_bytes",
        "seed": seed,
        "quick": quick,
        "world": world_facts(full.status_records),
        "tools": tools,
        "targets": {
            TARGET_TOOL: {
                "target": f"compact <= {TARGET_RATIO:.0%} of full",
                "value": status["ratio"],
                "met": status["ratio"] <= TARGET_RATIO,
                "bound_sessions_ratio": round(bound_ratio, 4) if bound_ratio else None,
            }
        },
        "session_status_fields": {
            "compact": field_bytes(compact.status_records),
            "full": field_bytes(full.status_records),
        },
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    world = result["world"]
    lines = [
        f"Result bytes (seed {result['seed']}): {world['sessions']} sessions "
        f"({', '.join(f'{k} {v}' for k, v in world['lineage'].items())}); "
        f"{world['bound_with_30_commands']} bound with 30 commands, "
        f"{world['narrowed_policies']} with narrowed policies, "
        f"{world['with_pending_interactions']} with pending interactions, "
        f"{world['with_children']} with children, {world['with_pull_request']} with a PR, "
        f"{world['with_queue']} with a queue, {world['with_diagnostics']} with diagnostics",
        f"badges: {world['badges']}",
        "",
    ]
    rows = []
    for t in result["tools"]:
        if not t["calls"]:
            rows.append([t["tool_id"], 0, "-", "-", "-", "-", "-"])
            continue
        rows.append(
            [
                t["tool_id"],
                t["calls"],
                t["compact_median_bytes"],
                t["full_median_bytes"],
                f"{t['ratio']:.1%}",
                f"{t['median_call_ratio']:.1%}",
                f"{t['max_call_ratio']:.1%}",
            ]
        )
    lines.append(
        table(
            [
                "tool",
                "calls",
                "compact (median B)",
                "full (median B)",
                "compact/full",
                "median call",
                "worst call",
            ],
            rows,
        )
    )
    target = result["targets"][TARGET_TOOL]
    lines += [
        "",
        f"target: {TARGET_TOOL} {target['target']}: {target['value']:.1%} over all records "
        f"({'met' if target['met'] else 'MISSED'}); {target['bound_sessions_ratio']:.1%} "
        "over sessions with a bound runtime",
        "",
        f"What {TARGET_TOOL} records are made of (bytes summed over all records):",
        "",
    ]
    full_fields = {f["field"]: f for f in result["session_status_fields"]["full"]}
    compact_fields = {f["field"]: f for f in result["session_status_fields"]["compact"]}
    rows = [
        [
            name,
            compact_fields[name]["bytes"] if name in compact_fields else 0,
            f"{compact_fields[name]['share']:.1%}" if name in compact_fields else "-",
            f["bytes"],
            f"{f['share']:.1%}",
        ]
        for name, f in list(full_fields.items())[:14]
    ]
    lines.append(table(["field", "compact B", "compact share", "full B", "full share"], rows))
    lines += ["", machine_line(result["machine"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.result_bytes", description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="a small world, two calls per tool")
    args = parser.parse_args(argv)
    result = anyio.run(measure, args.seed, args.quick)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
