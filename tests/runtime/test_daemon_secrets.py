"""Issue 22, item 4, on a real daemon that wants a bearer token: no hook and no agent it starts
sees the token (neither ``COMPOZY_TOKEN``, ``COMPOZY_TOKEN_FILE`` nor the token's value under
any name), and an agent still reaches the daemon through its own ``compozy proxy --session``,
with its session's credential."""

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


@pytest.fixture(params=["env", "file"])
def given(request: pytest.FixtureRequest, tmp_path: Path, token: str) -> tuple[Home, list[str]]:
    """The daemon's token from ``COMPOZY_TOKEN``, or from ``--token-file`` (with
    ``COMPOZY_TOKEN_FILE`` set, and the operator's shell holding the token under another
    name): the home, and the arguments of ``compozy serve``."""
    home = Home.make(tmp_path)
    home.path.mkdir(parents=True, exist_ok=True)
    if request.param == "env":
        return home.with_env(COMPOZY_TOKEN=token), []
    held = tmp_path / "token"
    held.write_text(token + "\n", encoding="utf-8")
    held.chmod(0o600)
    home = home.with_env(COMPOZY_TOKEN_FILE=str(held), OPERATOR_SECRET=token)
    return home, ["--token-file", str(held)]


def _write_env_dumpers(home: Home, agent_env: Path, hook_env: Path) -> None:
    # an agent that writes down its environment, then is the echo agent
    argv = ["-c", 'env > "$0"; exec "$1" -m compozy_mcp.echo_agent', str(agent_env)]
    (home.path / "agents.yaml").write_text(
        "agents:\n  envdump:\n    command: sh\n    args: "
        + json.dumps([*argv, sys.executable])
        + "\n",
        encoding="utf-8",
    )
    (home.path / "hooks.yaml").write_text(
        "hooks:\n  - id: envdump\n    event: tool.pre_call\n"
        "    matcher: {tool: compozy__session_status}\n"
        f"    command: {json.dumps(['sh', '-c', f'env > {hook_env}'])}\n",
        encoding="utf-8",
    )


def test_no_hook_or_agent_sees_the_token_and_the_agent_calls_back_with_its_credential(
    given: tuple[Home, list[str]], token: str, tmp_path: Path
) -> None:
    home, serve_args = given
    agent_env, hook_env = tmp_path / "agent.env", tmp_path / "hook.env"
    _write_env_dumpers(home, agent_env, hook_env)
    auth = {"Authorization": f"Bearer {token}"}
    with (
        short_dir() as where,
        running_daemon(
            home, "--port", "0", "--uds", str(where / "d.sock"), *serve_args, ready_headers=auth
        ) as daemon,
        daemon.client(headers=auth) as http,
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
        assert "COMPOZY_TOKEN_FILE=" not in text, dumped.name
    # the agent itself holds no credential: the entry of its proxy carries it
    assert "COMPOZY_SESSION_TOKEN=" not in agent_env.read_text(encoding="utf-8")
