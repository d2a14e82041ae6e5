"""One connection to an upstream MCP server, through the MCP SDK's client.

Servers are spoken to in the 2025-11-25 handshake era (the SDK's ``legacy`` mode): servers of
both eras speak it (SDK v2 servers serve either), it keeps one session open on which the
server's ``tools/list_changed`` and progress notifications arrive, and ``ping`` is defined, which
is how a hung server is found.

Calls are forwarded with ``ClientSession.send_request``, not ``Client.call_tool``: the SDK's
client checks a result against the tool's ``outputSchema``, and a pass-through must return the
server's result as it came, right or wrong.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, TextIO, cast

import anyio
import anyio.to_thread
import httpx2
from mcp import types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from compozy_mcp.errors import CompozyError, ConfigError
from compozy_mcp.private_paths import open_private_append, private_dirs
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream import _extensions as extensions
from compozy_mcp.upstream._stdio import stdio_server
from compozy_mcp.upstream.asking import NO_CAPABILITY, Askers, Declared
from compozy_mcp.upstream.config import ServerDefinition, Transport
from compozy_mcp.upstream.http import UNREACHABLE, AnsweringTransport

log = logging.getLogger(__name__)

#: a listing that never ends its cursor chain is cut off here
MAX_LIST_PAGES = 100
#: a stdio server's stderr log is started afresh above this size
MAX_LOG_BYTES = 1024 * 1024
LOG_DIR = Path("logs") / "mcp"

#: called with (progress, total, message) for each progress notification of a forwarded call
Progress = ProgressFnT


class Connection:
    """A connected, initialized server."""

    def __init__(self, client: Client, definition: ServerDefinition) -> None:
        self.client = client
        self.definition = definition
        #: set when the server said its tools changed; read by the supervisor
        self.listing_changed = False
        self.wake = anyio.Event()

    def notice(self, message: types.ServerNotification | Exception) -> None:
        """The SDK's message handler: runs in the client's receive loop, so it only flags."""
        if isinstance(message, types.ToolListChangedNotification):
            self.listing_changed = True
            self.wake.set()

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await self.client.session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor)
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        raise ConfigError(
            f"MCP server {self.definition.name!r} listed more than {MAX_LIST_PAGES} pages",
            reason=Reason.MCP_SERVER_DOWN,
        )

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        progress: Progress | None = None,
        meta: dict[str, Any] | None = None,
    ) -> types.CallToolResult:
        """Forward one ``tools/call``; the server's JSON-RPC errors raise ``MCPError``."""
        params = types.CallToolRequestParams(
            name=name, arguments=arguments, _meta=cast(types.RequestParamsMeta, meta or None)
        )
        return await self.client.session.send_request(
            types.CallToolRequest(params=params),
            types.CallToolResult,
            progress_callback=progress,
        )

    async def ping(self) -> None:
        await self.client.session.send_ping()


def _log_file(home: Path, name: str) -> TextIO:
    """The stdio server's stderr (blocking: run in a thread)."""
    path = private_dirs(home, LOG_DIR) / f"{name}.log"
    if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
        path.replace(path.with_suffix(".log.1"))
    return open_private_append(path)


def _extension_server(definition: ServerDefinition) -> Server[Any] | MCPServer:
    """The extension's MCP server object (blocking: imports; run in a thread)."""
    found = extensions.load(definition)
    if callable(found) and not isinstance(found, Server | MCPServer):
        found = found()
    if not isinstance(found, Server | MCPServer):
        raise ConfigError(
            f"entry point {definition.name!r} ({definition.entry_point}) is not an MCP server: "
            "it must be an MCP SDK Server or MCPServer, or a function returning one",
            reason=Reason.MCP_CONFIG_INVALID,
        )
    return found


