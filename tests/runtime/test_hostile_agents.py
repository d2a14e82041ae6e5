"""Agents that misbehave (:mod:`tests.runtime.hostile_agents`), run as real processes by the
runtime as a prompt reaches them: nothing they do makes a prompt wait forever, holds a
session's lock, grows this process without bound, loses what a turn streamed or leaves a
process behind (issues 21 and 22)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import open_app
from compozy_mcp.config import Settings
from compozy_mcp.runtime import _procfs as procfs

pytestmark = [pytest.mark.process, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[2]
#: a failed test rather than a hung one: every call here must return long before this
GUARD_SECONDS = 60
MODES = (
    "no-newline",
    "garbage-lines",
    "ignore-term",
    "background-child",
    "stream-crash",
    "auth-error",
    "needs-child",
    "flood-mid-turn",
)


def _agents_yaml(pidfile: Path) -> str:
    lines = ["agents:"]
    for mode in MODES:
        args = ["-m", "tests.runtime.hostile_agents", mode, str(pidfile)]
        lines += [
            f"  {mode.replace('-', '_')}:",
            f"    command: {sys.executable}",
            f"    args: [{', '.join(repr(a) for a in args)}]",
            f"    env: {{PYTHONPATH: {str(ROOT)!r}}}",
        ]
    lines += ["  broken:", "    command: /bin/false"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def pidfile(tmp_path: Path) -> Iterator[Path]:
    """Where an agent writes the pid of the child it starts; that child never outlives the
    test."""
    path = tmp_path / "child.pid"
    yield path
    if path.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(path.read_text()), signal.SIGKILL)


@pytest.fixture
async def hostile(
    tmp_path: Path, pidfile: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Caller]:
    """An app whose agents are the hostile ones. Their start timeout is long enough for an
    agent that does start on a loaded machine; a test of the timeout itself sets a short one
    (``@pytest.mark.settings(agent_start_timeout_seconds=...)``)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "agents.yaml").write_text(_agents_yaml(pidfile))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    settings = Settings(
        home=home,
        default_workspace_path=workspace,
        permission_mode="bypass",
        agent_start_timeout_seconds=GUARD_SECONDS // 2,
        agent_stop_grace_seconds=1,
        agent_max_frame_bytes=1024 * 1024,
    )
    marker = request.node.get_closest_marker("settings")
    if marker is not None:
        settings = dataclasses.replace(settings, **marker.kwargs)
    with open_app(settings) as app:
        caller = Caller(app)
        try:
            yield caller
        finally:
            await app.shutdown()
    assert app.runtime.pids() == []


async def _session(call: Caller, provider: str) -> str:
    return str((await call.create(provider=provider))["id"])


async def _prompt(call: Caller, sid: str, text: str, *, wait: bool = True) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "wait": wait, "timeout_seconds": GUARD_SECONDS}
    with anyio.fail_after(GUARD_SECONDS):
        turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def _runtime(call: Caller, sid: str) -> dict[str, Any]:
    runtime: dict[str, Any] = (await call.full(sid))["runtime"]
    return runtime


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- a start that fails ----------------------------------------------------------------------


async def test_a_start_failure_fails_the_queued_turn_at_once_with_the_stderr_tail(
    hostile: Caller,
) -> None:
    """``broken: {command: /bin/false}``: the prompt that waits returns the failure, not
    ``queued`` after its timeout."""
    sid = await _session(hostile, "broken")
    turn = await _prompt(hostile, sid, "hello")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_start_failed")
    assert "exited with status 1" in turn["failure"]["summary"]
    runtime = await _runtime(hostile, sid)
    assert runtime["status"] == "failed"
    assert runtime["failure"]["kind"] == "agent_start_failed"
    events = await hostile.structured(
        "compozy__session_events", {"session_id": sid, "result_view": "full"}
    )
    ended = [e for e in events["events"] if e["kind"] == "turn_ended"]
    assert ended[-1]["payload"]["stop_reason"] == "agent_start_failed"


@pytest.mark.settings(agent_start_timeout_seconds=3)
async def test_a_prompt_that_does_not_wait_returns_while_the_agent_starts(hostile: Caller) -> None:
    """``wait: false`` returns the queued turn before the agent answers (this one never
    does); the start failure then fails the turn."""
    sid = await _session(hostile, "garbage_lines")
    turn = await _prompt(hostile, sid, "hello", wait=False)
    assert turn["status"] == "queued"
    assert (await _runtime(hostile, sid))["status"] in ("unbound", "binding")
    waited = await hostile.structured(
        "compozy__session_wait",
        {"session_id": sid, "turn_id": turn["turn_id"], "timeout_seconds": GUARD_SECONDS},
    )
    assert (waited["turn"]["status"], waited["turn"]["stop_reason"]) == (
        "failed",
        "agent_start_failed",
    )


# --- what an agent writes --------------------------------------------------------------------


async def test_an_agent_writing_stdout_without_a_newline_is_failed_as_frame_too_large(
    hostile: Caller,
) -> None:
    """Never buffered past the limit: the bind fails at the limit, this process does not grow
    by what the agent writes (it writes hundreds of MB a second)."""
    before = _peak_rss_mb()
    sid = await _session(hostile, "no_newline")
    turn = await _prompt(hostile, sid, "hello")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_start_failed")
    runtime = await _runtime(hostile, sid)
    assert runtime["failure"]["kind"] == "frame_too_large"
    summary = runtime["failure"]["summary"]
    assert "agent_max_frame_bytes: 1048576" in summary
    assert "COMPOZY_AGENT_MAX_FRAME_BYTES" in summary
    assert _peak_rss_mb() - before < 64


