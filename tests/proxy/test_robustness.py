"""Nothing a client sends, and no way it goes away, takes the proxy down: malformed arguments,
huge arguments, and clients that disconnect while a call is in flight."""

from __future__ import annotations

import json
import logging
import queue
import select
import socket
import struct
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from mcp.client import Client
from tests.proxy.support import (
    COMPOZY,
    STARTUP_DEADLINE,
    STOP_DEADLINE,
    Home,
    HttpProxy,
    Mode,
    ProxyPool,
    create_session,
    record,
    served_over_http,
    tool_error,
)

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.proxy.transports import MAX_REQUEST_BYTES
from compozy_mcp.store import SQLiteStore

pytestmark = pytest.mark.anyio

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
MIB = 1024 * 1024
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
INVALID_PARAMS = -32602
WRONG_TYPE = 'tool "compozy__session_status" input "session_id" must be a string'
MISSING = 'tool "compozy__session_status" input "session_id" is required'
TOO_LONG = 'tool "compozy__session_create" input "name" must be at most 200 characters long'


def message(ident: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {"_meta": META, **params}}


def call(ident: int, name: str, arguments: Any) -> dict[str, Any]:
    return message(ident, "tools/call", name=name, arguments=arguments)


#: (arguments, how the proxy answers): not an object is a malformed request (-32602);
#: an object that breaks the schema is a tool error naming the field
MALFORMED: list[tuple[Any, str | None]] = [
    ("sess-x", None),
    ([1, 2], None),
    (7, None),
    (True, None),
    ({"session_id": 5}, WRONG_TYPE),
    ({"session_id": ["sess-x"]}, WRONG_TYPE),
    ({"session_id": {"id": "sess-x"}}, WRONG_TYPE),
    (None, MISSING),
    ({}, MISSING),
]


def check_malformed(reply: dict[str, Any], expected: str | None, arguments: Any) -> None:
    if expected is None:
        assert reply["error"]["code"] == INVALID_PARAMS, (arguments, reply)
        return
    result = reply["result"]
    assert result["isError"] is True, (arguments, reply)
    assert result["content"] == [{"type": "text", "text": expected}]
    assert result["structuredContent"]["error"]["code"] == "tool_invalid_input"


# --- stdio, raw JSON lines ----------------------------------------------------------------


def line(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode() + b"\n"


@dataclass
class LineClient:
    """A raw newline-delimited JSON-RPC client on ``compozy proxy`` (stdio), no handshake
    (2026-07-28). Replies are read by a thread so that a silent proxy fails, not hangs."""

    proc: subprocess.Popen[bytes]
    replies: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for received in self.proc.stdout:
                self.replies.put(json.loads(received))
        except (OSError, ValueError):  # the test closed the pipe
            pass
        finally:
            self.replies.put(None)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, payload: dict[str, Any]) -> None:
        self.write(line(payload))

    def reply(self) -> dict[str, Any]:
        got = self.replies.get(timeout=STARTUP_DEADLINE)
        assert got is not None, "the proxy closed stdout"
        return got

    def ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.send(payload)
        got = self.reply()
        assert got.get("id") == payload["id"], got
        return got


@pytest.fixture
def stdio_proxy(proxy_home: Home) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [str(COMPOZY), "proxy"],
        env=proxy_home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def status_call(client: LineClient, ident: int, sid: str) -> dict[str, Any]:
    reply = client.ask(call(ident, "compozy__session_status", {"session_id": sid}))
    session: dict[str, Any] = reply["result"]["structuredContent"]["session"]
    assert json.loads(reply["result"]["content"][0]["text"]) == {"session": session}
    return session


def create_call(client: LineClient, ident: int) -> str:
    reply = client.ask(call(ident, "compozy__session_create", {"agent_name": "general"}))
    sid: str = reply["result"]["structuredContent"]["session"]["id"]
    return sid


