"""The proxy's MCP server: ``tools/list`` from the catalog (native tools, and the tools of
upstream MCP servers), ``tools/call`` through dispatch or forwarded to the server."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    NotificationParams,
    PaginatedRequestParams,
    SetLevelRequestParams,
    Tool,
)

from compozy_mcp import jsonutil
from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, PROGRESS, RESULT_CEILING, CallScope, scope_of
from compozy_mcp.dispatch import ToolResult
from compozy_mcp.errors import (
    CompozyError,
    ToolApprovalRequired,
    ToolBackendFailed,
    ToolDenied,
    ToolInvalidInput,
    ToolNotFound,
)
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.proxy._asking import RequestAsker
from compozy_mcp.proxy._elicit import ask_person
from compozy_mcp.proxy._forwarding import UpstreamCall
from compozy_mcp.proxy._listing import mcp_tool
from compozy_mcp.proxy._logs import LOG_LEVEL_META_KEY, McpLogs
from compozy_mcp.proxy._notify import ToolsChanged
from compozy_mcp.proxy._paging import Pages
from compozy_mcp.proxy._streaming import MCP_RESULT_CEILING, MESSAGE_OVERHEAD, SSE_EVENT_CAP
from compozy_mcp.proxy._tool_calls import WireResult
from compozy_mcp.proxy.catalog_server import (
    CATALOG_TTL_MS,
    CHANGING_CATALOG_TTL_MS,
    META_APPROVAL_TOKEN,
    error_result,
    native_server,
)
from compozy_mcp.proxy.discovery import (
    TOOL_CALL,
    TOOL_CALL_CHECK,
    TOOL_CALL_SCHEMA,
    search_listing,
)
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.asking import Declared
from compozy_mcp.upstream.supervisor import Upstream, Upstreams

log = logging.getLogger(__name__)

#: ``_meta`` keys of the 2026-07-28 request envelope, never forwarded
RESERVED_META = "io.modelcontextprotocol/"
#: ``_meta`` keys of truncated results
META_ARTIFACTS = "compozy.dev/artifacts"
META_READ_TOOL = "compozy.dev/read_tool"
#: ``_meta`` key of the title a tool.post_call hook gave a result
META_TITLE = "compozy.dev/title"


def call_result(result: ToolResult) -> WireResult:
    """``structuredContent`` is the record; the one text block is the same JSON, serialized.

    Built in its wire form: the SDK takes a dict as the result's wire form, where a
    ``CallToolResult`` model would be validated from the record and dumped back to this dict,
    two more walks of the whole record per call (the larger the record, the more they cost)."""
    out = WireResult(
        resultType="complete",
        content=[{"type": "text", "text": result.structured_json.decode()}],
        structuredContent=result.structured,
    )
    meta: dict[str, Any] | None = None
    if result.truncated:
        meta = {
            META_ARTIFACTS: [ref.payload() for ref in result.artifacts],
            META_READ_TOOL: result.structured["read_tool"],
        }
    if result.title is not None:
        meta = {**(meta or {}), META_TITLE: result.title}
    if meta is not None:
        out["_meta"] = meta
    return out


def mcp_error(error: CompozyError) -> CallToolResult:
    """How an error reaches an MCP client, in one place: an unknown tool is a protocol error
    (JSON-RPC ``-32602``, as the MCP spec says); every other error is a tool result with
    ``isError`` (:func:`error_result`)."""
    if isinstance(error, ToolNotFound):
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {error.tool_id}")
    return error_result(error)


def declares_mcp_headers(schema: Mapping[str, Any]) -> bool:
    """Whether an input schema declares an ``Mcp-Param-*`` header anywhere
    (``x-mcp-header``, the 2026-07-28 routing headers)."""
    return b'"x-mcp-header"' in jsonutil.dumps(schema)


def _forwarded_meta(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of a call's ``_meta`` that goes on to the server: not the progress token (the
    SDK makes one for its own request) nor the 2026-07-28 envelope's keys."""
    return {
        key: value
        for key, value in (meta or {}).items()
        if key not in ("progressToken", "progress_token") and not key.startswith(RESERVED_META)
    }


