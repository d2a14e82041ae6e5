"""The Host API in this process, over one :class:`~compozy_mcp.assembly.App`.

- An operation that names a native tool (:mod:`.operations`) is that tool called as the operator
  through the one dispatcher, its input checked against the tool's own input schema (without the
  selector, so errors name the tool) and answered with its complete result (the full view,
  never cut to the result budget): a hook, an approval rule or the audit log sees the
  operator's command as it sees an agent's call. Loop operations show a run's node errors as
  every CLI and HTTP/UDS error is shown: input errors and denials redacted
  (:mod:`compozy_mcp.loops.redaction`).
- The others are answered here, by the method registered for them with :func:`answers`: tool
  operations return ``ToolDescriptorPayload``\\ s (``tool_id`` instead of ``id``); ``invoke``
  runs the one dispatcher and returns ``{"result": {"structured", "preview", ...}}``;
  workspace and profile bodies are checked by :mod:`.bodies`.

Store writes run in worker threads (the session and artifact services do it), reads on the
event loop. Nothing here imports the HTTP stack or the MCP SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Self, cast

import anyio
import anyio.to_thread

from compozy_mcp.calls import CallInfo, scope_of
from compozy_mcp.errors import RequestBodyInvalid, ToolDenied, ToolNotFound
from compozy_mcp.hostapi import bodies
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi._client import McpServerListing, Payload
from compozy_mcp.hostapi.inputs import TOOL_SEARCH, check
from compozy_mcp.hostapi.operation import Operation, R
from compozy_mcp.info.descriptors import descriptor
from compozy_mcp.loops.redaction import redact_result
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.turn_record import COMPACT_TURN_FIELDS, turn_record

#: events a follower reads at once, and how long it waits for news before it looks anyway
PAGE = 500
IDLE_SECONDS = 1.0

if TYPE_CHECKING:
    from compozy_mcp.assembly import App
    from compozy_mcp.config import Settings
    from compozy_mcp.native.registry import RegisteredTool


#: the prefix of the Loop tools, whose run records carry node errors (dispatch messages)
LOOP_TOOLS = "compozy__loop_"

Handler = Callable[["LocalHost", dict[str, Any], "str | None"], Awaitable[Payload]]
#: operation name -> the method that answers it (the operations that name no tool)
HANDLERS: dict[str, Handler] = {}


def answers(operation: Operation[Any]) -> Callable[[Handler], Handler]:
    """Register the decorated method as what answers ``operation`` in this process."""

    def register(method: Handler) -> Handler:
        if operation.tool_id is not None or operation.name in HANDLERS:
            raise ValueError(f"{operation.name}: a tool's operation, or answered twice")
        HANDLERS[operation.name] = method
        return method

    return register


class LocalHost:
    """The Host API over ``app``. ``owns_app``: closing this client closes the app too."""

    def __init__(
        self, app: App, *, owns_app: bool = False, mcp_servers: McpServerListing | None = None
    ) -> None:
        self.app = app
        self._owns_app = owns_app
        self._mcp_servers = mcp_servers
        self._descriptors: dict[str, dict[str, Any]] = {}
        self._running = contextlib.AsyncExitStack()

    @classmethod
    def open(cls, settings: Settings) -> LocalHost:
        """A Host API on its own app, on ``settings.home``'s store."""
        from compozy_mcp.assembly import open_app

        return cls(open_app(settings), owns_app=True)

    async def call(
        self, operation: Operation[R], args: Mapping[str, Any], *, session: str | None = None
    ) -> R:
        if operation.tool_id is not None:
            return cast(R, await self._tool(operation, operation.tool_id, args))
        return cast(R, await HANDLERS[operation.name](self, dict(args), session))

    async def _tool(self, operation: Operation[Any], tool_id: str, args: Any) -> Payload:
        """A native tool's complete result, through the one dispatcher as the operator."""
        # the tool's own input, without the view selector: a body or query that sends one is
        # refused as the tool would refuse an unknown field (the routes return full records)
        args = check(tool_id, args)
        tool_input = {**args, "result_view": "full"} if operation.views else dict(args)
        result = await self.app.dispatcher.call(tool_id, tool_input, whole=True)
        if operation.redact:
            return redact_result(result.structured)
        return dict(result.structured)

    def _descriptor(self, tool: RegisteredTool) -> dict[str, Any]:
        cached = self._descriptors.get(tool.id)
        if cached is None:
            cached = self._descriptors[tool.id] = descriptor(tool, id_key="tool_id")
        return cached

    # --- tools -------------------------------------------------------------------------------

    @answers(ops.LIST_TOOLS)
    async def _list_tools(self, args: dict[str, Any], session: str | None) -> Payload:
        visible = self.app.catalog.visible(scope_of(session))
        return {"tools": [self._descriptor(tool) for tool in visible]}

    @answers(ops.TOOL_INFO)
    async def _tool_info(self, args: dict[str, Any], session: str | None) -> Payload:
        tool = self.app.catalog.find_visible(args["tool_id"], scope_of(session))
        if tool is None:
            raise ToolNotFound(args["tool_id"])
        return {"tool": self._descriptor(tool)}

    @answers(ops.SEARCH_TOOLS)
    async def _search_tools(self, args: dict[str, Any], session: str | None) -> Payload:
        args = check(TOOL_SEARCH, args)
        catalog = self.app.catalog
        # the Host API serves native tools; tools of MCP servers are called over MCP
        found = catalog.search(
            args["query"], scope_of(session), args.get("limit", 10), external=False
        )
        tools = [self._descriptor(catalog.registry.get(hit["id"])) for hit in found]
        return {"query": args["query"], "tools": tools}

    @answers(ops.INVOKE)
    async def _invoke(self, args: dict[str, Any], session: str | None) -> Payload:
        tool_id = args["tool_id"]
        token = args.get("approval_token")
        if token is not None and not isinstance(token, str):
            raise RequestBodyInvalid(
                'the request body field "approval_token" must be a string',
                reason=Reason.BODY_INVALID,
            )
        if "input" not in args:
            raise RequestBodyInvalid(
                'the request body needs "input": the tool input, a JSON object',
                reason=Reason.BODY_INVALID,
            )
        tool_input = args["input"]
        if not isinstance(tool_input, dict):
            raise RequestBodyInvalid(
                'the request body field "input" must be a JSON object',
                reason=Reason.INPUT_NOT_OBJECT,
            )
        result = await self.app.dispatcher.call(
            tool_id, tool_input, scope=scope_of(session), approval_token=token
        )
        envelope = result.envelope()
        if tool_id.startswith(LOOP_TOOLS) and not result.truncated:
            # the errors of a run's nodes are dispatch messages too: redacted, as Loop
            # operations are
            envelope["structured"] = redact_result(result.structured)
            preview = self.app.dispatcher.registry.get(tool_id).definition.preview
            envelope["preview"] = preview(envelope["structured"])
        return {"result": envelope}

    # --- approvals ---------------------------------------------------------------------------

    @answers(ops.MINT_APPROVAL)
    async def _mint_approval(self, args: dict[str, Any], session: str | None) -> Payload:
        tool_id = args.pop("tool_id")
        if session is not None:
            raise ToolDenied(
                tool_id,
                f'only the operator mints approval tokens (asked by session "{session}")',
                reason=Reason.OPERATOR_ONLY,
            )
        fields = bodies.check("approval", args)
        return await self.app.approvals.mint(CallInfo(tool_id), tool_id, fields)

    # --- the store ---------------------------------------------------------------------------

    @answers(ops.VACUUM_STORE)
    async def _vacuum_store(self, args: dict[str, Any], session: str | None) -> Payload:
        report = await anyio.to_thread.run_sync(functools.partial(self.app.upkeep.run, vacuum=True))
        return {"upkeep": report.payload()}

    # --- workspaces and profiles -------------------------------------------------------------

    @answers(ops.LIST_WORKSPACES)
    async def _list_workspaces(self, args: dict[str, Any], session: str | None) -> Payload:
        rows = self.app.sessions.workspaces.workspaces()
        return {"workspaces": [asdict(row) for row in rows]}

    @answers(ops.ADD_WORKSPACE)
    async def _add_workspace(self, args: dict[str, Any], session: str | None) -> Payload:
        fields = bodies.check("workspace", args)
        path = bodies.workspace_directory(fields["path"])
        row = await self.app.sessions.add_workspace(path, fields.get("name"))
        return {"workspace": asdict(row)}

    async def _trust(self, workspace_id: str, trusted: bool) -> Payload:
        row = await self.app.sessions.set_workspace_trust(workspace_id, trusted)
        self.app.hooks.registry.invalidate()  # the next call sees the change
        return {"workspace": asdict(row)}

    @answers(ops.TRUST_WORKSPACE)
    async def _trust_workspace(self, args: dict[str, Any], session: str | None) -> Payload:
        return await self._trust(args["workspace_id"], True)

    @answers(ops.DISTRUST_WORKSPACE)
    async def _distrust_workspace(self, args: dict[str, Any], session: str | None) -> Payload:
        return await self._trust(args["workspace_id"], False)

    @answers(ops.LIST_PROFILES)
    async def _list_profiles(self, args: dict[str, Any], session: str | None) -> Payload:
        return {"profiles": [asdict(row) for row in self.app.sessions.workspaces.profiles()]}

    @answers(ops.ADD_PROFILE)
    async def _add_profile(self, args: dict[str, Any], session: str | None) -> Payload:
        fields = bodies.check("profile", args)
        row = await self.app.sessions.add_profile(
            fields["name"], fields.get("color"), fields.get("icon")
        )
        return {"profile": asdict(row)}

    # --- upstream MCP servers ----------------------------------------------------------------

    @answers(ops.LIST_MCP_SERVERS)
    async def _list_mcp_servers(self, args: dict[str, Any], session: str | None) -> Payload:
        if self._mcp_servers is None:
            return {"servers": []}
        return self._mcp_servers.listing()

    # --- the board's reads ----------------------------------------------------------------

    async def last_turns(self, session_ids: Sequence[str]) -> dict[str, Payload]:
        """The compact record of the last turn of each of ``session_ids`` that has one, as the
        operator sees it (the board's cards: status, summary, when it ended)."""
        turns = self.app.sessions.last_turns(session_ids)
        return {
            session_id: {
                name: value
                for name, value in turn_record(turn).items()
                if name in COMPACT_TURN_FIELDS
            }
            for session_id, turn in turns.items()
        }

    # --- events --------------------------------------------------------------------------------

    def any_event(self) -> contextlib.AbstractContextManager[asyncio.Event]:
        """An event set each time any session publishes one (the board's stream waits on it:
        the runtime wakes it, nothing is polled)."""
        return self.app.runtime.any_event()

    async def follow_events(self, session_id: str, cursor: int) -> AsyncIterator[Payload | None]:
        async with self.app.runtime.stored_events(session_id) as stored:
            while True:
                stored.clear()  # before the read: a store after it wakes the wait below
                page = await self.call(
                    ops.SESSION_EVENTS, {"session_id": session_id, "cursor": cursor, "limit": PAGE}
                )
                for event in page["events"]:
                    cursor = event["seq"]
                    yield event
                if page["events"]:
                    continue
                # another process (a CLI without the daemon) may write them: look again now
                # and then, and say so, so that a stream can keep its connection alive
                with anyio.move_on_after(IDLE_SECONDS) as idle:
                    await stored.wait()
                if idle.cancelled_caught:
                    yield None

    async def __aenter__(self) -> Self:
        if self._owns_app:  # a daemon's app runs its tasks in the daemon's lifespan
            await self._running.enter_async_context(self.app.running())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self._owns_app:
            await self.aclose()
            return
        try:
            await self._running.aclose()  # App.running ends with the app's shutdown
        finally:
            self.app.close()

    async def aclose(self) -> None:
        # async hooks and run records of this process's calls finish before it ends
        await self.app.shutdown()
        if self._owns_app:
            self.app.close()


def unanswered() -> list[str]:
    """The operations that name no tool and have no method here (a test keeps it empty)."""
    return [
        operation.name
        for operation in ops.OPERATIONS
        if operation.tool_id is None and operation.name not in HANDLERS
    ]
