"""Issue 15, "How it is shown": a three-node Loop (session_status full -> run-agent on the
``echo`` agent -> gate) runs end to end on a daemon, driven by the CLI (``--url``) and over
HTTP, and a daemon restart in the middle of the run does not lose it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Home, compozy, running_daemon
from tests.loops.support import (
    SPEC_EXAMPLE_COMPACT,
    SPEC_MESSAGE,
    define_general,
    gate,
    graph,
    status_node,
)

pytestmark = pytest.mark.process

THREE_NODES = graph(
    status_node(view="full"),
    "id: tools\nclass: action\nkind: run-agent\nparams:\n  agent: echo\n"
    '  prompt: "Tools allowed: '
    '{{ .nodes.inspect.output.session.lineage.permission_policy.tools }}"',
    gate("review", ("tools_ok", "Are these the tools the agent should have?")),
    edges=(("inspect", "tools"), ("tools", "review")),
)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def _serve(home: Home) -> Any:
    return running_daemon(home, "--port", "0", "--no-uds", listeners=1)


def _new_session(home: Home, url: str) -> str:
    """A session made on the daemon at ``url``, through the CLI; its id."""
    created = compozy(
        home,
        "--url",
        url,
        "tool",
        "invoke",
        "compozy__session_create",
        "--input",
        '{"agent_name":"general"}',
        "-o",
        "json",
    )
    session: str = json.loads(ok(created))["result"]["structured"]["session"]["id"]
    return session


def test_a_run_on_a_daemon_survives_a_restart(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    path = tmp_path / "loop.yaml"
    path.write_text(THREE_NODES, encoding="utf-8")
    with _serve(home) as daemon:
        url = daemon.url
        assert url is not None
        session = _new_session(home, url)
        out = ok(
            compozy(
                home, "--url", url, "loop", "run", str(path), "--input", f"session_id={session}"
            )
        )
        run_id = out.splitlines()[0].split()[1]
        assert out.splitlines()[-1] == f"waiting at gate: compozy loop approve {run_id}"
    # the daemon is gone; a new one on the same store
    with _serve(home) as daemon:
        url = daemon.url
        assert url is not None
        with daemon.client() as http:
            answer = http.post(
                "/api/tools/compozy__loop_status/invoke",
                json={"input": {"run_id": run_id}},
            )
            assert answer.status_code == 200
            run = answer.json()["result"]["structured"]["run"]
            assert run["status"] == "waiting"
            review = run["nodes"][-1]
            assert review["gate"]["criteria"] == [
                {"id": "tools_ok", "prompt": "Are these the tools the agent should have?"}
            ]
        approved = ok(compozy(home, "--url", url, "loop", "approve", run_id))
        assert approved.splitlines()[-1] == "succeeded"
        full = json.loads(
            ok(compozy(home, "--url", url, "loop", "status", run_id, "--full", "-o", "json"))
        )
        tools = next(n for n in full["run"]["nodes"] if n["node_id"] == "tools")
        assert tools["output"]["final_message"] == 'echo: Tools allowed: ["*"]'
        assert tools["output"]["stop_reason"] == "end_turn"


def test_lint_over_http_on_a_daemon(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    define_general(home.path)
    with _serve(home) as daemon, daemon.client() as http:
        answer = http.post(
            "/api/tools/compozy__loop_validate/invoke",
            json={"input": {"definition": SPEC_EXAMPLE_COMPACT}},
        )
        assert answer.status_code == 200
        items = answer.json()["result"]["structured"]["items"]
        assert [(i["code"], i["message"]) for i in items] == [
            ("result_view_field_requires_full", SPEC_MESSAGE)
        ]
        refused = http.post(
            "/api/tools/compozy__loop_create/invoke",
            json={"input": {"definition": SPEC_EXAMPLE_COMPACT}},
        )
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert (error["code"], error["reason"]) == ("tool_invalid_input", "loop_invalid")


def _wait_for(home: Home, url: str, run_id: str, node_id: str, status: str) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + 60
    while True:
        shown = json.loads(ok(compozy(home, "--url", url, "loop", "status", run_id, "-o", "json")))
        node = next(n for n in shown["run"]["nodes"] if n["node_id"] == node_id)
        if node["status"] == status:
            run: dict[str, Any] = shown["run"]
            return run
        assert time.monotonic() < deadline, shown
        time.sleep(0.1)


def test_a_daemon_killed_in_the_middle_of_a_node_resumes_the_run(tmp_path: Path) -> None:
    """SIGKILL while a read-only node runs (a slow tool.pre_call hook holds it): the next
    daemon resumes the run from that node."""
    import signal

    home = Home.make(tmp_path)
    home.path.mkdir(parents=True, exist_ok=True)
    hooks = home.path / "hooks.yaml"
    hooks.write_text(
        "hooks:\n"
        "  - id: slow-status\n"
        "    event: tool.pre_call\n"
        "    matcher:\n"
        "      tool: compozy__session_status\n"
        "    command: sleep 5\n"
        "    timeout: 60\n",
        encoding="utf-8",
    )
    path = tmp_path / "loop.yaml"
    path.write_text(THREE_NODES, encoding="utf-8")
    with _serve(home) as daemon:
        url = daemon.url
        assert url is not None
        session = _new_session(home, url)
        out = ok(
            compozy(
                home,
                "--url",
                url,
                "loop",
                "run",
                str(path),
                "--detach",
                "--input",
                f"session_id={session}",
            )
        )
        run_id = out.splitlines()[0].split()[1]
        _wait_for(home, url, run_id, "inspect", "running")
        daemon.stop(signal.SIGKILL)
    hooks.unlink()
    with _serve(home) as daemon:
        url = daemon.url
        assert url is not None
        run = _wait_for(home, url, run_id, "review", "waiting")
        assert run["status"] == "waiting"
        assert "recovered_at" in run
        assert [n["status"] for n in run["nodes"]] == ["succeeded", "succeeded", "waiting"]
