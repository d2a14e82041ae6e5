"""``compozy proxy`` against a daemon: the daemon's ``/mcp`` catalog, served over stdio, HTTP or
a socket like the in-process proxy.

The relay lists the daemon's tools, as the bound session (``X-Compozy-Session``), and serves
that listing with its own pages; each ``tools/call`` goes to the daemon as it came and its
result (and progress) comes back as the daemon sent it, so a client sees what the in-process
proxy would show. No store is opened here: the daemon owns it.

The daemon's listing changes when its upstream MCP servers come and go: the relay listens for
its ``tools/list_changed`` (a ``subscriptions/listen`` stream), lists again and tells its own
clients. With ``--discovery search`` the relay advertises the three discovery tools whatever
the daemon advertises; the daemon routes ``compozy__tool_call`` in either mode.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    Tool,
)

from compozy_mcp.errors import DaemonUnreachable, RemoteError, ResourceNotFound, ToolBackendFailed
from compozy_mcp.hostapi.remote import RemoteHost, daemon_http_client
from compozy_mcp.hostapi.target import Target
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.proxy.discovery import TOOL_CALL, TOOL_CALL_SCHEMA, Discovery, search_listing
from compozy_mcp.proxy.notify import ToolsChanged
from compozy_mcp.proxy.paging import Pages
from compozy_mcp.proxy.server import (
    CHANGING_CATALOG_TTL_MS,
    META_APPROVAL_TOKEN,
    error_result,
    native_server,
)
from compozy_mcp.proxy.transports import MCP_PATH
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.http import UNREACHABLE, AnsweringTransport

log = logging.getLogger(__name__)

#: the listing is read page by page; a daemon that never ends its cursor chain is cut off
MAX_LIST_PAGES = 1000
#: the "tool" an error of the relay's own start-up names
RELAY = "compozy proxy"
#: how long the relay waits before it listens for the daemon's changes again
FOLLOW_RETRY_SECONDS = 1.0


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
    async def _connected(self) -> AsyncIterator[Client]:
        url = self.target.base_url + MCP_PATH
        async with (
            self._http() as http,
            Client(streamable_http_client(url, http_client=http), cache=None) as client,
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
                await host.session_status(self.session)
            else:
                await host.list_workspaces()  # a small answer that needs the token
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
        """Hold the connection to the daemon while the relay serves (call :meth:`prepare`
        first), following its listing's changes."""
        connection = contextlib.AsyncExitStack()
        client = await connection.enter_async_context(self._connected())
        try:
            async with anyio.create_task_group() as tasks:
                self._upstream = client
                tasks.start_soon(self._follow_changes, client)
                try:
                    yield
                finally:
                    self._upstream = None
                    tasks.cancel_scope.cancel()
        finally:
            try:
                await connection.aclose()
            except* (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.TransportError):
                # the daemon went first (stopped before this proxy): there is nothing to close
                log.debug("the connection to the daemon at %s was already gone", self.target)

    async def _follow_changes(self, client: Client) -> None:
        """List again, and tell the relay's clients, whenever the daemon's tools change; a
        lost stream (the daemon restarted) is opened again, and the listing re-read."""
        lost = False
        while True:
            try:
                async with client.listen(tools_list_changed=True) as events:
                    if lost:
                        await self._changed(client)
                    async for _ in events:
                        await self._changed(client)
            except ListenNotSupportedError:
                return  # a daemon of the handshake era only: its listing is fixed
            except Exception as exc:  # the daemon went away: try again in a moment
                log.debug("the daemon's tools/list_changed stream ended (%r)", exc)
            lost = True
            await anyio.sleep(FOLLOW_RETRY_SECONDS)

    async def _changed(self, client: Client) -> None:
        # a stream that timed out and was opened again re-reads an unchanged listing: say
        # nothing then
        if await self._relist(client):
            await self.changes.announce()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.changes.remember(ctx)
        return self._pages.page(params)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        self.changes.remember(ctx)
        upstream = self._upstream
        name = params.name
        if upstream is None:
            raise RuntimeError("the relay is not connected; serve it inside serving()")

        async def relay_progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        # a one-shot approval token rides in _meta; the daemon checks it (docs/approvals.md)
        token = (ctx.meta or {}).get(META_APPROVAL_TOKEN)
        meta: Any = {META_APPROVAL_TOKEN: token} if isinstance(token, str) else None
        call = CallToolRequest(
            params=CallToolRequestParams(name=name, arguments=params.arguments, _meta=meta)
        )
        try:
            # not Client.call_tool: it would check the result against the tool's outputSchema,
            # and a relay returns what the daemon sent
            return await upstream.session.send_request(
                call, CallToolResult, progress_callback=relay_progress
            )
        except MCPError as exc:
            if exc.error.code != UNREACHABLE:
                raise  # the daemon's own protocol answer (an unknown tool...), passed on
            log.warning("tools/call %s: %s", name, exc.error.message)
            failure = ToolBackendFailed(
                name,
                f'tool "{name}" failed: {exc.error.message}; is `compozy serve` running?',
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
