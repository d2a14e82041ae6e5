"""Issue 30, item 1: MCP over HTTP answers with an event stream when a call streams (progress,
requests to the client), with JSON otherwise; results that would not fit the one event a
streamed answer carries are budgeted to artifacts."""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.server import streamable_http_manager
from tests.proxy.support import INITIALIZE, Proxy, record, served_over_http

from compozy_mcp.assembly import App
from compozy_mcp.proxy import http_sessions
from compozy_mcp.proxy._streaming import (
    MCP_RESULT_CEILING,
    MESSAGE_OVERHEAD,
    SSE_EVENT_CAP,
    JsonUnlessStreamed,
)
from compozy_mcp.proxy._valid_json import DECODED_MESSAGE
from compozy_mcp.proxy.server import ProxyServer

pytestmark = pytest.mark.anyio

SSE = "text/event-stream"


def event(payload: dict[str, Any] | None = None, *, comment: str | None = None) -> bytes:
    if comment is not None:
        return f": {comment}\r\n\r\n".encode()
    return b"event: message\r\ndata: " + json.dumps(payload).encode() + b"\r\n\r\n"


RESPONSE = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
PROGRESS = {
    "jsonrpc": "2.0",
    "method": "notifications/progress",
    "params": {"progressToken": 1, "progress": 1},
}