def _over_http(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the request came over Streamable HTTP (its answer may be an event stream)."""
    return getattr(ctx.request, "headers", None) is not None


def _progress_token(meta: Mapping[str, Any] | None) -> Any:
    """The progress token of a request (the SDK sends progress only when there is one)."""
    found = meta or {}
    return found.get("progressToken", found.get("progress_token"))


def _approval_token(meta: Mapping[str, Any] | None) -> str | None:
    token = (meta or {}).get(META_APPROVAL_TOKEN)
    return token if isinstance(token, str) else None


def _not_allowed(tool_id: str, server: str, scope: CallScope) -> ToolDenied:
    return ToolDenied(
        tool_id,
        f'tool "{tool_id}" is not allowed by the permission policy of session '
        f'"{scope.session_id}" (MCP server "{server}")',
        reason=Reason.PERMISSION_DENIED,
    )


class ProxyServer:
    """One MCP server over one app, serving the catalog a caller's scope allows.

    The scope is ``scope`` for every call (``compozy proxy --session``), or with
    ``scope_per_request`` the one each HTTP request names in ``X-Compozy-Session`` (the
    daemon's ``/mcp``, which serves every session; none named is the operator). Each scope's
    listing is built once per version of the upstream tools. ``page_size`` ``None`` serves the
    whole catalog in one page.

    ``upstreams`` (connected by whoever runs the server, see
    :meth:`~compozy_mcp.upstream.supervisor.Upstreams.running`) adds the tools of MCP servers
    as ``<server>__<tool>``, untouched, for the scopes whose policy allows the server; calls to
    them are forwarded. ``discovery`` ``search`` advertises only the three discovery tools
    (:mod:`.discovery`).
    """

    #: listings kept for this many scopes at most (a daemon may serve many sessions)
    MAX_LISTINGS = 256

    def __init__(
        self,
        app: App,
        *,
        scope: CallScope = OPERATOR,
        page_size: int | None = None,
        scope_per_request: bool = False,
        upstreams: Upstreams | None = None,
        discovery: Discovery = Discovery.FULL,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.app = app
        self.scope = scope
        self.page_size = page_size
        self.scope_per_request = scope_per_request
        self.upstreams = upstreams
        self.discovery = discovery
        self.changes = ToolsChanged()
        self._listings: dict[CallScope, tuple[int, Pages]] = {}
        self._session_roots: dict[str, tuple[Path, ...]] = {}
        # A scope changes which tools are listed, never their schemas. Only a schema that
        # declares an Mcp-Param header is lent to the SDK, which walks the whole schema on
        # every Streamable HTTP call to find the headers it declares: for any other there is
        # nothing to check, and the SDK checks nothing without one.
        visible = app.catalog.visible(OPERATOR if scope_per_request else scope)
        schemas = {tool.name: tool.input_schema for tool in map(self.advertise, visible)}
        schemas[TOOL_CALL] = TOOL_CALL_SCHEMA
        self._schemas: dict[str, Mapping[str, Any]] = {
            name: schema for name, schema in schemas.items() if declares_mcp_headers(schema)
        }
        if upstreams is not None:
            app.catalog.attach(upstreams)
            upstreams.listen(self.changes.announce)
        self.server = native_server(
            self._list_tools,
            self._call_tool,
            self._input_schema,
            self.changes,
            catalog_ttl_ms=CHANGING_CATALOG_TTL_MS if upstreams else CATALOG_TTL_MS,
        )
        # the logging capability: logging/setLevel, and the daemon's lines as notifications
        self.logs = McpLogs(self._scope)
        self.server.add_request_handler(
            "logging/setLevel", SetLevelRequestParams, self.logs.set_level
        )
        if upstreams is not None:
            # a 2025-11-25 client says what it supports in its handshake: servers start then
            self.server.add_notification_handler(
                "notifications/initialized", NotificationParams, self._initialized
            )

    async def _initialized(self, ctx: ServerRequestContext[Any], _: NotificationParams) -> None:
        if self.upstreams is not None:
            self.upstreams.declare(Declared.of(ctx.session.client_capabilities))

    def advertise(self, tool: RegisteredTool) -> Tool:
        """How ``tools/list`` shows a tool."""
        return mcp_tool(tool)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        found = self._schemas.get(name)
        if found is None and self.upstreams is not None:
            routed = self.upstreams.route(name)
            if routed is not None:
                upstream, own = routed
                found = next((t.input_schema for t in upstream.tools if t.name == own), None)
        return found

    def _tools(self, scope: CallScope) -> list[Tool]:
        natives = [self.advertise(tool) for tool in self.app.catalog.visible(scope)]
        if self.discovery is Discovery.SEARCH:
            return search_listing(natives)
        if self.upstreams is None:
            return natives
        catalog = self.app.catalog
        for server in self.upstreams.servers:
            if catalog.server_visible(server, scope):
                natives.extend(self.upstreams.advertised(server))
        return natives

    def listing(self, scope: CallScope) -> Pages:
        """The pages of the tools ``scope`` may see."""
        version = self.upstreams.version if self.upstreams is not None else 0
        kept = self._listings.get(scope)
        if kept is not None and kept[0] == version:
            return kept[1]
        tools = self._tools(scope)
        pages = Pages(tools, self.page_size)
        if scope.session_id is None or self.app.sessions.policy(scope.session_id) is not None:
            # a session not created yet sees nothing for now: not kept
            if scope not in self._listings and len(self._listings) >= self.MAX_LISTINGS:
                self._listings.pop(next(iter(self._listings)))
            self._listings[scope] = (version, pages)
        return pages

    def _roots(self, scope: CallScope) -> tuple[Path, ...]:
        """The roots an upstream server asking during ``scope``'s call is given: the session's
        directory, its worktree's when it has one (the operator's calls: those the servers
        were started for)."""
        session_id = scope.session_id
        if session_id is None:
            return ()
        if session_id not in self._session_roots:
            directory = self.app.sessions.directory(session_id)
            if directory is None:
                return ()
            if len(self._session_roots) >= self.MAX_LISTINGS:
                self._session_roots.pop(next(iter(self._session_roots)))
            self._session_roots[session_id] = (Path(directory),)
        return self._session_roots[session_id]

    def answers_at_once(self, message: Mapping[str, Any]) -> bool:
        """Whether a 2026-07-28 request (its decoded JSON-RPC message) can emit nothing before
        its answer: a ``tools/call`` of a native tool that answers at once
        (``ToolDefinition.answers_at_once``) asking neither progress nor log lines. Over
        Streamable HTTP it is then served without an event stream
        (:mod:`compozy_mcp.proxy.http_sessions`)."""
        if message.get("method") != "tools/call":
            return False
        params = message.get("params")
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if meta is not None and (
            not isinstance(meta, dict) or "progressToken" in meta or LOG_LEVEL_META_KEY in meta
        ):
            return False
        name = params.get("name")
        if not isinstance(name, str):
            return False
        if self.upstreams is not None and self.upstreams.route(name) is not None:
            return False
        tool = self.app.dispatcher.registry.find(name)
        return tool is not None and tool.definition.answers_at_once

    def _scope(self, ctx: ServerRequestContext[Any]) -> CallScope:
        if not self.scope_per_request:
            return self.scope
        headers = getattr(ctx.request, "headers", None)
        return scope_of(headers.get(SESSION_HEADER) if headers is not None else None)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.changes.remember(ctx)
        await self._upstreams_ready(ctx)
        return self.listing(self._scope(ctx)).page(params)

    async def _upstreams_ready(self, ctx: ServerRequestContext[Any]) -> None:
        """The upstream servers are started (a stdio proxy's declare what its one client
        declared: the first request says it) and the first listing has those that start."""
        if self.upstreams is not None:
            self.upstreams.declare(Declared.of(ctx.session.client_capabilities))
            await self.upstreams.settled()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any] | None
    ) -> CallToolResult | InputRequiredResult | WireResult:
        self.changes.remember(ctx)
        await self._upstreams_ready(ctx)
        try:
            if not self.logs.opted_in(ctx):  # most calls: no context manager to enter
                return await self.route(ctx, self._scope(ctx), name, arguments)
            async with self.logs.for_request(ctx):
                return await self.route(ctx, self._scope(ctx), name, arguments)
        except CompozyError as error:
            return mcp_error(error)
        except MCPError:
            raise  # an upstream server's own protocol error, passed on as it came
        except Exception:  # never take the proxy down; the next call must work
            log.exception("tools/call %s failed", name)
            return error_result(ToolBackendFailed(name, f'tool "{name}" failed unexpectedly'))

    async def route(
        self,
        ctx: ServerRequestContext[Any],
        scope: CallScope,
        name: str,
        arguments: dict[str, Any] | None,
    ) -> CallToolResult | InputRequiredResult | WireResult:
        """One call, wherever its tool lives: the discovery call tool, an upstream server's
        tool (forwarded), or a native tool (the one dispatch path). Raises the
        :class:`CompozyError` the call ends in; an upstream server's JSON-RPC error raises
        ``MCPError`` as the server sent it."""
        if name == TOOL_CALL:
            return await self._tool_call(ctx, scope, arguments)
        if self.upstreams is not None:
            routed = self.upstreams.route(name)
            if routed is not None:
                upstream, own_name = routed
                return await self._forward(ctx, scope, name, upstream, own_name, arguments)
            withheld = self.upstreams.withheld_server(name)
            if withheld is not None:
                raise _not_allowed(name, withheld, scope)
        return await self._native(ctx, scope, name, arguments or {})

    async def _native(
        self,
        ctx: ServerRequestContext[Any],
        scope: CallScope,
        name: str,
        arguments: dict[str, Any],
    ) -> InputRequiredResult | WireResult:
        """A native tool call through dispatch. A call that waits for approval is put to the
        person at the client when it supports elicitation (:mod:`.elicit`), then retried."""
        token = _approval_token(ctx.meta)
        dispatcher = self.app.dispatcher

        async def report(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        # the SDK sends progress only when the request carried a progress token
        reporting = PROGRESS.set(report)
        # over HTTP the result may travel in one event of a stream: it must fit one
        ceiling = RESULT_CEILING.set(MCP_RESULT_CEILING if _over_http(ctx) else None)
        try:
            try:
                result = await dispatcher.call(name, arguments, scope=scope, approval_token=token)
            except ToolApprovalRequired as waiting:
                asked = await ask_person(ctx, self.app.approvals, waiting, arguments)
                if asked.later is not None:
                    return asked.later
                if not asked.answered:
                    raise
                result = await dispatcher.call(name, arguments, scope=scope)
        finally:
            RESULT_CEILING.reset(ceiling)
            PROGRESS.reset(reporting)
        return call_result(result)

    async def _forward(
        self,
        ctx: ServerRequestContext[Any],
        scope: CallScope,
        name: str,
        upstream: Upstream,
        own_name: str,
        arguments: dict[str, Any] | None,
    ) -> CallToolResult | WireResult:
        if not self.app.catalog.server_visible(upstream.name, scope):
            raise _not_allowed(name, upstream.name, scope)
        meta = _forwarded_meta(ctx.meta)
        started = time.perf_counter()
        streamed = False
        asker = RequestAsker(ctx, self._roots(scope))

        async def relay_progress(progress: float, total: float | None, message: str | None) -> None:
            nonlocal streamed
            streamed = streamed or _progress_token(ctx.meta) is not None
            await ctx.session.report_progress(progress, total, message)

        forwarded = UpstreamCall(
            upstream,
            name,
            own_name,
            # Always asked for: the SDK reports progress to the caller only if it asked (in
            # _meta, or in-process through a callback this handler cannot see), else drops it.
            progress=relay_progress,
            meta=meta,
            asker=asker,
        )
        # hooks fire on upstream tools too (tool.pre_call may deny or patch the input)
        result = await self.app.dispatcher.call_external(
            name, arguments, forwarded, scope=scope, read_only=forwarded.read_only
        )
        if (streamed or asker.asked) and _over_http(ctx):
            # the answer is an event stream: a result too large for one event is stored
            # whole, as a native result over the budget is
            data = result.model_dump_json(by_alias=True, exclude_none=True).encode()
            if len(data) > SSE_EVENT_CAP - MESSAGE_OVERHEAD:
                stored = await self.app.dispatcher.stored_whole(
                    name, scope, None, data, MCP_RESULT_CEILING, started
                )
                return call_result(stored)
        return result

    async def _tool_call(
        self, ctx: ServerRequestContext[Any], scope: CallScope, arguments: dict[str, Any] | None
    ) -> CallToolResult | InputRequiredResult | WireResult:
        """``compozy__tool_call``: the call ``tools/call`` with ``tool_id`` and ``input`` would
        make; an unknown ``tool_id`` is a tool error (the model must see it)."""
        args = arguments or {}
        TOOL_CALL_CHECK.check(TOOL_CALL, args)
        tool_id = args["tool_id"]
        if tool_id == TOOL_CALL:
            raise ToolInvalidInput.for_field(TOOL_CALL, "tool_id", "must name another tool")
        try:
            return await self.route(ctx, scope, tool_id, args.get("input"))
        except ToolNotFound as unknown:
            return error_result(unknown)