@contextlib.asynccontextmanager
async def connect(
    definition: ServerDefinition,
    *,
    home: Path,
    env: Mapping[str, str],
    cwd: Path | None = None,
    askers: Askers | None = None,
    declared: Declared = NO_CAPABILITY,
) -> AsyncIterator[Connection]:
    """Start or reach ``definition``'s server and hold an initialized session with it. Leaving
    ends the session; a stdio server's whole process group is stopped promptly
    (:mod:`.stdio`). The client declares the capabilities of ``declared``; ``askers``
    answers what the server asks (:mod:`.asking`)."""
    definition = definition.expanded(env)
    holder: list[Connection] = []

    async def on_message(message: Any) -> None:
        if holder:
            holder[0].notice(message)

    options: dict[str, Any] = {"mode": "legacy", "cache": None, "message_handler": on_message}
    if askers is not None:
        # the SDK declares a capability when its callback is given
        if declared.sampling:
            options["sampling_callback"] = askers.sampling
        if declared.elicitation:
            options["elicitation_callback"] = askers.elicitation
        if declared.roots:
            options["list_roots_callback"] = askers.list_roots
    async with contextlib.AsyncExitStack() as stack:
        if definition.transport is Transport.STDIO:
            errlog = await anyio.to_thread.run_sync(_log_file, home, definition.name)
            stack.callback(errlog.close)
            target: Any = stdio_server(
                definition.command or "",
                definition.args,
                env=definition.env,
                cwd=cwd,
                errlog=errlog,
            )
        elif definition.transport is Transport.HTTP:
            url = definition.url or ""
            timeouts = definition.timeouts
            # its TLS context reads the system's CA bundle: 20-40 ms of CPU, off the loop
            network = await anyio.to_thread.run_sync(httpx2.AsyncHTTPTransport)
            http = httpx2.AsyncClient(
                headers=dict(definition.headers),
                # No read timeout: the GET stream that carries tools/list_changed is idle for as
                # long as nothing changes, and the SDK gives it up after a few read timeouts.
                # Calls and pings have timeouts of their own (the supervisor's).
                timeout=httpx2.Timeout(timeouts.startup, read=None),
                transport=AnsweringTransport(
                    network,
                    f'MCP server "{definition.name}" at {url}',
                    detail=False,  # no transport error text in what users read
                ),
            )
            await stack.enter_async_context(http)
            target = streamable_http_client(url, http_client=http)
        else:
            target = await anyio.to_thread.run_sync(_extension_server, definition)
        client = await stack.enter_async_context(Client(target, **options))
        connection = Connection(client, definition)
        holder.append(connection)
        yield connection


def describe_failure(exc: BaseException, definition: ServerDefinition) -> str:
    """Why a server failed, in our words: never an exception's text (it may hold paths or
    internals), only what the server itself answered."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    log.debug("MCP server %s failed", definition.name, exc_info=exc)
    if isinstance(exc, CompozyError):
        return exc.message
    if isinstance(exc, MCPError):
        code, message = exc.error.code, exc.error.message
        if code == types.CONNECTION_CLOSED:
            if definition.transport is Transport.STDIO:
                return (
                    "its process exited or closed its output (its stderr is in "
                    f"$COMPOZY_HOME/{LOG_DIR}/{definition.name}.log)"
                )
            return "the connection to it closed"
        if code == UNREACHABLE:
            return message
        if code == types.REQUEST_TIMEOUT:
            return "did not answer in time"
        return f"answered with error {code}: {message[:200]}"
    if isinstance(exc, FileNotFoundError | PermissionError | NotADirectoryError):
        program = Path(definition.command or "").name
        problem = "not found" if isinstance(exc, FileNotFoundError) else "cannot be run"
        return f"cannot start: command {program!r} {problem}"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {definition.url}"
    if isinstance(exc, httpx2.TransportError):
        return f"cannot reach {definition.url}"
    if isinstance(exc, ValidationError):
        return "sent a message that is not valid MCP"
    if isinstance(exc, ImportError):
        return f"cannot import its entry point ({definition.entry_point})"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return f"failed unexpectedly ({type(exc).__name__}; COMPOZY_DEBUG=1 logs the details)"
