"""``compozy agent list`` (issue 12) as a user types it: a table of the agents a session can
run, with the problems of agents.yaml files; ``-o json`` / ``-o yaml`` the route's document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.clirun import run_cli
from tests.leftovers import running


def _env(home: Path) -> dict[str, str]:
    return {"COMPOZY_HOME": str(home), "COMPOZY_URL": "none", "COLUMNS": "120", "NO_COLOR": "1"}


def test_agent_list_is_a_table_with_the_problems_of_agent_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "agents.yaml").write_text(
        "agents:\n  reviewer:\n    command: reviewer-acp\n    models: [m1, m2]\n"
        "  broken:\n    args: [x]\n",
        encoding="utf-8",
    )
    done = run_cli("agent", "list", env=_env(home))
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["NAME", "SOURCE", "MODELS", "DESCRIPTION"]
    names = [row.split()[0] for row in rows if not row.startswith("problem:")]
    assert names == ["claude", "codex", "echo", "gemini", "reviewer"]
    reviewer = next(row for row in rows if row.startswith("reviewer"))
    assert reviewer.split()[1:4] == ["home", "m1,", "m2"]
    assert (
        'problem: $COMPOZY_HOME/agents.yaml agent broken: field "command" is required'
        in done.stdout
    )


def test_agent_list_documents_are_the_routes_payload(tmp_path: Path) -> None:
    as_json = json.loads(run_cli("agent", "list", "-o", "json", env=_env(tmp_path)).stdout)
    as_yaml = yaml.safe_load(run_cli("agent", "list", "-o", "yaml", env=_env(tmp_path)).stdout)
    assert as_json == as_yaml
    echo = next(agent for agent in as_json["agents"] if agent["name"] == "echo")
    assert echo["models"] == ["echo-1"]
    assert echo["command"][1:] == ["-m", "compozy_mcp.echo_agent"]
    assert as_json["problems"] == []


@pytest.mark.process
def test_session_prompt_without_a_daemon_streams_one_json_object_per_update(
    tmp_path: Path,
) -> None:
    """No daemon: the command runs the echo agent itself for its length (a process)."""
    env = {**os.environ, **_env(tmp_path)}
    compozy = str(Path(sys.executable).parent / "compozy")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [compozy, *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    made = json.loads(
        cli("session", "create", "--agent", "g", "--provider", "echo", "-o", "json").stdout
    )
    sid = made["session"]["id"]
    done = cli("session", "prompt", sid, "plan it", "-o", "json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [event["kind"] for event in events]
    # the prompt's own turn only: not the agent's session updates before it (issue 21)
    assert kinds[0] == "turn_started"
    assert {event["turn_id"] for event in events} == {events[0]["turn_id"]}
    assert kinds.count("plan") == 4
    assert events[-1]["kind"] == "turn_ended"
    assert events[-1]["payload"] == {"status": "completed", "stop_reason": "end_turn"}
    history = json.loads(cli("session", "history", sid, "-o", "json").stdout)
    (turn,) = history["turns"]
    assert turn["summary"]["text"] == "Plan done: 3 steps."
    assert turn["chunks"]  # session commands print complete turns (spec, CLI)
    full = json.loads(cli("session", "history", sid, "--full", "-o", "json").stdout)
    assert len(full["turns"][0]["plan"]) == 3


def _session_with_a_turn(tmp_path: Path, text: str) -> tuple[str, dict[str, Any]]:
    """A session made with the CLI, and one turn of ``text`` run on the echo agent in this
    process (the unit tier starts no agent process); the session's complete history."""
    import anyio
    from tests.runtime.inprocess import InProcessLauncher

    from compozy_mcp.assembly import open_app
    from compozy_mcp.config import Settings

    made = run_cli(
        "session", "create", "--agent", "g", "--provider", "echo", "-o", "json", env=_env(tmp_path)
    )
    sid = str(json.loads(made.stdout)["session"]["id"])

    async def take_a_turn() -> dict[str, Any]:
        with open_app(Settings(home=tmp_path), launcher=InProcessLauncher()) as app:
            prompt = {"session_id": sid, "prompt": text, "wait": True, "timeout_seconds": 30}
            await app.dispatcher.call("compozy__session_prompt", prompt)
            history = await app.dispatcher.call(
                "compozy__session_history", {"session_id": sid, "result_view": "full"}
            )
            await app.shutdown()
            return dict(history.structured)

    return sid, anyio.run(take_a_turn)


def test_session_history_json_prints_complete_turns_as_the_session_api_does(
    tmp_path: Path,
) -> None:
    """Spec, CLI: "compozy session ... commands and their JSON output do not change; they read
    the HTTP/UDS session API": ``-o json`` prints each turn complete, with or without --full."""
    env = _env(tmp_path)
    sid, complete = _session_with_a_turn(tmp_path, "plan it")
    printed = json.loads(run_cli("session", "history", sid, "-o", "json", env=env).stdout)
    assert printed == complete
    (turn,) = printed["turns"]
    assert {"final_message", "chunks", "thoughts", "tool_calls", "plan"} <= set(turn)
    assert len(turn["plan"]) == 3
    with_full = run_cli("session", "history", sid, "--full", "-o", "json", env=env)
    assert json.loads(with_full.stdout) == printed