async def test_a_line_past_the_limit_mid_turn_fails_the_turn_and_the_runtime(
    hostile: Caller,
) -> None:
    sid = await _session(hostile, "flood_mid_turn")
    assert (await _prompt(hostile, sid, "hello"))["status"] == "completed"
    before = _peak_rss_mb()
    turn = await _prompt(hostile, sid, "flood")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "frame_too_large")
    assert "COMPOZY_AGENT_MAX_FRAME_BYTES" in turn["failure"]["summary"]
    runtime = await _runtime(hostile, sid)
    assert (runtime["status"], runtime["failure"]["kind"]) == ("failed", "frame_too_large")
    assert _peak_rss_mb() - before < 64


@pytest.mark.settings(agent_start_timeout_seconds=3)
async def test_the_start_timeout_holds_whatever_the_agent_writes(hostile: Caller) -> None:
    """Lines that are not ACP, as fast as the agent can: the bind ends at the start timeout,
    quoting what the agent wrote."""
    sid = await _session(hostile, "garbage_lines")
    turn = await _prompt(hostile, sid, "hello")
    assert turn["stop_reason"] == "agent_start_failed"
    failure = (await _runtime(hostile, sid))["failure"]
    assert failure["kind"] == "agent_start_timeout"
    assert "stdout (not ACP): this is not json" in failure["summary"]


# the start timeout ends the silent agent; the echo agent bound after it starts within it on a
# loaded machine too
@pytest.mark.settings(agent_start_timeout_seconds=8)
async def test_an_agent_ignoring_sigterm_with_a_detached_child_on_its_stdio_does_not_hang_the_bind(
    hostile: Caller, pidfile: Path
) -> None:
    """The agent survives SIGTERM and a child of another session holds its stdout and stderr:
    the bind still ends (start timeout, then SIGKILL), and the session's lock is free."""
    sid = await _session(hostile, "ignore_term")
    turn = await _prompt(hostile, sid, "hello")
    assert turn["stop_reason"] == "agent_start_failed"
    assert (await _runtime(hostile, sid))["failure"]["kind"] == "agent_start_timeout"
    assert procfs.running(int(pidfile.read_text()))  # the detached child lives on: not ours to end
    with anyio.fail_after(GUARD_SECONDS):  # the lock is free: another bind runs at once
        again = await hostile.session(
            "compozy__session_runtime_set",
            {"session_id": sid, "provider": "echo", "selection_revision": 1, "generation": 0},
        )
    assert again["runtime"]["status"] == "ready"


# --- an agent that ends ----------------------------------------------------------------------


async def test_a_crash_with_a_prompt_queued_keeps_the_running_turns_output(
    hostile: Caller,
) -> None:
    sid = await _session(hostile, "stream_crash")
    assert (await _prompt(hostile, sid, "hello"))["status"] == "completed"
    first = await _prompt(hostile, sid, "stream-crash", wait=False)
    second = await _prompt(hostile, sid, "after the crash", wait=False)
    waited = await hostile.structured(
        "compozy__session_wait",
        {
            "session_id": sid,
            "turn_id": first["turn_id"],
            "timeout_seconds": GUARD_SECONDS,
            "result_view": "full",
        },
    )
    crashed = waited["turn"]
    assert (crashed["status"], crashed["stop_reason"]) == ("failed", "agent_crashed")
    assert crashed["chunks"] == [f"part {n} " for n in range(1, 7)]
    assert "exited with status 3" in crashed["failure"]["summary"]
    history = await hostile.structured("compozy__session_history", {"session_id": sid})
    queued = next(t for t in history["turns"] if t["turn_id"] == second["turn_id"])
    assert (queued["status"], queued["stop_reason"]) == ("failed", "agent_crashed")
    assert "before it took this turn" in queued["failure"]["summary"]


async def test_an_agent_whose_needed_child_died_fails_its_runtime(
    hostile: Caller, pidfile: Path
) -> None:
    """Every turn would fail at once (an adapter whose Claude Code died): the runtime fails
    with what happened instead of staying ``ready``, and the next prompt starts it again."""
    sid = await _session(hostile, "needs_child")
    assert (await _prompt(hostile, sid, "hello"))["status"] == "completed"
    helper = int(pidfile.read_text())
    os.kill(helper, signal.SIGKILL)
    with anyio.fail_after(GUARD_SECONDS):  # signals are delivered soon, not at once
        while procfs.running(helper):
            await anyio.sleep(0.01)
    turn = await _prompt(hostile, sid, "are you there")
    assert turn["status"] == "failed"
    runtime = await _runtime(hostile, sid)
    assert (runtime["status"], runtime["failure"]["kind"]) == ("failed", "agent_error")
    assert "Query closed before response received" in runtime["failure"]["summary"]
    assert (await _prompt(hostile, sid, "again"))["status"] == "completed"


async def test_a_failed_turn_keeps_the_agents_reason(hostile: Caller) -> None:
    sid = await _session(hostile, "auth_error")
    turn = await _prompt(hostile, sid, "hello")
    assert (turn["status"], turn["stop_reason"]) == ("failed", "agent_error")
    assert turn["failure"] == {"kind": "agent_error", "summary": "Authentication required"}
    history = await hostile.structured("compozy__session_history", {"session_id": sid})
    assert history["turns"][-1]["failure"]["summary"] == "Authentication required"
