"""Issue 30, items 1 and 2, with ``@modelcontextprotocol/server-everything`` (the MCP reference
server, pinned in ``everything/``) as an upstream server of the daemon (``compozy serve``) and
of an HTTP proxy (``compozy proxy --http``), and the Python SDK's client over Streamable HTTP:
the four tools it offers only to a client that declares sampling, elicitation or roots are
served, its progress, elicitation and sampling reach the client and come back answered, roots
are the workspace, and the relay lists exactly what the daemon lists."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from tests.api.support import Daemon, running_daemon
from tests.api.support import Home as DaemonHome
from tests.proxy.support import (
    COMPOZY,
    HTTP_READY,
    Home,
    Mode,
    ProxyPool,
    make_home,
    spawned,
)
from tests.upstream.real import define
from tests.upstream.support import raw_call

pytestmark = [pytest.mark.node, pytest.mark.anyio]

EVERYTHING = (
    Path(__file__).parent
    / "everything"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
#: the tools server-everything lists only to a client that declares the capability they use
CONDITIONAL = {
    "everything__get-roots-list",
    "everything__trigger-elicitation-request",
    "everything__trigger-url-elicitation",
    "everything__trigger-sampling-request",
}
#: the tool that must run as an MCP task, which compozy does not carry
TASK_ONLY = "everything__simulate-research-query"
TIMEOUTS = {"startup": 60, "call": 60, "ping_interval": 5, "ping_timeout": 10}


def everything_installed() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is needed to run server-everything")
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed: run `make node-deps`")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    everything_installed()
    made = make_home(tmp_path_factory.mktemp("ev"))
    node = shutil.which("node")
    assert node is not None
    define(
        made,
        notes=False,
        extra=[("everything", "--", node, str(EVERYTHING), "stdio")],
        timeouts=TIMEOUTS,
    )
    return made


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    daemon_home = DaemonHome(home.root / "home", home.env)
    with running_daemon(daemon_home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


@pytest.fixture(scope="module")
def http_proxy(home: Home) -> Iterator[str]:
    pool = ProxyPool(home)
    try:
        process = pool.start(["proxy", "--http", "127.0.0.1:0"], home.env, HTTP_READY)
        yield process.wait_ready().group(1)
    finally:
        pool.close()


@pytest.fixture(params=["daemon", "proxy"])
def url(request: pytest.FixtureRequest) -> str:
    if request.param == "daemon":
        running: Daemon = request.getfixturevalue("daemon")
        assert running.url is not None
        return running.url + "/mcp"
    found: str = request.getfixturevalue("http_proxy")
    return found


class Person:
    """The client's side: answers elicitation and sampling."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="sampled by the person"), model="p-1"
        )

    def callbacks(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicit, "sampling_callback": self.sample}


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def everything_tools(client: Client) -> dict[str, dict[str, Any]]:
    listed = await client.session.list_tools()
    return {
        tool.name: tool.model_dump(by_alias=True, exclude_none=True)
        for tool in listed.tools
        if tool.name.startswith("everything__")
    }


async def test_every_tool_a_capable_client_may_use_is_served_and_task_only_ones_are_not(
    url: str,
) -> None:
    async with Client(url, mode="legacy", cache=None, **Person().callbacks()) as client:
        tools = await everything_tools(client)
    assert set(tools) >= CONDITIONAL
    assert len(tools) == 16  # its 17 tools but the one that must run as a task
    assert TASK_ONLY not in tools
    assert {tool["execution"]["taskSupport"] for tool in tools.values()} == {"forbidden"}


async def test_the_relay_lists_exactly_what_the_daemon_lists(home: Home, daemon: Daemon) -> None:
    assert daemon.url is not None
    async with Client(daemon.url + "/mcp", mode="legacy", cache=None) as client:
        direct = await everything_tools(client)
    params = StdioServerParameters(
        command=str(COMPOZY), args=["--url", daemon.url, "proxy"], env=dict(home.env)
    )
    async with spawned(home, params, "legacy", "relay") as relayed:
        through = await everything_tools(relayed)
    assert through == direct  # every field, execution included


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstream_servers_progress_streams_over_http(url: str, mode: Mode) -> None:
    seen: list[tuple[float, float | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with Client(url, mode=mode, cache=None) as client:
        result = await client.call_tool(
            "everything__trigger-long-running-operation",
            {"duration": 1, "steps": 4},
            progress_callback=report,
        )
    assert "Long running operation completed" in text(result)
    assert seen == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]


async def test_an_upstream_elicitation_is_answered_by_the_person_at_the_client(url: str) -> None:
    person = Person()
    async with Client(url, mode="legacy", cache=None, **person.callbacks()) as client:
        result = await raw_call(client, "everything__trigger-elicitation-request")
    said = text(result)
    assert "User provided the requested information" in said
    assert "Name: Ada Lovelace" in said
    assert person.asked == ["Please provide inputs for the following fields:"]


async def test_an_upstream_sampling_request_is_answered_by_the_client(url: str) -> None:
    person = Person()
    async with Client(url, mode="legacy", cache=None, **person.callbacks()) as client:
        result = await raw_call(
            client, "everything__trigger-sampling-request", {"prompt": "hi", "maxTokens": 10}
        )
    assert "sampled by the person" in text(result)
    assert person.asked == ["sampling"]


async def test_roots_are_the_workspace(home: Home, url: str) -> None:
    async with Client(url, mode="legacy", cache=None) as client:
        said = text(await raw_call(client, "everything__get-roots-list"))
    workspace = Path(home.env["COMPOZY_WORKSPACE"]).resolve().as_uri()
    assert workspace in said, said


async def test_through_the_relay_an_elicitation_goes_both_ways(home: Home, daemon: Daemon) -> None:
    assert daemon.url is not None
    person = Person()
    params = StdioServerParameters(
        command=str(COMPOZY), args=["--url", daemon.url, "proxy"], env=dict(home.env)
    )
    seen: list[float] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with spawned(home, params, "legacy", "relay", **person.callbacks()) as client:
        elicited = text(await raw_call(client, "everything__trigger-elicitation-request"))
        await client.call_tool(
            "everything__trigger-long-running-operation",
            {"duration": 1, "steps": 4},
            progress_callback=report,
        )
    assert "Name: Ada Lovelace" in elicited
    assert seen == [1.0, 2.0, 3.0, 4.0]
    assert json.dumps(person.asked)  # asked once, answered by the person


def test_the_typescript_sdk_client_gets_what_streams_over_http(url: str) -> None:
    """The TypeScript SDK's client over Streamable HTTP: progress of the echo agent's slow
    turn and of server-everything's long operation, and its elicitation and sampling
    answered by the client."""
    from tests.proxy.test_typescript_clients import TS_CLIENT, node_folder, run_node

    folder = node_folder(TS_CLIENT, "@modelcontextprotocol/sdk")
    seen = run_node(folder, ["streams.mjs", json.dumps({"url": url})])
    assert seen["turn"]["status"] == "completed"
    messages = seen["promptProgress"]
    assert messages[0] == "turn_started"
    assert messages[-1] == "turn_ended"
    assert [m for m in messages if m.startswith("tick")] == ["tick 1 ", "tick 2 "]
    assert "Long running operation completed" in seen["operation"]
    assert seen["upstreamProgress"] == [[1, 4], [2, 4], [3, 4], [4, 4]]
    assert "Name: Grace Hopper" in seen["elicited"]
    assert "sampled in TypeScript" in seen["sampled"]
    assert seen["asked"] == ["Please provide inputs for the following fields:", "sampling"]
