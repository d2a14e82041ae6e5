"""``compozy proxy`` against a daemon: the daemon's ``/mcp`` catalog, served over stdio, HTTP or
a socket like the in-process proxy.

The relay lists the daemon's tools, as the bound session (``X-Compozy-Session``), and serves
that listing with its own pages; each ``tools/call`` goes to the daemon as it came and its
result comes back as the daemon sent it, so a client sees what the in-process proxy would
show. No store is opened here: the daemon owns it.

It speaks to the daemon in the 2025-11-25 era, the one whose tool definitions carry every
field (``execution`` included) and in which a server may ask its client something mid-call:
what streams during a call flows both ways, the daemon's progress to the relay's client and
the daemon's questions (an approval, or an upstream server's elicitation or sampling) to the
client whose call is waiting (:mod:`compozy_mcp.upstream.asking`), its answer back.

The daemon's listing changes when its upstream MCP servers come and go: the relay hears its
``tools/list_changed``, lists again and tells its own clients. A daemon that restarts forgets
the relay's MCP session: the relay connects again (a call that met the forgotten session is
sent again: it never ran), lists again and goes on. With ``--discovery search`` the relay
advertises the three discovery tools whatever the daemon advertises; the daemon routes
``compozy__tool_call`` in either mode.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
from anyio.abc import TaskStatus
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_REQUEST,
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    Tool,
    ToolListChangedNotification,
)

from compozy_mcp.errors import DaemonUnreachable, RemoteError, ResourceNotFound, ToolBackendFailed
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.remote import RemoteHost, daemon_http_client
from compozy_mcp.hostapi.target import Target
from compozy_mcp.hostapi.wire import MCP_PATH, SESSION_HEADER
from compozy_mcp.proxy._asking import RequestAsker
from compozy_mcp.proxy._notify import ToolsChanged
from compozy_mcp.proxy._paging import Pages
from compozy_mcp.proxy.catalog_server import (
    CHANGING_CATALOG_TTL_MS,
    META_APPROVAL_TOKEN,
    error_result,
    native_server,
)
from compozy_mcp.proxy.discovery import TOOL_CALL, TOOL_CALL_SCHEMA, search_listing
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.asking import Askers
from compozy_mcp.upstream.http import UNREACHABLE, AnsweringTransport

log = logging.getLogger(__name__)

#: the listing is read page by page; a daemon that never ends its cursor chain is cut off
MAX_LIST_PAGES = 1000
#: the "tool" an error of the relay's own start-up names
RELAY = "compozy proxy"
#: how long the relay waits before it connects to the daemon again
FOLLOW_RETRY_SECONDS = 1.0
#: how long a call waits for a connection being made again before it fails
RECONNECT_WAIT_SECONDS = 5.0


class Relay:
    """An MCP server whose catalog and calls are a daemon's."""

    def __init__(
        self,
        target: Target,
        *,
        token: str | None = None,
        session: str | None = None,
        page_size: int | None = None,
        discovery: Discovery = Discovery.FULL,
    ) -> None:
        self.target = target
        self.session = session
        self.page_size = page_size
        self.discovery = discovery
        self._token = token
        self._pages = Pages([], page_size)
        self._listed: list[Tool] | None = None
        self._schemas: dict[str, Any] = {TOOL_CALL: TOOL_CALL_SCHEMA}
        self._upstream: Client | None = None
        self._connected_now = anyio.Event()
        self._lost = anyio.Event()
        self._relist_wanted = anyio.Event()
        #: the calls waiting on the daemon, which its questions are passed to
        self._askers = Askers("the compozy daemon")
        self.changes = ToolsChanged()
        self.server = native_server(
            self._list_tools,
            self._call_tool,
            self._schemas.get,
            self.changes,
            catalog_ttl_ms=CHANGING_CATALOG_TTL_MS,
        )

    def _http(self) -> httpx2.AsyncClient:
        return daemon_http_client(
            self.target,
            self._token,
            headers={SESSION_HEADER: self.session} if self.session else None,
            wrap=lambda inner: AnsweringTransport(inner, f"the compozy daemon at {self.target}"),
        )

    @contextlib.asynccontextmanager
    async def _connected(self, *, serving: bool = False) -> AsyncIterator[Client]:
        """An MCP session with the daemon; ``serving``: the one calls go through, which hears
        the daemon's changes and passes its questions to the client whose call is waiting."""
        url = self.target.base_url + MCP_PATH
        options: dict[str, Any] = {"mode": "legacy", "cache": None}
        if serving:
            options.update(
                message_handler=self._on_message,
                sampling_callback=self._askers.sampling,
                elicitation_callback=self._askers.elicitation,
            )
        async with (
            self._http() as http,
            # the daemon's results are held to its own budget: no cap of the relay's
            Client(
                streamable_http_client(url, http_client=http, max_sse_event_size=None),
                **options,
            ) as client,
        ):
            yield client

    async def prepare(self) -> None:
        """Check that the daemon answers (and knows the session), then read its listing.

        Raises the errors the in-process proxy raises for the same mistakes, and
        :class:`~compozy_mcp.errors.DaemonUnreachable` when nothing answers.
        """
        # One Host API request first: it words an absent daemon, a missing token and an unknown
        # session the way every other command does.
        host = RemoteHost(self.target, token=self._token)
        try:
            if self.session:
                await host.call(ops.SESSION_STATUS, {"session_id": self.session})
            else:
                await host.call(ops.LIST_WORKSPACES, {})  # a small answer that needs the token
        except RemoteError as error:
            if self.session and error.code == "not_found":
                raise ResourceNotFound(RELAY, "session", self.session) from None
            raise
        finally:
            await host.aclose()
        try:
            async with self._connected() as client:
                await self._relist(client)
        except MCPError as exc:
            raise DaemonUnreachable(
                f"the compozy daemon at {self.target} did not serve MCP at {MCP_PATH}: "
                f"{exc.error.message}",
                reason=Reason.MCP_UNAVAILABLE,
            ) from None

    async def _relist(self, client: Client) -> bool:
        """Read the daemon's listing again; whether it changed."""
        tools = await _list_all(client)
        self._schemas.update({tool.name: tool.input_schema for tool in tools})
        if self.discovery is Discovery.SEARCH:
            tools = search_listing(tools)
        if tools == self._listed:
            return False
        self._listed = tools
        self._pages = Pages(tools, self.page_size)
        return True

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Hold a connection to the daemon while the relay serves (call :meth:`prepare`
        first), following its listing's changes and connecting again when it is lost."""
        async with anyio.create_task_group() as tasks:
            await tasks.start(self._keep_connected)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def _keep_connected(self, *, task_status: TaskStatus[None]) -> None:
        started = False
        while True:
            self._lost = anyio.Event()
            try:
                async with self._connected(serving=True) as client:
                    if started:  # connected again: what changed meanwhile is told
                        await self._changed(client)
                    self._upstream = client
                    self._connected_now.set()
                    if not started:
                        started = True
                        task_status.started()
                    await self._follow(client)
            except* (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.TransportError):
                log.debug("the connection to the daemon at %s was already gone", self.target)
            except* Exception as failed:
                if not started:
                    raise
                log.debug("the daemon at %s did not answer (%r)", self.target, failed)
            finally:
                self._upstream = None
                self._connected_now = anyio.Event()
            await anyio.sleep(FOLLOW_RETRY_SECONDS)

    async def _follow(self, client: Client) -> None:
        """List again (and tell the relay's clients) when the daemon says its tools changed;
        return when a call found the connection lost."""
        async with anyio.create_task_group() as tasks:

            async def lost() -> None:
                await self._lost.wait()
                tasks.cancel_scope.cancel()

            tasks.start_soon(lost)
            while True:
                await self._relist_wanted.wait()
                self._relist_wanted = anyio.Event()
                await self._changed(client)

    async def _on_message(self, message: Any) -> None:
        # runs in the client's receive loop: only flags (a request from here would wait on it)
        if isinstance(message, ToolListChangedNotification):
            self._relist_wanted.set()

    async def _changed(self, client: Client) -> None:
        # a listing read again after a reconnection may be unchanged: say nothing then
        if await self._relist(client):
            await self.changes.announce()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.changes.remember(ctx)
        return self._pages.page(params)

    async def _client(self) -> Client | None:
        """The connection to the daemon, waiting a moment for one being made again."""
        with anyio.move_on_after(RECONNECT_WAIT_SECONDS):
            await self._connected_now.wait()
        return self._upstream

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any] | None
    ) -> CallToolResult:
        self.changes.remember(ctx)
        # a one-shot approval token rides in _meta; the daemon checks it (docs/approvals.md)
        token = (ctx.meta or {}).get(META_APPROVAL_TOKEN)
        meta: Any = {META_APPROVAL_TOKEN: token} if isinstance(token, str) else None
        call = CallToolRequest(
            params=CallToolRequestParams(name=name, arguments=arguments, _meta=meta)
        )

        async def relay_progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        for attempt in range(2):
            upstream = await self._client()
            if upstream is None:
                return _unreachable(name, f"cannot reach the compozy daemon at {self.target}")
            try:
                # not Client.call_tool: it would check the result against the tool's
                # outputSchema, and a relay returns what the daemon sent
                with self._askers.waiting(RequestAsker(ctx)):
                    return await upstream.session.send_request(
                        call, CallToolResult, progress_callback=relay_progress
                    )
            except MCPError as exc:
                if _session_forgotten(exc) and attempt == 0:
                    self._lost.set()  # the daemon restarted: connect again, send it again
                    self._connected_now = anyio.Event()
                    continue
                if exc.error.code != UNREACHABLE:
                    raise  # the daemon's own protocol answer (an unknown tool...), passed on
                self._lost.set()
                log.warning("tools/call %s: %s", name, exc.error.message)
                return _unreachable(name, exc.error.message)
        return _unreachable(name, f"the compozy daemon at {self.target} forgot this session")


def _session_forgotten(exc: MCPError) -> bool:
    """The daemon no longer knows the relay's MCP session (it restarted): the request was not
    served, so it may be sent again on a new session."""
    return exc.error.code == INVALID_REQUEST and exc.error.message == "Session terminated"


def _unreachable(name: str, why: str) -> CallToolResult:
    failure = ToolBackendFailed(
        name,
        f'tool "{name}" failed: {why}; is `compozy serve` running?',
        reason=Reason.DAEMON_UNREACHABLE,
    )
    return error_result(failure)


async def _list_all(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise DaemonUnreachable(f"the daemon's tools/list did not end after {MAX_LIST_PAGES} pages")
