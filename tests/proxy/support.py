"""Reaching the hosted MCP proxy every way a client can, and reading what it answers.

A test asks for ``proxy`` (parametrised over in-process, ``compozy proxy`` on stdio, on
Streamable HTTP over TCP and over a Unix socket) and ``mode`` (``auto``: 2026-07-28,
``legacy``: 2025-11-25), then opens SDK clients with ``proxy.client(mode, ...)``.

Subprocesses: a stdio proxy lives as long as its client (the SDK's ``stdio_client`` closes
stdin, waits, then kills), and the ``stdio`` and ``relay`` kinds keep one client open per mode
and set of flags for the whole session (:mod:`tests.proxy.shared`); HTTP and socket proxies are
started once per set of flags, by a session-scoped pool that terminates every one of them at
the end. Readiness is the line the
proxy prints on stderr once its socket listens, waited for with a deadline, never a sleep.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import select
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio
import httpcore2
import httpx2
import uvicorn
from benchmarks.common import initialize_request
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from tests.proxy.shared import McpClient, SharedClients

from compozy_mcp import net
from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.hostapi.wire import MCP_PATH
from compozy_mcp.proxy import transports
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.store import SQLiteStore

COMPOZY = Path(sys.executable).parent / "compozy"
#: how long a proxy may take to print its address (a cold ``import mcp.server`` is ~2 s)
STARTUP_DEADLINE = 30.0
STOP_DEADLINE = 10.0

Mode = Literal["auto", "legacy"]
MODES: tuple[Mode, ...] = ("auto", "legacy")
#: the protocol revision each client mode ends up on
PROTOCOL = {"auto": "2026-07-28", "legacy": "2025-11-25"}

HTTP_READY = re.compile(r"serving MCP at (http://\S+)")
#: a 2025-11-25 client's first request, and the notification that ends its handshake
INITIALIZE: dict[str, Any] = initialize_request("raw")
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}
UDS_READY = re.compile(r"serving MCP on unix socket (\S+) at (/\S+)")


@dataclass(frozen=True, slots=True)
class Home:
    """A scratch ``COMPOZY_HOME`` and the environment every ``compozy`` command runs in."""

    root: Path
    env: dict[str, str]

    def with_env(self, **extra: str) -> dict[str, str]:
        return {**self.env, **extra}


def make_home(root: Path) -> Home:
    root.mkdir(parents=True, exist_ok=True)
    (root / "workspace").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env["COMPOZY_HOME"] = str(root / "home")
    env["COMPOZY_WORKSPACE"] = str(root / "workspace")
    # managed sessions of these tests are not held for approval (tests/approvals are)
    env["COMPOZY_PERMISSION_MODE"] = "bypass"
    env["PATH"] = os.pathsep.join([str(COMPOZY.parent), env.get("PATH", "")])
    return Home(root, env)


def proxy_args(
    *, session: str | None = None, page_size: int | None = None, extra: Sequence[str] = ()
) -> list[str]:
    args = ["proxy", *extra]
    if session is not None:
        args += ["--session", session]
    if page_size is not None:
        args += ["--page-size", str(page_size)]
    return args


def budget_env(home: Home, budget: int | None) -> dict[str, str]:
    return home.with_env(COMPOZY_MAX_RESULT_BYTES=str(budget)) if budget else dict(home.env)


class ProxyProcess:
    """``compozy proxy ...`` running in the background; stderr is drained by a thread."""

    def __init__(
        self,
        args: Sequence[str],
        env: dict[str, str],
        ready: re.Pattern[str] | None,
        *,
        umask: int = -1,
    ) -> None:
        self.args = list(args)
        self.lines: list[str] = []
        self.match: re.Match[str] | None = None
        self._ready_pattern = ready
        self._ready = threading.Event()
        #: notified at each line read and at the end of stderr
        self._read = threading.Condition()
        self._ended = False
        self.proc = subprocess.Popen(
            [str(COMPOZY), *self.args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            umask=umask,
        )
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._read:
                self.lines.append(line)
                self._read.notify_all()
            if self.match is None and self._ready_pattern is not None:
                self.match = self._ready_pattern.search(line)
                if self.match is not None:
                    self._ready.set()
        with self._read:
            self._ended = True
            self._read.notify_all()
        self._ready.set()  # EOF: the process is gone; wait_ready() reports why

    def wait_for_line(self, text: str, deadline: float = STARTUP_DEADLINE) -> str:
        """The first stderr line holding ``text``, waited for (it may follow the ready line)."""

        def found() -> str | None:
            return next((line for line in self.lines if text in line), None)

        with self._read:
            self._read.wait_for(lambda: found() is not None or self._ended, deadline)
            line = found()
        assert line is not None, f"no line with {text!r} on stderr:\n{self.stderr}"
        return line

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_ready(self, deadline: float = STARTUP_DEADLINE) -> re.Match[str]:
        self._ready.wait(deadline)
        if self.match is None:
            self.stop()
            raise AssertionError(
                f"compozy {' '.join(self.args)} did not become ready within {deadline} s "
                f"(exit {self.proc.returncode}); stderr:\n{self.stderr}"
            )
        return self.match

    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()

    def stop(self) -> int:
        """SIGTERM, then SIGKILL if it does not exit in time; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(STOP_DEADLINE)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return self.proc.returncode


