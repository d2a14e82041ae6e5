"""The real agents, proven (issue 21): Claude Code (``@zed-industries/claude-agent-acp``), Codex
(``@zed-industries/codex-acp``) and Gemini CLI (``gemini --acp``), installed from npm at pinned
versions by ``make node-deps`` (tests/agents/package-lock.json), each run by a daemon against a
fake model API on 127.0.0.1 (tests/fakes): never the network, never a real model.

For each agent: a text turn; a turn where the model calls ``compozy__session_status`` through
compozy's MCP endpoint (compact, then ``result_view: full``) and the fake receives the record;
a permission prompt answered with ``compozy session approve`` (Codex asks none for MCP tools in
its default mode); cancel; session stop and daemon SIGTERM leave no process; a restarted daemon
binds the agent again, loading its ACP session.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.api.support import COMPOZY, Daemon, Home, running_daemon
from tests.fakes.agents import AGENTS, BIN, RealAgent, not_installed
from tests.fakes.server import FakeModel
from tests.leftovers import running

pytestmark = pytest.mark.agents

TURN_SECONDS = 90


@dataclass
class Served:
    agent: RealAgent
    fake: FakeModel
    home: Home
    daemon: Daemon
    daemon_args: tuple[str, ...]

    def http(self) -> httpx2.Client:
        return self.daemon.client()

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert self.daemon.url is not None
        return subprocess.run(
            [str(COMPOZY), "--url", self.daemon.url, *args],
            env=self.home.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def received(self) -> list[dict[str, Any]]:
        return [b for b in self.fake.bodies() if isinstance(b, dict)]


@pytest.fixture(scope="module", params=sorted(AGENTS))
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    reason = not_installed()
    if reason is not None:
        pytest.skip(reason)
    agent = AGENTS[request.param]
    root = tmp_path_factory.mktemp(agent.name)
    with FakeModel(agent.api()) as fake:
        home = Home.make(root)
        env = {
            **agent.environment(fake.url, root),
            "PATH": f"{BIN}{os.pathsep}{home.env.get('PATH', '')}",
            "COMPOZY_URL": "none",
        }
        home = home.with_env(**env)
        args = ("--port", "0", "--no-uds")
        with running_daemon(home, *args, listeners=1) as daemon:
            served = Served(agent, fake, home, daemon, args)
            yield served
            # whatever a test left running ends with the daemon
            daemon.stop()


def _session(served: Served) -> str:
    with served.http() as http:
        made = http.post(
            "/api/sessions", json={"agent_name": served.agent.name, "provider": served.agent.name}
        )
    assert made.status_code == 201, made.text
    return str(made.json()["session"]["id"])


def _prompt(served: Served, sid: str, text: str, *, wait: bool = True) -> dict[str, Any]:
    with served.http() as http:
        done = http.post(
            f"/api/sessions/{sid}/prompt",
            json={"prompt": text, "wait": wait, "timeout_seconds": TURN_SECONDS},
            timeout=TURN_SECONDS + 30,
        )
    assert done.status_code == 200, done.text
    turn: dict[str, Any] = done.json()["turn"]
    return turn


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    level = [pid]
    while level:
        level = [child for parent in level for child in children.get(parent, [])]
        found.update(level)
    return found


def _alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if running(pid)}


def _wait_gone(pids: set[int], seconds: float = 15.0) -> set[int]:
    import time

    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


# --- a text turn --------------------------------------------------------------------------------


def test_a_text_turn(served: Served) -> None:
    sid = _session(served)
    turn = _prompt(served, sid, "hello from compozy")
    assert turn["status"] == "completed", turn
    assert turn["summary"]["text"] == "fake reply: hello from compozy"
    with served.http() as http:
        session = http.get(f"/api/sessions/{sid}").json()["session"]
    runtime = session["runtime"]
    assert runtime["effective"]["provider"] == served.agent.name
    assert runtime["acp_session_id"]
    assert (session["badge"], session["board_column"]) == ("idle", "working")


# --- compozy's tools, called by the model, compact and full --------------------------------------


def _answer_permissions(served: Served, sid: str, turn: Callable[[], dict[str, Any]]) -> Any:
    """Run ``turn`` while answering each permission request of the session with the CLI."""
    import threading
    import time

    result: list[Any] = []
    runner = threading.Thread(target=lambda: result.append(turn()))
    runner.start()
    answered = 0
    while runner.is_alive():
        with served.http() as http:
            pending = http.get(f"/api/sessions/{sid}").json()["session"]["pending_interactions"]
        if pending and served.agent.allow is not None:
            done = served.cli("session", "approve", sid, served.agent.allow)
            assert done.returncode == 0, done.stderr
            answered += 1
        time.sleep(0.2)
    runner.join()
    return result[0], answered


def test_the_model_calls_compozys_tool_and_reads_compact_then_full(served: Served) -> None:
    sid = _session(served)
    before = len(served.received())
    compact_ask = f'tool:session_status {{"session_id": "{sid}"}}'
    turn, answered = _answer_permissions(served, sid, lambda: _prompt(served, sid, compact_ask))
    assert turn["status"] == "completed", turn
    assert turn["summary"]["text"].startswith("tools done: 1 result")
    if served.agent.allow is not None:
        assert answered >= 1  # the agent asked, the operator answered with the CLI
    results = [r for body in served.received()[before:] for r in served.agent.results(body)]
    assert any(sid in r and "board_column" in r for r in results), results
    assert not any("available_commands" in r for r in results)  # compact
    full_ask = f'tool:session_status {{"session_id": "{sid}", "result_view": "full"}}'
    mark = len(served.received())
    turn, _ = _answer_permissions(served, sid, lambda: _prompt(served, sid, full_ask))
    assert turn["status"] == "completed", turn
    results = [r for body in served.received()[mark:] for r in served.agent.results(body)]
    assert any("available_commands" in r and "supervision" in r for r in results), results


# --- cancel -------------------------------------------------------------------------------------


def test_a_slow_turn_is_cancelled(served: Served) -> None:
    import time

    sid = _session(served)
    queued = _prompt(served, sid, "slow please", wait=False)
    deadline = time.monotonic() + TURN_SECONDS
    with served.http() as http:
        while time.monotonic() < deadline:
            events = http.get(f"/api/sessions/{sid}/events").json()["events"]
            if any(e["kind"] == "agent_message_chunk" for e in events):
                break
            time.sleep(0.1)
        cancelled = http.post(f"/api/sessions/{sid}/cancel").json()
    assert cancelled["running_turn_id"] == queued["turn_id"]
    with served.http() as http:
        waited = http.post(
            "/api/tools/compozy__session_wait/invoke",
            json={
                "input": {"session_id": sid, "turn_id": queued["turn_id"], "timeout_seconds": 60}
            },
            timeout=90,
        ).json()["result"]["structured"]["turn"]
    assert waited["status"] in ("cancelled", "completed"), waited
    assert waited["stop_reason"] == "cancelled"


# --- processes end with their session and their daemon; a restart loads the session ---------------


def test_stop_and_sigterm_leave_no_process_and_a_restart_loads_the_session(
    served: Served,
) -> None:
    daemon_pid = served.daemon.process.pid
    sid = _session(served)
    assert _prompt(served, sid, "first")["status"] == "completed"
    stopped = _session(served)
    assert _prompt(served, stopped, "to stop")["status"] == "completed"
    agents = _descendants(daemon_pid)
    assert agents
    before_stop = _descendants(daemon_pid)
    with served.http() as http:
        assert (
            http.post(
                "/api/tools/compozy__session_stop/invoke", json={"input": {"session_id": stopped}}
            ).status_code
            == 200
        )
    assert len(_alive(before_stop)) < len(before_stop)  # the stopped session's agent ended
    everything = _descendants(daemon_pid)
    assert served.daemon.stop(signal.SIGTERM) == 0
    assert _wait_gone(everything) == set(), "processes outlived the daemon"
    with running_daemon(served.home, *served.daemon_args, listeners=1) as again:
        served.daemon = again
        turn = _prompt(served, sid, "after the restart")
        assert turn["status"] == "completed", turn
        assert turn["summary"]["text"] == "fake reply: after the restart"
        with served.http() as http:
            full = http.get(f"/api/sessions/{sid}").json()["session"]
        assert full["runtime"]["status"] == "ready"