def test_tool_invoke_session_events_compact_keeps_the_turns_end(tmp_path: Path) -> None:
    """Spec, what compact keeps, through ``compozy tool invoke`` as a script reads it."""
    sid, _ = _session_with_a_turn(tmp_path, "hello")
    tool_input = json.dumps({"session_id": sid})
    done = run_cli(
        "tool",
        "invoke",
        "compozy__session_events",
        "--input",
        tool_input,
        "-o",
        "json",
        env=_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)["result"]["structured"]["events"]
    assert events[-1]["payload"] == {"status": "completed", "stop_reason": "end_turn"}
    chunks = [e for e in events if e["kind"] == "agent_message_chunk"]
    assert chunks
    assert all("payload" not in e for e in chunks)


def test_session_approve_without_an_id_needs_exactly_one_pending_interaction(
    tmp_path: Path,
) -> None:
    from compozy_mcp.assembly import open_app
    from compozy_mcp.calls import CallInfo
    from compozy_mcp.config import Settings
    from compozy_mcp.sessions.model import Interaction

    env = _env(tmp_path)
    created = run_cli("session", "create", "--agent", "g", "-o", "json", env=env)
    sid = json.loads(created.stdout)["session"]["id"]
    with open_app(Settings(home=tmp_path)) as app, app.store.write() as writer:
        ledger = app.sessions.ledger
        row = writer.session(sid)
        assert row is not None
        state = ledger.state(row)
        for n in (1, 2):
            state.pending_interactions.append(
                Interaction(
                    interaction_id=f"int-{n}",
                    kind="permission",
                    provider_request_id=f"req-{n}",
                    created_at="2026-12-03T10:00:00Z",
                )
            )
        ledger.save(writer, CallInfo("test"), row, state)
    done = run_cli("session", "approve", sid, "allow-once", env=env)
    assert done.returncode == 2
    assert f'session "{sid}" has 2 pending interactions (int-1, int-2): name the one to answer' in (
        done.stderr
    )
    extra = run_cli("session", "approve", sid, "int-1", "allow-once", "more", env=env)
    assert extra.returncode == 2
    assert "takes the interaction id (optional) and one choice; got 3 words" in extra.stderr


def _stand_in_npm(tmp_path: Path, script: str) -> Path:
    """A directory to put first on PATH, holding an ``npm`` that runs ``script`` (sh)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(f"#!/bin/sh\n{script}\n")
    npm.chmod(0o755)
    return bin_dir


@pytest.mark.process
def test_agent_install_puts_the_pinned_package_where_the_runtime_finds_it(
    tmp_path: Path,
) -> None:
    """With a stand-in npm on PATH (written for the test: never the registry) that records
    what it was asked."""
    log = tmp_path / "npm.log"
    bin_dir = _stand_in_npm(tmp_path, f'echo "$@" >> {log}')
    home = tmp_path / "home"
    env = {"COMPOZY_HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "COMPOZY_URL": "none"}
    done = run_cli("agent", "install", "claude", env=env)
    assert done.returncode == 0, done.stderr
    asked = log.read_text().split()
    assert asked[:3] == ["install", "--prefix", str(home / "agents")]
    assert asked[-1] == "@zed-industries/claude-agent-acp@0.23.1"
    refused = run_cli("agent", "install", "echo", env=env)
    assert refused.returncode == 2
    assert "names no npm package" in refused.stderr


@pytest.mark.process
def test_ctrl_c_during_agent_install_stops_npm_with_it(tmp_path: Path) -> None:
    """SIGINT to compozy alone (``kill -INT``, not a terminal's Ctrl-C, which npm would get
    too): npm, which compozy waits for, must not run on without it."""
    import signal
    import time

    from tests.api.support import COMPOZY

    started = tmp_path / "npm.pid"
    bin_dir = _stand_in_npm(tmp_path, f"echo $$ > {started}\nexec sleep 60")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env.update(COMPOZY_HOME=str(tmp_path / "home"), COMPOZY_URL="none")
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    said = tmp_path / "stderr"
    with said.open("w") as stderr:  # a file, not a pipe: an orphaned npm would hold it open
        process = subprocess.Popen(
            [str(COMPOZY), "agent", "install", "claude"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + 20
    while not (started.exists() and started.read_text().strip()):
        assert process.poll() is None, said.read_text()
        assert time.monotonic() < deadline, "npm never started"
        time.sleep(0.01)
    npm_pid = int(started.read_text())
    try:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130, said.read_text()
        assert "Traceback" not in said.read_text()
        while running(npm_pid):
            assert time.monotonic() < deadline + 20, "npm runs on without compozy"
            time.sleep(0.01)
    finally:
        if Path(f"/proc/{npm_pid}").exists():
            os.kill(npm_pid, signal.SIGKILL)
