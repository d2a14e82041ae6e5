"""The proxy's own ``tools/call`` path (``proxy/_tool_calls.py``, ``proxy/_spans.py``): a plain
call skips the SDK's per-call model work and, when nothing traces, its span, and what the
client receives is exactly what the SDK's path sends, in both eras."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from mcp.client import Client
from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.methods import serialize_server_result, validate_client_request
from opentelemetry import trace
from tests.proxy.support import MODES, PROTOCOL, Mode, create_session

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.proxy._spans import SpansWhenTraced, tracing
from compozy_mcp.proxy._tool_calls import ToolCalls, WireResult
from compozy_mcp.proxy.server import ProxyServer, call_result
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio

STATUS = "compozy__session_status"


def sdk_path(server: Server[Any]) -> Server[Any]:
    """``server`` answering every call through the SDK's own path (and span), as before."""
    server.middleware = [
        OpenTelemetryMiddleware() if isinstance(one, SpansWhenTraced) else one
        for one in server.middleware
        if not isinstance(one, ToolCalls)
    ]
    return server


@asynccontextmanager
async def both(app: App, mode: Mode) -> AsyncIterator[tuple[Client, Client]]:
    """A client of the proxy as it serves, and one of the same proxy on the SDK's path."""
    fast = ProxyServer(app).server
    assert any(isinstance(one, ToolCalls) for one in fast.middleware)
    slow = sdk_path(ProxyServer(app).server)
    async with (
        Client(fast, mode=mode, cache=None) as fast_client,
        Client(slow, mode=mode, cache=None) as slow_client,
    ):
        yield fast_client, slow_client


