"""Issue 28, item 4: MCP over HTTP behind a round-robin balancer. A client's requests alternate
between two daemons of one store; the session it opened on one is served statelessly by the
other (``--advertise``: one of several daemons), so every call answers wherever it lands."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from tests import pg
from tests.api.support import Daemon
from tests.cluster.support import one_store_daemons

pytestmark = [pytest.mark.process, pytest.mark.anyio]


@pytest.fixture(scope="module", params=pg.ENGINES)
def daemons(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Daemon]]:
    """Two daemons on one store (SQLite, or a new PostgreSQL database), started once per
    engine for both modes' tests: each test opens its own MCP session on its own record, and
    neither stops nor reconfigures a daemon (two daemons cost ~2 s of CPU to start and stop)."""
    store_url = None
    if request.param == "postgres":
        server: pg.PostgresServer = request.getfixturevalue("postgres_server")
        store_url = server.create_database()
    try:
        with one_store_daemons(tmp_path_factory.mktemp("balanced"), 2, store_url) as started:
            yield started
    finally:
        if store_url is not None:
            server.drop_database(store_url)


STATUS = "compozy__session_status"
SESSION_ID = "mcp-session-id"


class RoundRobin(httpx2.AsyncBaseTransport):
    """A balancer in the client: each request goes to the next daemon's port."""

    def __init__(self, ports: list[int]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._next = itertools.cycle(ports)
        #: (port, method, the Mcp-Session-Id it carried)
        self.sent: list[tuple[int, str, str | None]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = next(self._next)
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        self.sent.append((port, request.method, request.headers.get(SESSION_ID)))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_alternating_between_two_daemons_is_served_by_both(
    mode: Any, daemons: list[Daemon]
) -> None:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    ports = [httpx2.URL(str(d.url)).port or 0 for d in daemons]
    with daemons[0].client() as http:
        made = http.post("/api/sessions", json={"agent_name": "g"}).json()["session"]
    balancer = RoundRobin(ports)
    http_client = httpx2.AsyncClient(transport=balancer, trust_env=False, timeout=30)
    url = f"{daemons[0].url}/mcp"
    async with (
        http_client,
        Client(streamable_http_client(url, http_client=http_client), mode=mode) as client,
    ):
        for _ in range(3):
            page = await client.list_tools()
            assert STATUS in [tool.name for tool in page.tools]
            result = await client.call_tool(
                STATUS, {"session_id": made["id"], "result_view": "full"}
            )
            assert result.is_error is False
            assert result.structured_content is not None
            assert result.structured_content["session"]["id"] == made["id"]
    posts = [(port, named) for port, method, named in balancer.sent if method == "POST"]
    assert {port for port, _ in posts} == set(ports)
    if mode == "legacy":
        # a session opened on one daemon, its requests served by both
        named = [(port, sid) for port, sid in posts if sid is not None]
        assert len({sid for _, sid in named}) == 1
        assert {port for port, _ in named} == set(ports)