class HttpProxy:
    """A running ``compozy proxy --http 127.0.0.1:0``: its URL comes from its stderr."""

    def __init__(self, process: ProxyProcess) -> None:
        self.process = process
        self.url = process.wait_ready().group(1)


class UdsProxy:
    """A running ``compozy proxy --uds PATH``."""

    def __init__(self, process: ProxyProcess, path: Path) -> None:
        self.process = process
        match = process.wait_ready()
        assert Path(match.group(1)) == path, process.stderr
        self.path = path
        self.url = f"http://localhost{match.group(2)}"


class ProxyPool:
    """HTTP and socket proxies, started on first use per set of flags, all stopped at the end."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._http: dict[tuple[Any, ...], HttpProxy] = {}
        self._uds: dict[tuple[Any, ...], UdsProxy] = {}
        self._processes: list[ProxyProcess] = []
        self._daemons: dict[int | None, Path] = {}
        self._stack = contextlib.ExitStack()

    def start(
        self,
        args: Sequence[str],
        env: dict[str, str],
        ready: re.Pattern[str] | None,
        *,
        umask: int = -1,
    ) -> ProxyProcess:
        process = ProxyProcess(args, env, ready, umask=umask)
        self._processes.append(process)
        return process

    def http(
        self, *, session: str | None = None, page_size: int | None = None, budget: int | None = None
    ) -> HttpProxy:
        key = (session, page_size, budget)
        if key not in self._http:
            args = proxy_args(session=session, page_size=page_size, extra=["--http", "127.0.0.1:0"])
            self._http[key] = HttpProxy(self.start(args, budget_env(self.home, budget), HTTP_READY))
        return self._http[key]

    def uds(
        self, *, session: str | None = None, page_size: int | None = None, budget: int | None = None
    ) -> UdsProxy:
        key = (session, page_size, budget)
        if key not in self._uds:
            path = self.home.root / "sockets" / f"proxy-{len(self._uds)}.sock"
            args = proxy_args(session=session, page_size=page_size, extra=["--uds", str(path)])
            # umask 0: the socket's mode must be the proxy's doing, not the umask's
            process = self.start(args, budget_env(self.home, budget), UDS_READY, umask=0)
            self._uds[key] = UdsProxy(process, path)
        return self._uds[key]

    def daemon_socket(self, budget: int | None = None) -> Path:
        """The socket of a daemon (``compozy serve``) on this home, one per result budget."""
        from tests.api.support import Home as DaemonHome
        from tests.api.support import running_daemon

        if budget not in self._daemons:
            path = self.home.root / "sockets" / f"daemon-{len(self._daemons)}.sock"
            home = DaemonHome(self.home.root / "home", budget_env(self.home, budget))
            args = ("--no-tcp", "--uds", str(path))
            daemon = self._stack.enter_context(running_daemon(home, *args, listeners=1))
            assert daemon.socket == path
            self._daemons[budget] = path
        return self._daemons[budget]

    def close(self) -> None:
        for process in self._processes:  # all at once: each takes a moment to wind down
            process.terminate()
        for process in self._processes:
            process.stop()
        self._stack.close()


class Proxy(Protocol):
    """Something a test can open MCP clients on."""

    kind: str

    def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AbstractAsyncContextManager[McpClient]: ...


class _AsyncioUnixStream(httpcore2.AsyncNetworkStream):
    """A Unix socket connection on asyncio's own streams.

    anyio 4.16's ``UNIXSocketStream`` (httpcore2's default for Unix sockets) can fail a test
    with ``InvalidStateError`` in a loop callback when a pending read is cancelled as the
    stream closes (agronholm/anyio#1267), which the SDK's legacy client does on every exit.
    That is the client's problem, not the proxy's, so the tests' client does not use it.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            with anyio.fail_after(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore2.ReadTimeout("read timed out") from None
        except OSError as exc:
            raise httpcore2.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            with anyio.fail_after(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError:
            raise httpcore2.WriteTimeout("write timed out") from None
        except OSError as exc:
            raise httpcore2.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    def get_extra_info(self, info: str) -> Any:
        sock = self._writer.get_extra_info("socket")
        if info == "socket":
            return sock
        if info == "is_readable":  # idle and readable: the server closed it
            return sock is not None and bool(select.select([sock], [], [], 0)[0])
        return None


class _AsyncioUnixBackend(httpcore2.AsyncNetworkBackend):
    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                reader, writer = await asyncio.open_unix_connection(path)
        except (TimeoutError, OSError) as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        return _AsyncioUnixStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


def uds_http_client(path: Path) -> httpx2.AsyncClient:
    transport = httpx2.AsyncHTTPTransport(uds=str(path))
    transport._pool = httpcore2.AsyncConnectionPool(
        uds=str(path), network_backend=_AsyncioUnixBackend()
    )
    return httpx2.AsyncClient(transport=transport)


def uds_client(path: Path, url: str, mode: Mode) -> AbstractAsyncContextManager[Client]:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Client]:
        http = uds_http_client(path)
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            yield c

    return opened()


@dataclass
class InProcess:
    """``ProxyServer`` over the test's app, reached by the SDK client without any transport."""

    app: App
    settings: Settings
    clock: FixedClock
    kind: str = "inproc"

    @asynccontextmanager
    async def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AsyncIterator[Client]:
        async with AsyncExitStack() as stack:
            app = self.app
            if budget is not None:
                # a second app on its own store: only this client's calls see the budget
                app = stack.enter_context(
                    open_app(
                        self.settings.with_budget(budget),
                        store=SQLiteStore.memory(),
                        clock=self.clock,
                    )
                )
            scope = CallScope(session_id=session) if session else CallScope()
            server = ProxyServer(app, scope=scope, page_size=page_size).server
            # agents the client's calls started end with it, as they do when a proxy exits
            stack.push_async_callback(app.shutdown)
            yield await stack.enter_async_context(Client(server, mode=mode, cache=None))


_LOG_NUMBERS = itertools.count()


def stderr_log(home: Home, name: str) -> Path:
    """A new file for the stderr of a process the SDK's stdio client starts."""
    return home.root / f"{name}-{next(_LOG_NUMBERS)}.log"


@asynccontextmanager
async def spawned(
    home: Home,
    params: StdioServerParameters,
    mode: Mode,
    name: str,
    *,
    log: Path | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """A client (with ``options``) on a proxy the SDK's stdio client starts, its stderr in
    ``log`` (a new file by default); its stderr must hold no traceback."""
    log = log or stderr_log(home, name)
    with log.open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode=mode, cache=None, **options) as c:
            yield c
    assert "Traceback" not in log.read_text(), log.read_text()


def shared_spawn(
    shared: SharedClients,
    home: Home,
    params: StdioServerParameters,
    mode: Mode,
    name: str,
    key: tuple[Any, ...],
) -> AbstractAsyncContextManager[McpClient]:
    """A client on the stdio proxy ``params`` start, kept open across tests per ``key``."""
    log = stderr_log(home, name)
    return shared.client(
        (name, mode, *key), lambda: spawned(home, params, mode, name, log=log), log
    )


@dataclass
class Stdio:
    """``compozy proxy`` spawned by the SDK's stdio client, one process per mode and set of
    flags, kept open across tests (:mod:`tests.proxy.shared`)."""

    home: Home
    shared: SharedClients
    kind: str = "stdio"

    def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AbstractAsyncContextManager[McpClient]:
        params = StdioServerParameters(
            command=str(COMPOZY),
            args=proxy_args(session=session, page_size=page_size),
            env=budget_env(self.home, budget),
        )
        return shared_spawn(
            self.shared, self.home, params, mode, "stdio", (session, page_size, budget)
        )


@dataclass
class Relayed:
    """``compozy --socket D proxy`` spawned by the SDK's stdio client: the proxy relays a
    daemon serving the same home, one process per mode and set of flags, kept open across
    tests (:mod:`tests.proxy.shared`)."""

    pool: ProxyPool
    shared: SharedClients
    kind: str = "relay"

    def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AbstractAsyncContextManager[McpClient]:
        daemon = self.pool.daemon_socket(budget)
        home = self.pool.home
        params = StdioServerParameters(
            command=str(COMPOZY),
            args=["--socket", str(daemon), *proxy_args(session=session, page_size=page_size)],
            env=dict(home.env),
        )
        return shared_spawn(self.shared, home, params, mode, "relay", (session, page_size, budget))


@dataclass
class Http:
    pool: ProxyPool
    kind: str = "http"

    @asynccontextmanager
    async def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AsyncIterator[Client]:
        server = self.pool.http(session=session, page_size=page_size, budget=budget)
        async with Client(server.url, mode=mode, cache=None) as c:
            yield c
        assert server.process.alive(), server.process.stderr


@dataclass
class Uds:
    pool: ProxyPool
    kind: str = "uds"

    @asynccontextmanager
    async def client(
        self,
        mode: Mode,
        *,
        session: str | None = None,
        page_size: int | None = None,
        budget: int | None = None,
    ) -> AsyncIterator[Client]:
        server = self.pool.uds(session=session, page_size=page_size, budget=budget)
        async with uds_client(server.path, server.url, mode) as c:
            yield c
        assert server.process.alive(), server.process.stderr


@asynccontextmanager
async def served_over_http(proxy: ProxyServer) -> AsyncIterator[str]:
    """The proxy's real HTTP app (``transports.http_app``) on a free loopback port, in-process."""
    sock = net.bind_tcp("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}"
    config = uvicorn.Config(
        transports.http_app(
            proxy.server, proxy.app.settings, answers_at_once=proxy.answers_at_once
        ),
        log_level="warning",
        lifespan="on",
        access_log=False,
    )
    server = net.stoppable_server(config)
    try:
        async with anyio.create_task_group() as tg:
            # the socket already listens: connections queue until uvicorn accepts them
            tg.start_soon(server.serve, [sock])
            try:
                yield url
            finally:
                server.stop()
    finally:
        sock.close()


# --- reading results ----------------------------------------------------------------------

# The spec, section "Errors": dispatch messages.
UNKNOWN_VIEW = 'tool "compozy__session_status" input "result_view" must be one of "compact", "full"'
SINGLE_RESULT = (
    'tool "compozy__skill_view" returns a single result and does not accept "result_view"'
)
ARTIFACT_READ = "compozy__tool_artifact_read"
META_ARTIFACTS = "compozy.dev/artifacts"
META_READ_TOOL = "compozy.dev/read_tool"


def record(result: CallToolResult) -> dict[str, Any]:
    """The record of a successful call, once its one text block is checked to be exactly it."""
    assert not result.is_error, result
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, TextContent), block
    assert isinstance(result.structured_content, dict), result
    assert json.loads(block.text) == result.structured_content
    return result.structured_content


def tool_error(result: CallToolResult) -> dict[str, Any]:
    """The ``error`` object of an ``isError`` result, checked to be the text block's message."""
    assert result.is_error is True, result
    assert isinstance(result.structured_content, dict), result
    assert list(result.structured_content) == ["error"], result.structured_content
    error: dict[str, Any] = result.structured_content["error"]
    assert {"code", "reason", "message", "tool_id"} <= set(error), error
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, TextContent), block
    assert block.text == error["message"]
    return error


