"""A daemon served from a PostgreSQL store end to end (``compozy serve --store postgresql://…``):
a session created and prompted (the echo agent), its status compact and full over HTTP and
over MCP; and the CLI in-process, pointed at the same database by ``COMPOZY_STORE``, reads
what the daemon wrote. Nothing is written to the home's SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from tests.api.support import Home
from tests.clirun import run_cli
from tests.store.daemons import daemon_on_store

pytestmark = [pytest.mark.postgres, pytest.mark.process]

STATUS = "compozy__session_status"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


async def _mcp_status(url: str, session_id: str, view: str) -> dict[str, object]:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(trust_env=False, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        result = await client.call_tool(STATUS, {"session_id": session_id, "result_view": view})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict)
    session: dict[str, object] = result.structured_content["session"]
    return session


@pytest.mark.anyio
async def test_a_daemon_on_postgresql_creates_prompts_and_shows_a_session(
    home: Home, postgres_url: str
) -> None:
    with daemon_on_store(home, postgres_url) as (daemon, http):
        made = http.post("/api/sessions", json={"agent_name": "general", "provider": "echo"})
        assert made.status_code == 201, made.text
        session_id = made.json()["session"]["id"]
        done = http.post(
            f"/api/sessions/{session_id}/prompt",
            json={"prompt": "hello postgres", "wait": True, "timeout_seconds": 60},
        )
        assert done.status_code == 200, done.text
        assert done.json()["turn"]["final_message"] == "echo: hello postgres"

        def invoked(view: str) -> dict[str, object]:
            answer = http.post(
                f"/api/tools/{STATUS}/invoke",
                json={"input": {"session_id": session_id, "result_view": view}},
            )
            assert answer.status_code == 200, answer.text
            session: dict[str, object] = answer.json()["result"]["structured"]["session"]
            return session

        compact, full = invoked("compact"), invoked("full")
        assert compact["id"] == full["id"] == session_id
        assert len(json.dumps(compact)) < len(json.dumps(full))
        assert http.get(f"/api/sessions/{session_id}").json()["session"] == full
        assert daemon.url is not None
        assert await _mcp_status(f"{daemon.url}/mcp", session_id, "full") == full
        assert await _mcp_status(f"{daemon.url}/mcp", session_id, "compact") == compact

        health = http.get("/api/health").json()
        assert health["status"] == "ok"
        assert health["store"]["reachable"] is True

    # the CLI in-process, on the same database by COMPOZY_STORE, reads what the daemon wrote
    env = {**home.env, "COMPOZY_STORE": postgres_url}
    listed = await anyio.to_thread.run_sync(
        lambda: run_cli("session", "list", "-o", "json", env=env)
    )
    assert listed.returncode == 0, listed.stderr
    assert session_id in [s["id"] for s in json.loads(listed.stdout)["sessions"]]
    assert not (home.path / "compozy.db").exists()