async def through(chunks: list[bytes], *, content_type: str = SSE) -> list[dict[str, Any]]:
    """What the client receives when the app behind the middleware sends ``chunks``."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", content_type.encode()), (b"mcp-session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for index, chunk in enumerate(chunks):
            more = index < len(chunks) - 1
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    await JsonUnlessStreamed(app)({"type": "http", "method": "POST"}, receive, send)
    return sent


def headers_of(start: dict[str, Any]) -> dict[bytes, bytes]:
    return dict(start["headers"])


async def test_a_stream_whose_first_event_is_the_response_is_answered_with_json() -> None:
    sent = await through([event(RESPONSE)[:10], event(RESPONSE)[10:], b""])
    start, body = sent
    headers = headers_of(start)
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"mcp-session-id"] == b"s1"  # the session header is kept
    assert int(headers[b"content-length"]) == len(body["body"])
    assert json.loads(body["body"]) == RESPONSE
    assert body["more_body"] is False


@pytest.mark.parametrize(
    "first",
    [
        event(PROGRESS),
        event(comment="ping - 2026-12-03"),
        event({"jsonrpc": "2.0", "id": "r", "method": "elicitation/create"}),
    ],
    ids=["notification", "keep-alive", "request"],
)
async def test_anything_streamed_first_commits_the_stream_as_it_came(first: bytes) -> None:
    chunks = [first, event(RESPONSE), b""]
    sent = await through(chunks)
    assert headers_of(sent[0])[b"content-type"] == SSE.encode()
    assert b"".join(message["body"] for message in sent[1:]) == b"".join(chunks)
    assert sent[-1]["more_body"] is False


async def test_a_json_answer_passes_untouched() -> None:
    body = json.dumps(RESPONSE).encode()
    sent = await through([body], content_type="application/json")
    assert headers_of(sent[0])[b"content-type"] == b"application/json"
    assert sent[1]["body"] == body


def test_the_result_ceiling_keeps_a_whole_message_inside_one_event() -> None:
    # the record twice (structured and as text, which escaping can double) and the envelope
    assert 3 * MCP_RESULT_CEILING + MESSAGE_OVERHEAD <= SSE_EVENT_CAP
    assert MCP_RESULT_CEILING > 256 * 1024  # the default budget already fits


# --- through real clients, over HTTP ------------------------------------------------------

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def _post(
    http: httpx2.AsyncClient, url: str, body: dict[str, Any], session: str | None
) -> tuple[str, str, dict[str, str]]:
    headers = dict(ACCEPT)
    if session:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    response = await http.post(url, json=body, headers=headers, timeout=60)
    assert response.status_code in (200, 202), response.text
    return response.headers.get("content-type", ""), response.text, dict(response.headers)


async def test_over_http_only_a_call_that_streams_gets_an_event_stream(app: App) -> None:
    try:
        await _streams_only_what_streams(app)
    finally:
        await app.shutdown()  # the echo agent the prompt started ends with the test


async def _streams_only_what_streams(app: App) -> None:
    async with served_over_http(ProxyServer(app)) as url, httpx2.AsyncClient() as http:
        kind, text, headers = await _post(http, url, INITIALIZE, None)
        assert kind == "application/json"
        session = headers["mcp-session-id"]
        await _post(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        kind, text, _ = await _post(
            http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session
        )
        assert kind == "application/json"
        assert json.loads(text)["result"]["tools"]
        made = {"agent_name": "general", "provider": "echo"}
        call = {"name": "compozy__session_create", "arguments": made}
        kind, text, _ = await _post(
            http, url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}, session
        )
        assert kind == "application/json"
        sid = json.loads(text)["result"]["structuredContent"]["session"]["id"]
        prompt = {"session_id": sid, "prompt": "hello stream", "wait": True}
        call = {
            "name": "compozy__session_prompt",
            "arguments": prompt,
            "_meta": {"progressToken": "p1"},
        }
        kind, text, _ = await _post(
            http, url, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}, session
        )
        assert kind.startswith(SSE)
        messages = [
            json.loads(line[len("data: ") :])
            for line in text.splitlines()
            if line.startswith("data: ")
        ]
        assert [m.get("method") for m in messages[:-1]] == ["notifications/progress"] * 5
        assert messages[-1]["id"] == 4
        assert messages[-1]["result"]["structuredContent"]["turn"]["status"] == "completed"


@pytest.mark.loop_blocking(
    "a 436 KB full tool listing is built and checked on the loop (issue 29: the status path)"
)
async def test_a_result_too_large_for_one_event_is_budgeted_to_an_artifact_over_http(
    proxy: Proxy, mode: Any
) -> None:
    """The full listing of every tool (436 KB, under the tool's own 1 MiB budget) is whole
    over stdio; over HTTP, where it may travel in one event, it is stored as an artifact."""
    over_http = proxy.kind in ("http", "uds", "relay")  # the relay asks a daemon over HTTP
    async with proxy.client(mode) as client:
        listed = record(
            await client.call_tool("compozy__tool_list", {"limit": 500, "result_view": "full"})
        )
    if over_http:
        assert listed["truncated"] is True
        assert listed["budget_bytes"] == MCP_RESULT_CEILING
        assert listed["bytes"] > MCP_RESULT_CEILING
    else:
        assert "truncated" not in listed
        assert len(listed["tools"]) > 50


class ServedModes:
    """How each 2026-07-28 ``tools/call`` was served: ``True`` in JSON mode (inline, no event
    stream), ``False`` in SSE mode; recorded around the SDK's entry, by whichever caller."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.modes: list[bool] = []
        for module in (http_sessions, streamable_http_manager):
            monkeypatch.setattr(
                module, "handle_modern_request", self._recording(module.handle_modern_request)
            )

    def _recording(self, real: Any) -> Any:
        async def recorded(
            server: Any, security: Any, json_response: bool, state: Any, scope: Any, *rest: Any
        ) -> None:
            if scope.get(DECODED_MESSAGE, {}).get("method") == "tools/call":
                self.modes.append(json_response)
            await real(server, security, json_response, state, scope, *rest)

        return recorded

    def take(self) -> list[bool]:
        taken, self.modes = self.modes, []
        return taken


async def test_over_http_a_call_that_answers_at_once_is_served_without_an_event_stream(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = ServedModes(monkeypatch)
    app.dispatcher.add_hook(_warning_hook)
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    received: list[Any] = []

    async def on_log(params: Any) -> None:
        received.append(params)

    async with served_over_http(ProxyServer(app)) as url:
        async with Client(url, mode="auto", cache=None) as client:
            sid = record(
                await client.call_tool("compozy__session_create", {"agent_name": "general"})
            )["session"]["id"]
            assert served.take() == [False]  # a tool that may wait: the SDK's SSE mode
            status = record(await client.call_tool("compozy__session_status", {"session_id": sid}))
            assert status["session"]["id"] == sid
            listed = record(await client.call_tool("compozy__tool_list", {"limit": 2}))
            assert len(listed["tools"]) == 2
            assert served.take() == [True, True]  # both answered inline, as JSON
            # asking for progress: the stream it may come on (session_status reports none)
            await client.call_tool(
                "compozy__session_status", {"session_id": sid}, progress_callback=on_progress
            )
            assert served.take() == [False]
        async with Client(
            url, mode="auto", cache=None, logging_callback=on_log, log_level="warning"
        ) as logged:
            await logged.call_tool("compozy__tool_list", {"limit": 2})
            assert served.take() == [False]  # asking for log lines: they come on the stream
    assert received  # the hook's warning arrived while the call ran
    assert reported == []


async def _warning_hook(payload: dict[str, Any]) -> dict[str, Any] | None:
    logging.getLogger("compozy_mcp.hooks").warning("a hook looked at %s", payload["tool_id"])
    return None


def test_only_a_plain_call_of_a_tool_that_answers_at_once_skips_the_stream(app: App) -> None:
    proxy = ProxyServer(app)

    def call(name: Any, meta: Any = None, method: str = "tools/call") -> bool:
        params: dict[str, Any] = {"name": name, "arguments": {}}
        if meta is not None:
            params["_meta"] = meta
        return proxy.answers_at_once(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        )

    assert call("compozy__session_status")
    assert call("compozy__session_list", {"io.modelcontextprotocol/clientInfo": {}})
    assert not call("compozy__session_status", {"progressToken": 1})
    assert not call("compozy__session_status", {"io.modelcontextprotocol/logLevel": "info"})
    assert not call("compozy__session_status", "not an object")
    assert not call("compozy__session_prompt")  # it waits on an agent
    assert not call("compozy__session_wait")
    assert not call("compozy__nope")
    assert not call(7)
    assert not call("compozy__session_status", method="tools/list")
    assert not proxy.answers_at_once({"method": "tools/call", "params": ["x"]})
