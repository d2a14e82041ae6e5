"""Issue 22, item 4, on a real daemon that wants a bearer token: no hook and no agent it starts
sees the token (neither ``COMPOZY_TOKEN`` nor its value under any name), and an agent still
reaches the daemon through its own ``compozy proxy --session``, with its session's credential."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import pytest
from tests.api.support import Home, running_daemon, short_dir

pytestmark = pytest.mark.process


@pytest.fixture
def token() -> str:
    return "tok-" + secrets.token_hex(16)


@pytest.fixture
def home(tmp_path: Path, token: str) -> Home:
    home = Home.make(tmp_path).with_env(COMPOZY_TOKEN=token)
    home.path.mkdir(parents=True, exist_ok=True)
    return home


def test_no_hook_or_agent_sees_the_token_and_the_agent_calls_back_with_its_credential(
    home: Home, token: str, tmp_path: Path
) -> None:
    agent_env, hook_env = tmp_path / "agent.env", tmp_path / "hook.env"
    # an agent that writes down its environment, then is the echo agent
    (home.path / "agents.yaml").write_text(
        "agents:\n  envdump:\n    command: sh\n    args: "
        + json.dumps(
            [
                "-c",
                'env > "$0"; exec "$1" -m compozy_mcp.agents.echo',
                str(agent_env),
                sys.executable,
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    (home.path / "hooks.yaml").write_text(
        "hooks:\n  - id: envdump\n    event: tool.pre_call\n"
        "    matcher: {tool: compozy__session_status}\n"
        f"    command: {json.dumps(['sh', '-c', f'env > {hook_env}'])}\n",
        encoding="utf-8",
    )
    with (
        short_dir() as where,
        running_daemon(
            home,
            "--port",
            "0",
            "--uds",
            str(where / "d.sock"),
            ready_headers={"Authorization": f"Bearer {token}"},
        ) as daemon,
        daemon.client(headers={"Authorization": f"Bearer {token}"}) as http,
    ):
        made = http.post("/api/sessions", json={"agent_name": "general", "provider": "envdump"})
        assert made.status_code == 201, made.text
        sid = made.json()["session"]["id"]
        prompt = f'call compozy__session_status {{"session_id": "{sid}"}}'
        done = http.post(
            f"/api/sessions/{sid}/prompt",
            json={"prompt": prompt, "wait": True, "timeout_seconds": 120},
        )
        assert done.status_code == 200, done.text
        final = done.json()["turn"]["final_message"]
        # the agent's proxy reached the token-guarded daemon, as its session
        assert final.startswith("tool result: "), final
        assert sid in final
    for dumped in (agent_env, hook_env):
        text = dumped.read_text(encoding="utf-8")
        assert token not in text, dumped.name
        assert "COMPOZY_TOKEN=" not in text, dumped.name
    # the agent was given no credential of its own: its proxy's server entry carries it
    assert "COMPOZY_SESSION_TOKEN=" not in agent_env.read_text(encoding="utf-8")
