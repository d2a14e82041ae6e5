"""Hostile calls to every native tool through the MCP proxy and the HTTP API, in this process:
each ends in a result or a typed error, and the store stays whole (issue 11, item 5).

``make test`` draws a few hundred calls; ``make soak`` runs the same against a real daemon
with 10,000 (``tests/fuzz/test_soak.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import anyio
import anyio.abc
import anyio.from_thread
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from tests.fuzz.target import Target, fuzz_one
from tests.tiers import examples

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import OPERATOR
from compozy_mcp.config import Settings
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.proxy.server import ProxyServer

#: calls drawn even in the unit tier: with fewer, the fixed draw (derandomized below) may give
#: one surface only hostile inputs, and the check that both surfaces were reached cannot pass
FLOOR = 150


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    root = tmp_path_factory.mktemp("fuzz")
    settings = Settings(home=root / "home", default_workspace_path=root, max_result_bytes=4096)
    with open_app(settings) as opened:
        yield opened


@pytest.fixture(scope="module")
def target(app: App) -> Iterator[Target]:
    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        found = Target(portal)
        done = anyio.Event()

        async def hold(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            """Keep both clients open, in one task, until the module's tests are done."""
            transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
            async with (
                Client(ProxyServer(app, scope=OPERATOR).server, cache=None) as mcp,
                httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http,
            ):
                found.mcp, found.http = mcp, http
                task_status.started()
                await done.wait()

        held, _ = portal.start_task(hold)
        for _ in range(3):
            made = portal.call(app.dispatcher.call, "compozy__session_create", {"agent_name": "g"})
            found.sessions.append(made.structured["session"]["id"])
        yield found
        portal.call(done.set)
        held.result(timeout=30)
        print(f"fuzzed answers: {found.answers}")


@settings(
    max_examples=max(examples(400), FLOOR),
    deadline=None,
    # the same calls every run: whether both surfaces got a result (asserted below) must not
    # depend on luck, which grows worse as the catalog grows (the soak draws at random)
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_hostile_call_ends_in_a_result_or_a_typed_error(
    target: Target, data: st.DataObject
) -> None:
    fuzz_one(target, data)


def test_the_store_is_whole_after_the_hostile_calls(target: Target, app: App) -> None:
    app.store.checkpoint()
    db = Path(app.settings.db_path)
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # the calls above did run, and reached the tools on both surfaces
    assert sum(target.answers.values()) >= examples(400) // 2
    assert target.answers.get("mcp result", 0) > 0
    assert target.answers.get("http result", 0) > 0