async def _answers(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    try:
        result: CallToolResult = await client.call_tool(tool, arguments)
    except MCPError as error:
        return ("error", error.error.code, error.error.message)
    return result.model_dump(by_alias=True)


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_answers_what_the_sdk_path_answers(app: App, mode: Mode) -> None:
    async with both(app, mode) as (fast, slow):
        sid = (await create_session(fast, name="Same answer"))["id"]
        calls: list[tuple[str, dict[str, Any]]] = [
            (STATUS, {"session_id": sid}),
            (STATUS, {"session_id": sid, "result_view": "full"}),
            (STATUS, {"session_id": sid, "result_view": "wide"}),  # a tool error
            (STATUS, {"session_id": "sess-unknown"}),
            ("compozy__no_such_tool", {}),  # a protocol error
            ("compozy__tool_call", {"tool_id": STATUS, "input": {"session_id": sid}}),
        ]
        for tool, arguments in calls:
            answer = await _answers(fast, tool, arguments)
            assert answer == await _answers(slow, tool, arguments), (tool, arguments)
    if mode == "auto":
        assert isinstance(answer, dict)
        assert answer["_meta"][SERVER_INFO_META_KEY]["name"] == "compozy-mcp"


@pytest.mark.parametrize("mode", MODES)
async def test_a_truncated_result_goes_out_as_the_sdk_would_send_it(
    settings: Settings, clock: FixedClock, mode: Mode
) -> None:
    """The continuation's ``_meta`` and a hook's title too (compared with the SDK's own
    serializer: each call stores its own artifact, so two servers' answers differ)."""
    version = PROTOCOL[mode]
    agent = f"trunc-{secrets.token_hex(4)}"
    with open_app(settings.with_budget(1024), store=SQLiteStore.memory(), clock=clock) as small:
        async with Client(ProxyServer(small).server, mode=mode, cache=None) as client:
            for _ in range(4):
                await create_session(client, agent_name=agent)
        cut = await small.dispatcher.call(
            "compozy__session_list", {"agent_name": agent, "result_view": "full"}
        )
        await small.shutdown()
    assert cut.truncated
    info = {"name": "compozy-mcp", "version": "1"}
    calls = ToolCalls(_Recorder().handler, info)
    for result in (cut, replace(cut, title="A title")):
        wire = call_result(result)
        expected = serialize_server_result("tools/call", version, dict(wire))
        if mode == "auto":
            expected["_meta"] = {**expected["_meta"], SERVER_INFO_META_KEY: info}
        assert calls.wire(wire, version) == expected


# --- which requests take the proxy's path ---------------------------------------------------


@dataclass
class _Connection:
    initialize_accepted: bool = True


@dataclass
class _Session:
    _connection: _Connection = field(default_factory=_Connection)


@dataclass
class _Ctx:
    params: Any
    protocol_version: str = PROTOCOL["auto"]
    method: str = "tools/call"
    session: _Session = field(default_factory=_Session)
    meta: Any = None
    request_id: Any = 1


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL["auto"],
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@dataclass
class _Recorder:
    handled: list[tuple[str, Any]] = field(default_factory=list)
    passed_on: int = 0

    async def handler(self, ctx: Any, name: str, arguments: dict[str, Any] | None) -> Any:
        self.handled.append((name, arguments))
        return WireResult(resultType="complete", content=[], structuredContent={})

    async def call_next(self, ctx: Any) -> Any:
        self.passed_on += 1
        return {}


async def _route(ctx: _Ctx) -> _Recorder:
    recorder = _Recorder()
    calls = ToolCalls(recorder.handler, {"name": "compozy-mcp", "version": "1"})
    await calls(ctx, recorder.call_next)  # type: ignore[arg-type]
    return recorder


@pytest.mark.parametrize(
    "ctx",
    [
        _Ctx({"name": "t", "arguments": {"a": 1}, "_meta": ENVELOPE}),
        _Ctx({"name": "t", "_meta": ENVELOPE}),
        _Ctx({"name": "t", "arguments": {}}, protocol_version=PROTOCOL["legacy"]),
        _Ctx({"name": "t", "_meta": {"progressToken": 3}}, protocol_version=PROTOCOL["legacy"]),
    ],
)
async def test_a_plain_call_is_answered_by_the_proxy(ctx: _Ctx) -> None:
    recorder = await _route(ctx)
    assert recorder.passed_on == 0
    assert recorder.handled == [(ctx.params["name"], ctx.params.get("arguments"))]


@pytest.mark.parametrize(
    "ctx",
    [
        _Ctx({"cursor": "x"}, method="tools/list"),
        _Ctx({"name": "t", "_meta": ENVELOPE}, session=_Session(_Connection(False))),
        _Ctx({"name": "t", "_meta": ENVELOPE, "requestState": "s"}),
        _Ctx({"name": "t", "task": {}}, protocol_version=PROTOCOL["legacy"]),
        _Ctx({"name": 3, "_meta": ENVELOPE}),
        _Ctx({"name": "t", "arguments": [1], "_meta": ENVELOPE}),
        _Ctx({"name": "t", "arguments": {1: 2}, "_meta": ENVELOPE}),
        _Ctx({"name": "t"}),  # 2026-07-28 requires the envelope
        _Ctx({"name": "t", "_meta": {**ENVELOPE, "io.modelcontextprotocol/clientInfo": 7}}),
        _Ctx({"name": "t", "_meta": {"progressToken": [1]}}, protocol_version=PROTOCOL["legacy"]),
        _Ctx(["not", "an", "object"]),
    ],
)
async def test_anything_else_takes_the_sdk_path(ctx: _Ctx) -> None:
    recorder = await _route(ctx)
    assert recorder.handled == []
    assert recorder.passed_on == 1


async def test_a_meta_is_checked_by_the_sdk_model_once_until_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[Any] = []
    real = validate_client_request

    def counting(method: str, version: str, params: Any) -> None:
        checked.append(params["_meta"])
        real(method, version, params)

    monkeypatch.setattr("compozy_mcp.proxy._tool_calls.validate_client_request", counting)
    recorder = _Recorder()
    calls = ToolCalls(recorder.handler, {"name": "compozy-mcp", "version": "1"})
    other = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}
    for meta in (ENVELOPE, dict(ENVELOPE), other, other):
        await calls(_Ctx({"name": "t", "_meta": meta}), recorder.call_next)  # type: ignore[arg-type]
    assert checked == [ENVELOPE, other]
    assert len(recorder.handled) == 4


# --- the span -------------------------------------------------------------------------------


def test_no_span_is_made_when_nothing_traces_and_no_trace_context_arrives() -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert not tracing(None)
    assert not tracing(ENVELOPE)
    assert tracing({**ENVELOPE, "traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"})


def test_a_span_is_made_when_a_tracer_provider_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", object)
    assert tracing(None)


async def test_the_span_middleware_runs_only_when_tracing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entered: list[str] = []

    async def spans(ctx: Any, call_next: Any) -> Any:
        entered.append(ctx.method)
        return await call_next(ctx)

    async def call_next(ctx: Any) -> Any:
        return {}

    wrapped = SpansWhenTraced(spans)
    await wrapped(_Ctx({"name": "t", "_meta": ENVELOPE}), call_next)  # type: ignore[arg-type]
    assert entered == []
    monkeypatch.setattr(trace, "get_tracer_provider", object)
    await wrapped(_Ctx({"name": "t", "_meta": ENVELOPE}), call_next)  # type: ignore[arg-type]
    assert entered == ["tools/call"]