async def create_session(client: McpClient, **fields: Any) -> dict[str, Any]:
    fields.setdefault("agent_name", "general")
    session: dict[str, Any] = record(await client.call_tool("compozy__session_create", fields))[
        "session"
    ]
    return session


async def spawn_child(client: McpClient, parent: str, tools: list[str]) -> str:
    spawned = record(
        await client.call_tool(
            "compozy__session_spawn",
            {
                "parent_session_id": parent,
                "agent_name": "worker",
                "ttl_seconds": 600,
                "tools": tools,
            },
        )
    )
    child: str = spawned["session_id"]
    return child


async def read_artifact(client: McpClient, read_input: dict[str, Any]) -> tuple[bytes, int]:
    """Follow ``compozy__tool_artifact_read`` pages from ``read_input`` until eof; join them.

    Returns the bytes and the number of pages it took.
    """
    data, offset = b"", read_input.get("offset", 0)
    for pages in range(1, 10_000):
        page = record(await client.call_tool(ARTIFACT_READ, {**read_input, "offset": offset}))
        assert "truncated" not in page
        chunk = base64.b64decode(page["data_base64"])
        assert (page["offset"], page["bytes"]) == (offset, len(chunk))
        data += chunk
        if page["eof"]:
            assert page["next_offset"] is None
            return data, pages
        offset = page["next_offset"]
    raise AssertionError("the artifact never reached eof")