@pytest.mark.process
def test_malformed_messages_over_stdio_are_answered_and_the_next_call_works(
    stdio_proxy: subprocess.Popen[bytes],
) -> None:
    proc = stdio_proxy
    client = LineClient(proc)
    sid = create_call(client, 1)
    for ident, (arguments, expected) in enumerate(MALFORMED, start=10):
        reply = client.ask(call(ident, "compozy__session_status", arguments))
        check_malformed(reply, expected, arguments)
        assert status_call(client, ident + 100, sid)["id"] == sid
    # a call without a name, and one without the 2026-07-28 envelope
    for ident, params in enumerate([{"_meta": META}, {"name": "compozy__session_list"}], 200):
        reply = client.ask(
            {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
        )
        assert reply["error"]["code"] == INVALID_PARAMS, reply
    # lines that are not JSON-RPC requests: each is answered (issue 11: the stdio proxy answers
    # every request that has an id; a line that cannot be parsed gets a parse error, id null),
    # in order, and the proxy keeps reading
    for line, answer in [
        (b"{this is not json", (None, PARSE_ERROR)),
        (b'{"hello": "world"}', (None, INVALID_REQUEST)),
        (
            b'{"jsonrpc": "2.0", "id": 250, "method": "tools/call", "params": [1]}',
            (250, INVALID_REQUEST),
        ),
        (
            b'{"jsonrpc": "2.0", "id": 251, "method": "tools/call", "params": "x"}',
            (251, INVALID_REQUEST),
        ),
        (b'{"jsonrpc": "2.0", "id": 252, "method": "tools/li', (None, PARSE_ERROR)),
        (b'{"jsonrpc": "2.0", "id": 253}', (253, INVALID_REQUEST)),
        (b"\xff\xfe not utf-8", (None, PARSE_ERROR)),
    ]:
        client.write(line + b"\n")
        reply = client.reply()
        assert (reply["id"], reply["error"]["code"]) == answer, (line, reply)
    reply = client.ask(call(300, "compozy__session_status", {"session_id": sid}))
    assert reply["result"]["structuredContent"]["session"]["id"] == sid
    # a 5 MiB line: stdio has no body limit, the schema does
    reply = client.ask(
        call(301, "compozy__session_create", {"agent_name": "general", "name": "x" * 5 * MIB})
    )
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == TOO_LONG
    assert status_call(client, 302, sid)["id"] == sid
    assert proc.poll() is None


@pytest.mark.process
def test_a_client_that_closes_stdin_after_writing_still_gets_every_reply(proxy_home: Home) -> None:
    """``printf '...' | compozy proxy``: the requests sent before stdin ended are answered."""

    def request(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}

    def tool(ident: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return request(ident, "tools/call", {"name": name, "arguments": arguments})

    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "p", "version": "1"},
    }
    lines = [
        request(0, "initialize", hello),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        tool(1, "compozy__session_create", {"agent_name": "general"}),
        tool(2, "compozy__session_status", {"session_id": "\ud800"}),
        tool(3, "compozy__session_list", {"limit": 18446744073709551616}),
    ]
    done = subprocess.run(
        [str(COMPOZY), "proxy"],
        input=b"".join(line(item) for item in lines),
        env=proxy_home.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert set(replies) == {0, 1, 2, 3}
    assert replies[1]["result"]["structuredContent"]["session"]["agent_name"] == "general"
    for ident, name in ((2, "session_id"), (3, "limit")):
        error = replies[ident]["result"]["structuredContent"]["error"]
        assert (error["code"], error["reason"]) == ("tool_invalid_input", "schema_invalid")
        assert f'input "{name}"' in error["message"]
    assert b"Traceback" not in done.stderr


@pytest.mark.process
def test_a_stdio_client_that_goes_away_mid_call_ends_the_proxy_cleanly(
    stdio_proxy: subprocess.Popen[bytes], proxy_home: Home
) -> None:
    proc = stdio_proxy
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(line(call(1, "compozy__session_create", {"agent_name": "general"})))
    proc.stdin.flush()
    readable, _, _ = select.select([proc.stdout], [], [], STARTUP_DEADLINE)
    assert readable, "the proxy did not answer"
    sid = json.loads(proc.stdout.readline())["result"]["structuredContent"]["session"]["id"]
    # calls in flight, then the client's ends of both pipes close, as when it is killed
    for ident in range(2, 40):
        proc.stdin.write(
            line(call(ident, "compozy__session_list", {"result_view": "full", "limit": 200}))
        )
    proc.stdin.flush()
    proc.stdout.close()
    proc.stdin.close()
    assert proc.wait(STOP_DEADLINE) == 0
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr, stderr
    assert "Error" not in stderr, stderr
    # the store is intact and free: the next proxy serves the same session
    follower = subprocess.Popen(
        [str(COMPOZY), "proxy"],
        env=proxy_home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert status_call(LineClient(follower), 1, sid)["id"] == sid
        assert follower.stdin is not None
        follower.stdin.close()
        assert follower.wait(STOP_DEADLINE) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
        for pipe in (follower.stdin, follower.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


# --- HTTP, raw requests -------------------------------------------------------------------


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


async def post_call(
    http: httpx2.AsyncClient, url: str, name: str, arguments: Any
) -> httpx2.Response:
    return await http.post(
        url,
        content=json.dumps(call(1, name, arguments)),
        headers=modern_headers("tools/call", name),
    )


async def assert_serving(server: HttpProxy, sid: str) -> None:
    """The process is up and a fresh SDK client reads the session."""
    assert server.process.alive(), server.process.stderr
    async with Client(server.url, mode="auto", cache=None) as client:
        status = record(await client.call_tool("compozy__session_status", {"session_id": sid}))
        assert status["session"]["id"] == sid


@pytest.fixture
def http_proxy(pool: ProxyPool) -> HttpProxy:
    return pool.http()


@pytest.mark.process
async def test_malformed_arguments_over_http_are_answered_and_the_next_call_works(
    http_proxy: HttpProxy,
) -> None:
    url = http_proxy.url
    async with httpx2.AsyncClient(timeout=30) as http:
        created = await post_call(http, url, "compozy__session_create", {"agent_name": "general"})
        sid = created.json()["result"]["structuredContent"]["session"]["id"]
        for arguments, expected in MALFORMED:
            response = await post_call(http, url, "compozy__session_status", arguments)
            assert response.status_code == (400 if expected is None else 200), response.text
            check_malformed(response.json(), expected, arguments)
            ok = await post_call(http, url, "compozy__session_status", {"session_id": sid})
            assert ok.json()["result"]["structuredContent"]["session"]["id"] == sid
        # not JSON at all, and JSON that is not JSON-RPC
        for body in [b"{this is not json", b'{"hello": "world"}', b"[]"]:
            response = await http.post(url, content=body, headers=modern_headers("tools/call"))
            assert 400 <= response.status_code < 500, response.text
    await assert_serving(http_proxy, sid)


@pytest.mark.process
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_3_mib_argument_is_answered_and_a_body_over_4_mib_is_refused(
    http_proxy: HttpProxy, mode: Mode
) -> None:
    url = http_proxy.url
    async with Client(url, mode=mode, cache=None) as client:
        sid = (await create_session(client))["id"]
        huge = await client.call_tool(
            "compozy__session_create", {"agent_name": "general", "name": "x" * 3 * MIB}
        )
        assert tool_error(huge)["message"] == TOO_LONG
        assert record(await client.call_tool("compozy__session_status", {"session_id": sid}))
    async with httpx2.AsyncClient(timeout=30) as http:
        arguments = {"agent_name": "general", "name": "x" * 3 * MIB}
        response = await post_call(http, url, "compozy__session_create", arguments)
        assert response.status_code == 200
        assert response.json()["result"]["content"][0]["text"] == TOO_LONG
        arguments["name"] = "x" * (MAX_REQUEST_BYTES + 1)
        response = await post_call(http, url, "compozy__session_create", arguments)
        assert response.status_code == 413
    await assert_serving(http_proxy, sid)


def _request_head(url: str, length: int, name: str) -> bytes:
    parts = urlsplit(url)
    lines = [
        f"POST {parts.path} HTTP/1.1",
        f"Host: {parts.netloc}",
        f"Content-Length: {length}",
        *(f"{k}: {v}" for k, v in modern_headers("tools/call", name).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


#: SO_LINGER on, 0 s: close() sends RST instead of FIN
RESET_ON_CLOSE = struct.pack("ii", 1, 0)


#: SO_LINGER on, 0 s: close() sends RST instead of FIN
RESET_ON_CLOSE = struct.pack("ii", 1, 0)


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


@pytest.mark.process
async def test_http_clients_that_disconnect_mid_request_do_not_take_the_proxy_down(
    http_proxy: HttpProxy,
) -> None:
    url = http_proxy.url
    async with Client(url, mode="auto", cache=None) as client:
        sid = (await create_session(client))["id"]
    body = json.dumps(
        call(1, "compozy__session_create", {"agent_name": "general", "name": "x" * 3 * MIB})
    ).encode()
    for _ in range(3):
        # half the body, then the connection closes
        with _connect(url) as sock:
            sock.sendall(_request_head(url, len(body), "compozy__session_create"))
            sock.sendall(body[: len(body) // 2])
        # the whole request, then the connection closes before the answer is read
        listing = json.dumps(
            call(2, "compozy__session_list", {"result_view": "full", "limit": 200})
        ).encode()
        with _connect(url) as sock:
            sock.sendall(_request_head(url, len(listing), "compozy__session_list") + listing)
        # a connection reset (RST) while the call runs
        with _connect(url) as sock:
            sock.sendall(_request_head(url, len(listing), "compozy__session_list") + listing)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET_ON_CLOSE)
    await assert_serving(http_proxy, sid)
    # a client going away is not an application error
    assert "Traceback" not in http_proxy.process.stderr, http_proxy.process.stderr


# --- a call that is really in flight: a tool that waits until the test lets it go ---------


@dataclass
class Gate:
    entered: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    finished: int = 0


def gated_app(settings: Settings, clock: FixedClock, gate: Gate) -> App:
    async def wait(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
        gate.entered.set()
        await gate.release.wait()
        gate.finished += 1
        return {"waited": True}

    slow = ToolDefinition(
        id="test__wait",
        description="Waits until released.",
        input_schema={"type": "object", "properties": {"tag": {"type": "string"}}},
        output_schema={"type": "object"},
        handler=wait,
        risk=Risk.READ,
        toolsets=("test",),
    )
    return open_app(settings, store=SQLiteStore.memory(), clock=clock, extra_tools=[slow])


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def gated(settings: Settings, clock: FixedClock, gate: Gate) -> Iterator[ProxyServer]:
    with gated_app(settings, clock, gate) as app:
        yield ProxyServer(app)


@asynccontextmanager
async def cancelled_when_entered(gate: Gate) -> AsyncIterator[anyio.abc.TaskGroup]:
    """A task group whose tasks are cancelled as soon as the gated call is running."""
    async with anyio.create_task_group() as tg:
        yield tg
        with anyio.fail_after(STARTUP_DEADLINE):
            await gate.entered.wait()
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_call_cancelled_in_flight_in_process_leaves_the_server_serving(
    gated: ProxyServer, gate: Gate, mode: Mode
) -> None:
    async with Client(gated.server, mode=mode, cache=None) as client:
        sid = (await create_session(client))["id"]
        async with cancelled_when_entered(gate) as tg:
            tg.start_soon(client.call_tool, "test__wait", {"tag": "first"})
        gate.release.set()
        assert record(await client.call_tool("test__wait", {"tag": "second"})) == {"waited": True}
        assert record(await client.call_tool("compozy__session_status", {"session_id": sid}))


async def test_an_http_connection_closed_while_its_call_runs_leaves_the_proxy_serving(
    gated: ProxyServer, gate: Gate, caplog: pytest.LogCaptureFixture
) -> None:
    async with served_over_http(gated) as url:
        async with httpx2.AsyncClient(timeout=30) as http, cancelled_when_entered(gate) as tg:
            tg.start_soon(post_call, http, url, "test__wait", {"tag": "first"})
        gate.release.set()
        async with Client(url, mode="auto", cache=None) as client:
            waited = await client.call_tool("test__wait", {"tag": "second"})
            assert record(waited) == {"waited": True}
            sid = (await create_session(client))["id"]
        async with Client(url, mode="legacy", cache=None) as client:
            assert record(await client.call_tool("compozy__session_status", {"session_id": sid}))
            # and a legacy session whose call is cancelled in flight
            gate.entered, gate.release = anyio.Event(), anyio.Event()
            async with cancelled_when_entered(gate) as tg:
                tg.start_soon(client.call_tool, "test__wait", {"tag": "third"})
            gate.release.set()
            assert record(await client.call_tool("compozy__session_status", {"session_id": sid}))
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


@pytest.mark.process
def test_stdin_from_dev_null_ends_the_proxy_at_once(proxy_home: Home) -> None:
    """``compozy proxy < /dev/null``: a device the event loop cannot poll is read in a thread;
    it ends at once (it hung, the loop's reader failing in a callback)."""
    done = subprocess.run(
        [str(COMPOZY), "proxy"],
        stdin=subprocess.DEVNULL,
        env=proxy_home.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert b"Exception" not in done.stderr, done.stderr
