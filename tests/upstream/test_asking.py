"""Issue 30, item 2: compozy's upstream client declares sampling, elicitation and roots when its
own client does, passes what an upstream server asks to the client of the call waiting on it,
and answers roots with the session's workspace. The ``asking`` server (written for these
tests) is connected in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from tests.conftest import Caller
from tests.upstream.support import extension, raw_call

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.upstream.asking import EVERY_CAPABILITY, Declared
from compozy_mcp.upstream.supervisor import Upstreams

pytestmark = pytest.mark.anyio

ASKING = "tests.upstream.servers.asking:build"


class Person:
    """The client's side: answers elicitation and sampling, keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi there"), model="person-1"
        )

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[])

    def callbacks(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
        }


@asynccontextmanager
async def asking_proxy(
    app: App,
    workspace: Path,
    *,
    declared: Declared | None,
    scope: CallScope | None = None,
) -> AsyncIterator[ProxyServer]:
    upstreams = Upstreams(
        [extension("asking", ASKING)],
        home=app.settings.home,
        env={},
        workspace=workspace,
        publish_status=False,
        declared=declared,
    )
    proxy = ProxyServer(app, scope=scope or CallScope(), upstreams=upstreams)
    async with upstreams.running(settle=False):
        yield proxy


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_the_capabilities_declared_upstream_are_the_clients_own(
    app: App, workspace: Path
) -> None:
    async with (
        asking_proxy(app, workspace, declared=None) as proxy,
        Client(proxy.server, mode="legacy", **Person().callbacks()) as client,
    ):
        declared = structured(await raw_call(client, "asking__declared"))
    assert declared == {"sampling": True, "elicitation": True, "roots": True}
    async with (
        asking_proxy(app, workspace, declared=None) as proxy,
        Client(proxy.server, mode="legacy") as client,
    ):
        declared = structured(await raw_call(client, "asking__declared"))
    assert declared == {"sampling": False, "elicitation": False, "roots": False}


async def test_elicitation_and_sampling_reach_the_client_of_the_waiting_call(
    app: App, workspace: Path
) -> None:
    person = Person()
    async with (
        asking_proxy(app, workspace, declared=None) as proxy,
        Client(proxy.server, mode="legacy", **person.callbacks()) as client,
    ):
        assert structured(await raw_call(client, "asking__ask_name")) == {
            "action": "accept",
            "greeting": "hello Ada",
        }
        assert structured(await raw_call(client, "asking__sample")) == {
            "model": "person-1",
            "said": "hi there",
        }
        assert structured(await raw_call(client, "asking__ask_link")) == {"action": "accept"}
        asked_name, sampled, linked = person.asked
        assert isinstance(asked_name, types.ElicitRequestFormParams)
        assert asked_name.message == "What is your name?"
        assert isinstance(sampled, types.CreateMessageRequestParams)
        assert isinstance(linked, types.ElicitRequestURLParams)


async def test_roots_are_the_sessions_workspace_never_the_clients(
    app: App, workspace: Path, call: Caller, tmp_path: Path
) -> None:
    person = Person()
    async with (
        asking_proxy(app, workspace, declared=EVERY_CAPABILITY) as proxy,
        Client(proxy.server, mode="legacy", **person.callbacks()) as client,
    ):
        listed = structured(await raw_call(client, "asking__roots"))
    assert listed == {"roots": [workspace.resolve().as_uri()]}
    assert person.asked == []  # never forwarded
    other = tmp_path / "other-ws"
    other.mkdir()
    added = await app.sessions.add_workspace(other, "other")
    session = await call.create(workspace_id=added.id)
    scope = CallScope(session_id=session["id"])
    async with (
        asking_proxy(app, workspace, declared=EVERY_CAPABILITY, scope=scope) as proxy,
        Client(proxy.server, mode="legacy") as client,
    ):
        listed = structured(await raw_call(client, "asking__roots"))
    assert listed == {"roots": [other.resolve().as_uri()]}


async def test_a_question_its_client_cannot_take_is_refused_with_why(
    app: App, workspace: Path
) -> None:
    """Declared for many clients (the daemon), a call's own client is checked."""
    async with (
        asking_proxy(app, workspace, declared=EVERY_CAPABILITY) as proxy,
        Client(proxy.server, mode="legacy") as client,
    ):
        with pytest.raises(MCPError, match="does not support elicitation"):
            await raw_call(client, "asking__ask_name")
        with pytest.raises(MCPError, match="does not support sampling"):
            await raw_call(client, "asking__sample")
    async with (
        asking_proxy(app, workspace, declared=EVERY_CAPABILITY) as proxy,
        Client(proxy.server, mode="auto", **Person().callbacks()) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(MCPError, match="cannot be asked while it waits"):
            await raw_call(client, "asking__ask_name")


async def test_an_upstream_progress_reaches_the_client(app: App, workspace: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with (
        asking_proxy(app, workspace, declared=None) as proxy,
        Client(proxy.server, mode="legacy") as client,
    ):
        result = await client.call_tool("asking__progress", {}, progress_callback=report)
    assert structured(result) == {"counted": 4}
    assert seen == [(float(step), 4.0, f"step {step} of 4") for step in (1, 2, 3, 4)]
