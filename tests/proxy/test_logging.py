"""Issue 23, item 4: MCP logging. The proxy announces the ``logging`` capability, answers
``logging/setLevel`` (the conformance scenario ``logging-set-level``), and sends the daemon's
and the session's log lines (hook failures, agent stderr, upstream reconnects: every
``compozy_mcp`` logger) as ``notifications/message`` at or above the level; in the 2026-07-28
era a request that opts in through ``_meta`` gets the lines logged while it runs."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client

from compozy_mcp.assembly import App
from compozy_mcp.logfeed import FEED, LogFeed, LogLine, mcp_level
from compozy_mcp.proxy.server import ProxyServer

pytestmark = pytest.mark.anyio


async def _set_level(client: Client, level: types.LoggingLevel) -> types.EmptyResult:
    # the request itself (Client.set_logging_level warns that logging is gone in 2026-07-28)
    request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))
    return await client.session.send_request(request, types.EmptyResult)


class Received:
    def __init__(self) -> None:
        self.lines: list[types.LoggingMessageNotificationParams] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.lines.append(params)

    async def until(self, count: int) -> None:
        with anyio.fail_after(10):
            while len(self.lines) < count:
                await anyio.sleep(0.01)


async def _failing_hook(payload: dict[str, Any]) -> dict[str, Any] | None:
    raise RuntimeError("the audit database is down")


async def test_logging_set_level_is_announced_and_answered(app: App) -> None:
    """The conformance suite's ``logging-set-level``: the capability, then an empty result."""
    async with Client(ProxyServer(app).server, mode="legacy") as client:
        assert client.server_capabilities.logging is not None
        assert await _set_level(client, "info") == types.EmptyResult()


async def test_lines_at_or_above_the_level_arrive_as_notifications(app: App) -> None:
    app.dispatcher.add_hook(_failing_hook)
    received = Received()
    server = ProxyServer(app).server
    async with Client(server, mode="legacy", logging_callback=received) as client:
        await _set_level(client, "warning")
        logging.getLogger("compozy_mcp.test").info("an info line nobody asked for")
        await client.call_tool("compozy__tool_list", {})
        await received.until(2)
        await anyio.sleep(0.1)
        first = len(received.lines)
        await _set_level(client, "error")  # again: the level changes, no second follower
        await client.call_tool("compozy__tool_list", {})
        await received.until(first + 1)
        await anyio.sleep(0.1)
    levels = [line.level for line in received.lines]
    # a failing in-process hook logs an error (its exception) and a warning (the hook failed),
    # once per event of the call; info is below the level
    assert set(levels[:first]) == {"error", "warning"}
    assert set(levels[first:]) == {"error"}
    assert len(levels) - first == levels[:first].count("error")  # one follower, not two
    hook_line = next(line for line in received.lines if line.level == "warning")
    assert hook_line.logger == "compozy_mcp.hooks._engine"
    assert "compozy__tool_list" in str(hook_line.data)


async def test_a_connection_that_set_no_level_receives_nothing(app: App) -> None:
    app.dispatcher.add_hook(_failing_hook)
    received = Received()
    async with Client(ProxyServer(app).server, mode="legacy", logging_callback=received) as c:
        await c.call_tool("compozy__tool_list", {})
        await anyio.sleep(0.1)
    assert received.lines == []


async def test_a_2026_request_that_opts_in_gets_the_lines_logged_while_it_runs(app: App) -> None:
    app.dispatcher.add_hook(_failing_hook)
    received = Received()
    server = ProxyServer(app).server
    async with Client(server, logging_callback=received, log_level="warning") as client:
        await client.call_tool("compozy__tool_list", {})
    assert received.lines
    assert {line.level for line in received.lines} <= {"warning", "error"}


def test_a_managed_session_follows_only_its_own_lines() -> None:
    feed = LogFeed()
    got: dict[str, list[LogLine]] = {"operator": [], "session": []}
    feed.follow("op", got["operator"].append, "info", None)
    feed.follow("s", got["session"].append, "info", "sess-1")
    try:
        log = logging.getLogger("compozy_mcp.agent")
        log.info("agent of sess-1 says hi", extra={"session_id": "sess-1"})
        log.info("agent of sess-2 says hi", extra={"session_id": "sess-2"})
        logging.getLogger("compozy_mcp.upstream").warning("server notes reconnected")
    finally:
        feed.unfollow("op")
        feed.unfollow("s")
    assert [line.message for line in got["operator"]] == [
        "agent of sess-1 says hi",
        "agent of sess-2 says hi",
        "server notes reconnected",
    ]
    assert [line.message for line in got["session"]] == ["agent of sess-1 says hi"]
    assert logging.getLogger("compozy_mcp").level == logging.NOTSET  # let through no more
    assert not FEED._followers  # the process's feed was not touched


def test_python_levels_map_to_mcp_levels() -> None:
    assert [mcp_level(n) for n in (10, 20, 30, 40, 50)] == [
        "debug",
        "info",
        "warning",
        "error",
        "critical",
    ]


async def test_an_agents_stderr_lines_are_its_sessions_log_lines() -> None:
    from compozy_mcp.runtime.process import ProcessTransport

    stream = asyncio.StreamReader()
    stream.feed_data(b"starting up\nwarn: no cache\npartial")
    stream.feed_eof()
    transport = ProcessTransport(process=None, reader=None, writer=None)  # type: ignore[arg-type]
    transport.session_id = "sess-1"
    feed = LogFeed()
    got: list[LogLine] = []
    feed.follow("s", got.append, "info", "sess-1")
    try:
        await transport._read_stderr(stream)
    finally:
        feed.unfollow("s")
    assert [(line.message, line.session_id, line.logger) for line in got] == [
        ("starting up", "sess-1", "compozy_mcp.agent"),
        ("warn: no cache", "sess-1", "compozy_mcp.agent"),
        ("partial", "sess-1", "compozy_mcp.agent"),
    ]
    assert transport.stderr_tail().endswith("partial")  # the failure report's tail as before
