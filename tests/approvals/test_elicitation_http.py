"""Issue 30, item 1: over Streamable HTTP too, a managed session's call that waits for approval
is put to the person at its client (elicitation, on the call's own event stream), directly to
the daemon and through a relaying ``compozy proxy``; the answer goes back and the call runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from tests.api.support import COMPOZY, Daemon, Home, compozy_process, running_daemon
from tests.proxy.support import Home as ProxyHome
from tests.proxy.support import spawned

from compozy_mcp.hostapi.wire import SESSION_HEADER

pytestmark = [pytest.mark.process, pytest.mark.anyio]

RENAME = "compozy__session_rename"


class Person:
    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "allow-once"})


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    # approvals as a user has them: a managed session's mutating call waits for one
    return Home.make(tmp_path_factory.mktemp("home")).with_env(COMPOZY_PERMISSION_MODE="default")


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    """One daemon for the module: each test makes its own session and asks about it only."""
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


def _session(home: Home, daemon: Daemon) -> str:
    url = str(daemon.url)
    done = compozy_process(home, "--url", url, "session", "create", "--agent", "g", "-o", "json")
    assert done.returncode == 0, done.stderr
    ident: str = json.loads(done.stdout)["session"]["id"]
    return ident


def _renamed(result: types.CallToolResult, name: str) -> None:
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["session"]["name"] == name


async def test_an_approval_is_asked_over_http_and_the_call_runs(home: Home, daemon: Daemon) -> None:
    sid = _session(home, daemon)
    person = Person()
    http = httpx2.AsyncClient(headers={SESSION_HEADER: sid}, timeout=60)
    transport = streamable_http_client(f"{daemon.url}/mcp", http_client=http)
    async with http, Client(transport, mode="legacy", cache=None, elicitation_callback=person) as c:
        args: dict[str, Any] = {"session_id": sid, "name": "asked over http"}
        _renamed(await c.call_tool(RENAME, args), "asked over http")
    [question] = person.questions
    assert f'Session "{sid}" asks to call {RENAME}' in question


async def test_through_the_relay_the_question_and_the_answer_go_both_ways(
    home: Home, daemon: Daemon
) -> None:
    sid = _session(home, daemon)
    person = Person()
    relay_home = ProxyHome(home.path.parent, dict(home.env))
    params = StdioServerParameters(
        command=str(COMPOZY),
        args=["--url", str(daemon.url), "proxy", "--session", sid],
        env=dict(home.env),
    )
    args = {"session_id": sid, "name": "asked through the relay"}
    async with spawned(relay_home, params, "legacy", "relay", elicitation_callback=person) as c:
        _renamed(await c.call_tool(RENAME, args), "asked through the relay")
    assert len(person.questions) == 1
