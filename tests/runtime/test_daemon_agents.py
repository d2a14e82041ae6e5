"""Issue 12 on a daemon: agents are the daemon's processes. HTTP routes (checked against the
OpenAPI document), the Server-Sent Events stream, the CLI against the daemon, and no agent
process left once the daemon stops (SIGTERM and SIGINT)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import (
    COMPOZY,
    Contract,
    ContractClient,
    Daemon,
    Home,
    children,
    running_daemon,
    short_dir,
)
from tests.clirun import run_cli
from tests.waiting import wait_until

from compozy_mcp.runtime import _procfs as procfs

pytestmark = pytest.mark.process


@pytest.fixture
def daemon_home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


@pytest.fixture(scope="module")
def daemon(shared_daemon: Daemon) -> Daemon:
    """One daemon for the tests that make their own sessions on it."""
    return shared_daemon


@pytest.fixture
def api(daemon: Daemon) -> Iterator[ContractClient]:
    with daemon.client() as http:
        document = http.get("/api/openapi.json").json()
        yield ContractClient(http, Contract(document))


def _session(api: ContractClient) -> str:
    _, made = api.post(
        "/api/sessions", json={"agent_name": "general", "provider": "echo"}, expect=201
    )
    return str(made["session"]["id"])


def test_prompt_history_and_events_routes_answer_as_documented(api: ContractClient) -> None:
    sid = _session(api)
    _, done = api.post(
        "/api/sessions/{session_id}/prompt",
        session_id=sid,
        json={"prompt": "hello daemon", "wait": True, "timeout_seconds": 60},
        expect=200,
    )
    assert done["turn"]["final_message"] == "echo: hello daemon"
    _, history = api.get("/api/sessions/{session_id}/history", session_id=sid, expect=200)
    assert [t["status"] for t in history["turns"]] == ["completed"]
    _, events = api.get("/api/sessions/{session_id}/events", session_id=sid, expect=200)
    assert events["events"][-1]["kind"] == "turn_ended"
    _, agents = api.get("/api/agents", expect=200)
    assert "echo" in [a["name"] for a in agents["agents"]]
    _, refused = api.post(
        "/api/sessions/{session_id}/prompt", session_id=sid, json={"text": "x"}, expect=400
    )
    assert refused["error"]["reason"] == "body_invalid"
    _, missing = api.post(
        "/api/sessions/{session_id}/prompt",
        session_id="sess-nope",
        json={"prompt": "x"},
        expect=404,
    )
    assert missing["error"]["code"] == "not_found"


def test_a_permission_request_is_answered_over_http_while_the_events_stream(
    daemon: Daemon, api: ContractClient
) -> None:
    sid = _session(api)
    frames: list[dict[str, Any]] = []

    def stream() -> None:
        with (
            daemon.client() as http,
            http.stream(
                "GET",
                f"/api/sessions/{sid}/events",
                params={"until": "turn_end"},
                headers={"Accept": "text/event-stream"},
            ) as response,
        ):
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[6:]))

    follower = threading.Thread(target=stream)
    follower.start()
    api.post("/api/sessions/{session_id}/prompt", session_id=sid, json={"prompt": "write"})
    deadline = time.monotonic() + 30
    pending: list[dict[str, Any]] = []
    while not pending and time.monotonic() < deadline:
        _, record = api.get("/api/sessions/{session_id}", session_id=sid)
        pending = record["session"]["pending_interactions"]
        time.sleep(0.05)
    assert record["session"]["badge"] == "waiting-for-auth"
    _, answer = api.post(
        "/api/sessions/{session_id}/approve",
        session_id=sid,
        json={"interaction_id": pending[0]["interaction_id"], "decision": "allow-once"},
        expect=200,
    )
    assert answer["decision"] == "allow-once"
    follower.join(timeout=30)
    kinds = [frame["kind"] for frame in frames]
    assert "permission_requested" in kinds
    assert kinds[-1] == "turn_ended"
    assert frames[-1]["payload"] == {"status": "completed", "stop_reason": "end_turn"}
    message = "".join(
        f["payload"]["content"]["text"] for f in frames if f["kind"] == "agent_message_chunk"
    )
    assert message == "wrote notes.txt"


def test_the_cli_prompts_and_approves_through_the_daemon(daemon: Daemon, shared_home: Home) -> None:
    assert daemon.url is not None
    env = {**shared_home.env, "COMPOZY_URL": daemon.url}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env)

    made = json.loads(
        cli("session", "create", "--agent", "g", "--provider", "echo", "-o", "json").stdout
    )
    sid = made["session"]["id"]
    prompt = subprocess.Popen(
        [str(COMPOZY), "session", "prompt", sid, "write the notes"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def pending() -> str | None:
        status = json.loads(cli("session", "status", sid, "-o", "json").stdout)["session"]
        waiting = status["pending_interactions"]
        return str(waiting[0]["interaction_id"]) if waiting else None

    interaction = wait_until(pending, "the prompt's permission request")
    answered = cli("session", "approve", sid, interaction, "allow-once")
    assert answered.stdout == f"answered {interaction} (Write notes.txt): allow-once\n"
    out, err = prompt.communicate(timeout=60)
    assert prompt.returncode == 0, err
    assert f"answer: compozy session approve {sid} {interaction} <choice>" in out
    assert out.rstrip().endswith("wrote notes.txt")
    assert err == "turn 1 completed (end_turn)\n"
    history = cli("session", "history", sid)
    assert "agent: wrote notes.txt" in history.stdout


@pytest.mark.parametrize(
    ("stop", "status"),
    [(signal.SIGTERM, 0), (signal.SIGINT, 0), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["SIGTERM", "SIGINT", "SIGKILL"],
)
def test_no_agent_process_outlives_the_daemon(daemon_home: Home, stop: int, status: int) -> None:
    """Stopped, the daemon ends its agents; killed, it cannot, and its agents end on their own
    when their stdin closes (ACP over stdio); either way the next daemon finds their sessions
    unbound and binds again on the next prompt."""
    with (
        short_dir() as where,
        running_daemon(daemon_home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
        daemon.client() as http,
    ):
        sessions = []
        for _ in range(2):
            made = http.post("/api/sessions", json={"agent_name": "g", "provider": "echo"}).json()
            sid = made["session"]["id"]
            turn = http.post(
                f"/api/sessions/{sid}/prompt", json={"prompt": "hi", "wait": True}
            ).json()
            assert turn["turn"]["status"] == "completed"
            sessions.append(sid)
        agents = children(daemon.process.pid)
        assert len(agents) == 2
        assert daemon.stop(stop) == status
    deadline = time.monotonic() + 10
    while any(procfs.running(pid) for pid in agents) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in agents if procfs.running(pid)]
    with (
        short_dir() as where,
        running_daemon(daemon_home, "--port", "0", "--uds", str(where / "d.sock")) as again,
        again.client() as http,
    ):
        record = http.get(f"/api/sessions/{sessions[0]}").json()["session"]
        assert record["runtime"]["status"] == "unbound"
        turn = http.post(
            f"/api/sessions/{sessions[0]}/prompt", json={"prompt": "back", "wait": True}
        ).json()
        assert turn["turn"]["final_message"] == "echo: back"


def test_a_failing_agent_command_is_a_runtime_failure_with_its_stderr(
    daemon_home: Home, tmp_path: Path
) -> None:
    script = tmp_path / "bad-agent.sh"
    script.write_text("#!/bin/sh\necho 'bad-agent: no credentials found' >&2\nexit 7\n")
    script.chmod(0o755)
    daemon_home.path.mkdir(parents=True, exist_ok=True)
    (daemon_home.path / "agents.yaml").write_text(
        f"agents:\n  bad:\n    command: {script}\n", encoding="utf-8"
    )
    with (
        short_dir() as where,
        running_daemon(daemon_home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
        daemon.client() as http,
    ):
        made = http.post("/api/sessions", json={"agent_name": "g"}).json()["session"]
        bound = http.post(
            "/api/tools/compozy__session_runtime_set/invoke",
            json={
                "input": {
                    "session_id": made["id"],
                    "provider": "bad",
                    "selection_revision": 0,
                    "generation": 0,
                    "result_view": "full",
                }
            },
        ).json()
        runtime = bound["result"]["structured"]["session"]["runtime"]
        assert runtime["status"] == "failed"
        assert runtime["failure"]["kind"] == "agent_start_failed"
        assert runtime["failure"]["summary"] == (
            'agent "bad" failed to start: exited with status 7; '
            "stderr: bad-agent: no credentials found"
        )
        assert children(daemon.process.pid) == set()


def test_without_an_address_the_cli_finds_the_daemon_on_its_socket() -> None:
    """A daemon on ``$COMPOZY_HOME/compozy.sock`` owns the agents: a command given no address
    asks it, so the agent it starts outlives the command; ``COMPOZY_URL=none`` opts out."""
    with short_dir() as root:
        home = Home.make(root)
        with running_daemon(home, "--port", "0") as daemon:
            assert daemon.socket == home.path / "compozy.sock"

            def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
                return run_cli(*args, env={**home.env, **env})

            made = json.loads(
                cli("session", "create", "--agent", "g", "--provider", "echo", "-o", "json").stdout
            )
            sid = made["session"]["id"]
            done = cli("session", "prompt", sid, "hello daemon")
            assert done.returncode == 0, done.stderr
            assert "echo: hello daemon" in done.stdout
            assert len(children(daemon.process.pid)) == 1  # the daemon's agent, still running
            status = json.loads(cli("session", "status", sid, "-o", "json").stdout)
            assert status["session"]["runtime"]["status"] == "ready"
            local = cli("session", "status", sid, "-o", "json", COMPOZY_URL="none")
            assert local.returncode == 0  # in-process, on the same store


def test_session_cancel_counts_only_the_queued_turns(daemon: Daemon, daemon_home: Home) -> None:
    """``compozy session cancel``: the running turn is named, the queue counted apart (the
    commands as typed, in this process: the console script is run by the tests above)."""
    assert daemon.url is not None
    env = {**daemon_home.env, "COMPOZY_URL": daemon.url}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env)

    def runtime_is(sid: str, wanted: str) -> bool:
        found: dict[str, Any] = json.loads(cli("session", "status", sid, "-o", "json").stdout)
        return bool(found["session"]["runtime"]["status"] == wanted)

    made = json.loads(
        cli("session", "create", "--agent", "g", "--provider", "echo", "-o", "json").stdout
    )
    sid = made["session"]["id"]
    for queued in (0, 1):
        started = cli("session", "prompt", sid, "slow 30", "--no-wait", "-o", "json")
        assert started.returncode == 0, started.stderr
        turn_id = json.loads(started.stdout)["turn"]["turn_id"]
        wait_until(lambda: runtime_is(sid, "running"), "the slow turn running")
        for _ in range(queued):
            assert cli("session", "prompt", sid, "later", "--no-wait").returncode == 0
        done = cli("session", "cancel", sid)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"cancelled: {turn_id}; {queued} queued\n"
        wait_until(lambda: runtime_is(sid, "ready"), "the agent ready again after the cancel")
