"""``compozy proxy`` against a daemon: the daemon's ``/mcp`` catalog, served over stdio, HTTP or
a socket like the in-process proxy.

The relay lists the daemon's tools once, as the bound session (``X-Compozy-Session``), and
serves that listing with its own pages; each ``tools/call`` goes to the daemon as it came and
its result comes back as the daemon sent it, so a client sees what the in-process proxy would
show. No store is opened here: the daemon owns it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
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
from compozy_mcp.proxy.notify import ToolsChanged
from compozy_mcp.proxy.paging import Pages
from compozy_mcp.proxy.server import error_result, native_server
from compozy_mcp.proxy.transports import MCP_PATH
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.http import UNREACHABLE, AnsweringTransport

log = logging.getLogger(__name__)

#: the listing is read page by page; a daemon that never ends its cursor chain is cut off
MAX_LIST_PAGES = 1000
#: the "tool" an error of the relay's own start-up names
RELAY = "compozy proxy"


class Relay:
    """An MCP server whose catalog and calls are a daemon's."""

    def __init__(
        self,
        target: Target,
        *,
        token: str | None = None,
        session: str | None = None,
        page_size: int | None = None,
    ) -> None:
        self.target = target
        self.session = session
        self.page_size = page_size
        self._token = token
        self._pages = Pages([], page_size)
        self._schemas: dict[str, Any] = {}
        self._upstream: Client | None = None
        self.changes = ToolsChanged()
        self.server = native_server(
            self._list_tools, self._call_tool, self._schemas.get, self.changes
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
                tools = await _list_all(client)
        except MCPError as exc:
            raise DaemonUnreachable(
                f"the compozy daemon at {self.target} did not serve MCP at {MCP_PATH}: "
                f"{exc.error.message}",
                reason=Reason.MCP_UNAVAILABLE,
            ) from None
        self._pages = Pages(tools, self.page_size)
        self._schemas.clear()
        self._schemas.update({tool.name: tool.input_schema for tool in tools})

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Hold the connection to the daemon while the relay serves (call :meth:`prepare`
        first)."""
        async with self._connected() as client:
            self._upstream = client
            try:
                yield
            finally:
                self._upstream = None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self._pages.page(params)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        upstream = self._upstream
        name = params.name
        if upstream is None:
            raise RuntimeError("the relay is not connected; serve it inside serving()")
        try:
            return await upstream.call_tool(name, params.arguments)
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
