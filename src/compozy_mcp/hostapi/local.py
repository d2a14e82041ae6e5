"""The Host API in this process, over one :class:`~compozy_mcp.assembly.App`.

- Tool operations return ``ToolDescriptorPayload``\\ s (``tool_id`` instead of ``id``); ``invoke``
  runs the one dispatcher and returns ``{"result": {"structured", "preview", ...}}``. The
  selector travels inside the tool input, as with the CLI.
- Session operations return the complete ``SessionPayload`` straight from the session service
  (the record the ``full`` view returns; views never apply here) as ``{"session": ...}`` or
  ``{"sessions": [...], "next_cursor"?}``. Their inputs are checked against the input schemas
  of the matching native tools (:mod:`.inputs`), so errors name that tool.
- Loop operations and Loop tool invocations show a run's node errors as every CLI and HTTP/UDS
  error is shown: input errors and denials redacted (:mod:`compozy_mcp.loops.redaction`).
- Workspace and profile operations return ``{"workspaces": [...]}`` / ``{"workspace": ...}``
  and ``{"profiles": [...]}`` / ``{"profile": ...}``; their bodies are checked by
  :mod:`.bodies`.

Store writes run in worker threads (the session and artifact services do it), reads on the
event loop. Nothing here imports the HTTP stack or the MCP SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from compozy_mcp.calls import CallInfo, scope_of
from compozy_mcp.errors import ToolDenied, ToolNotFound
from compozy_mcp.hostapi import bodies
from compozy_mcp.hostapi.client import McpServerListing, Payload
from compozy_mcp.hostapi.inputs import (
    SESSION_ARCHIVE,
    SESSION_CREATE,
    SESSION_DELETE,
    SESSION_LIST,
    SESSION_STATUS,
    SESSION_UNARCHIVE,
    TOOL_SEARCH,
    check,
)
from compozy_mcp.info.descriptors import descriptor
from compozy_mcp.loops.redaction import redact_result
from compozy_mcp.reasons import Reason

#: events a follower reads at once, and how long it waits for news before it looks anyway
PAGE = 500
IDLE_SECONDS = 1.0

if TYPE_CHECKING:
    from compozy_mcp.assembly import App
    from compozy_mcp.config import Settings
    from compozy_mcp.native.registry import RegisteredTool


#: the prefix of the Loop tools, whose run records carry node errors (dispatch messages)
LOOP_TOOLS = "compozy__loop_"


class LocalHost:
    """The Host API over ``app``. ``owns_app``: closing this client closes the app too."""

    def __init__(
        self, app: App, *, owns_app: bool = False, mcp_servers: McpServerListing | None = None
    ) -> None:
        self.app = app
        self._owns_app = owns_app
        self._mcp_servers = mcp_servers
        self._descriptors: dict[str, dict[str, Any]] = {}

    @classmethod
    def open(cls, settings: Settings) -> LocalHost:
        """A Host API on its own app, on ``settings.home``'s store."""
        from compozy_mcp.assembly import open_app

        return cls(open_app(settings), owns_app=True)

    def _descriptor(self, tool: RegisteredTool) -> dict[str, Any]:
        cached = self._descriptors.get(tool.id)
        if cached is None:
            cached = self._descriptors[tool.id] = descriptor(tool, id_key="tool_id")
        return cached

    # --- tools -------------------------------------------------------------------------------

    async def list_tools(self, *, session: str | None = None) -> Payload:
        visible = self.app.catalog.visible(scope_of(session))
        return {"tools": [self._descriptor(tool) for tool in visible]}

    async def tool_info(self, tool_id: str, *, session: str | None = None) -> Payload:
        tool = self.app.catalog.find_visible(tool_id, scope_of(session))
        if tool is None:
            raise ToolNotFound(tool_id)
        return {"tool": self._descriptor(tool)}

    async def search_tools(
        self, query: str | None, *, limit: int | None = None, session: str | None = None
    ) -> Payload:
        args: dict[str, Any] = {}
        if query is not None:
            args["query"] = query
        if limit is not None:
            args["limit"] = limit
        args = check(TOOL_SEARCH, args)
        catalog = self.app.catalog
        # the Host API serves native tools; tools of MCP servers are called over MCP
        found = catalog.search(
            args["query"], scope_of(session), args.get("limit", 10), external=False
        )
        tools = [self._descriptor(catalog.registry.get(hit["id"])) for hit in found]
        return {"query": args["query"], "tools": tools}

    async def invoke(
        self,
        tool_id: str,
        tool_input: Any,
        *,
        session: str | None = None,
        approval_token: str | None = None,
    ) -> Payload:
        result = await self.app.dispatcher.call(
            tool_id, tool_input, scope=scope_of(session), approval_token=approval_token
        )
        envelope = result.envelope()
        if tool_id.startswith(LOOP_TOOLS) and not result.truncated:
            # the errors of a run's nodes are dispatch messages too: redacted here, as in _loop
            envelope["structured"] = redact_result(result.structured)
            preview = self.app.dispatcher.registry.get(tool_id).definition.preview
            envelope["preview"] = preview(envelope["structured"])
        return {"result": envelope}

    # --- approvals ---------------------------------------------------------------------------

    async def mint_approval(
        self, tool_id: str, fields: Any, *, session: str | None = None
    ) -> Payload:
        if session is not None:
            raise ToolDenied(
                tool_id,
                f'only the operator mints approval tokens (asked by session "{session}")',
                reason=Reason.OPERATOR_ONLY,
            )
        args = bodies.check("approval", fields)
        return await self.app.approvals.mint(CallInfo(tool_id), tool_id, args)

    # --- sessions ----------------------------------------------------------------------------

    # each goes through the one dispatcher, as the tool of the same name: a hook, an approval
    # rule or the audit log sees the operator's command as it sees an agent's call

    async def list_sessions(self, filters: Mapping[str, Any]) -> Payload:
        return await self._tool(SESSION_LIST, filters)

    async def session_status(self, session_id: str) -> Payload:
        return await self._tool(SESSION_STATUS, {"session_id": session_id})

    async def create_session(self, fields: Any) -> Payload:
        return await self._tool(SESSION_CREATE, fields)

    async def archive_session(self, session_id: str) -> Payload:
        return await self._tool(SESSION_ARCHIVE, {"session_id": session_id})

    async def unarchive_session(self, session_id: str) -> Payload:
        return await self._tool(SESSION_UNARCHIVE, {"session_id": session_id})

    async def delete_session(self, session_id: str) -> Payload:
        return await self._tool(SESSION_DELETE, {"session_id": session_id}, views=False)

    # --- the store ---------------------------------------------------------------------------

    async def vacuum_store(self) -> Payload:
        report = await anyio.to_thread.run_sync(functools.partial(self.app.upkeep.run, vacuum=True))
        return {"upkeep": report.payload()}

    # --- loops: the compozy__loop_* tools, as the operator, in the full view --------------------

    async def _loop(self, verb: str, fields: Any, *, full: bool = True, **ids: Any) -> Payload:
        """One loop tool call; ``fields`` is a body (an object: the routes check), ``ids`` the
        path's."""
        args = {**(fields if isinstance(fields, dict) else {}), **ids}
        if full:
            args["result_view"] = "full"
        result = await self.app.dispatcher.call(f"{LOOP_TOOLS}{verb}", args, whole=True)
        return redact_result(result.structured)

    async def validate_loop(self, fields: Any) -> Payload:
        return await self._loop("validate", fields, full=False)

    async def list_loops(self) -> Payload:
        return await self._loop("list", {})

    async def create_loop(self, fields: Any) -> Payload:
        return await self._loop("create", fields)

    async def loop_info(self, loop_id: str, version: int | None = None) -> Payload:
        versioned = {} if version is None else {"version": version}
        return await self._loop("inspect", versioned, loop_id=loop_id)

    async def start_loop_run(self, loop_id: str, fields: Any) -> Payload:
        return await self._loop("run", fields, loop_id=loop_id)

    async def list_loop_runs(self, filters: Mapping[str, Any]) -> Payload:
        return await self._loop("runs", dict(filters))

    async def loop_run_status(self, run_id: str) -> Payload:
        return await self._loop("status", {}, run_id=run_id)

    async def cancel_loop_run(self, run_id: str) -> Payload:
        return await self._loop("cancel", {}, run_id=run_id)

    async def approve_loop_run(self, run_id: str, fields: Any) -> Payload:
        return await self._loop("approve", fields, run_id=run_id)

    # --- workspaces and profiles -------------------------------------------------------------

    async def list_workspaces(self) -> Payload:
        rows = self.app.sessions.workspaces.workspaces()
        return {"workspaces": [asdict(row) for row in rows]}

    async def add_workspace(self, fields: Any) -> Payload:
        args = bodies.check("workspace", fields)
        path = bodies.workspace_directory(args["path"])
        row = await self.app.sessions.add_workspace(path, args.get("name"))
        return {"workspace": asdict(row)}

    async def trust_workspace(self, workspace_id: str, trusted: bool) -> Payload:
        row = await self.app.sessions.set_workspace_trust(workspace_id, trusted)
        self.app.hooks.registry.invalidate()  # the next call sees the change
        return {"workspace": asdict(row)}

    async def list_profiles(self) -> Payload:
        return {"profiles": [asdict(row) for row in self.app.sessions.workspaces.profiles()]}

    async def add_profile(self, fields: Any) -> Payload:
        args = bodies.check("profile", fields)
        row = await self.app.sessions.add_profile(args["name"], args.get("color"), args.get("icon"))
        return {"profile": asdict(row)}

    # --- agents and turns ---------------------------------------------------------------------

    async def _tool(self, tool_id: str, args: Any, *, views: bool = True) -> Payload:
        """A native tool's complete result (its full view, never cut to the result budget),
        through the one dispatcher as the operator."""
        # the tool's own input, without the view selector: a body or query that sends one is
        # refused as the tool would refuse an unknown field (the routes return full records)
        args = check(tool_id, args)
        tool_input = {**args, "result_view": "full"} if views else dict(args)
        result = await self.app.dispatcher.call(tool_id, tool_input, whole=True)
        return dict(result.structured)

    async def list_agents(self, workspace_id: str | None = None) -> Payload:
        args = {} if workspace_id is None else {"workspace_id": workspace_id}
        return await self._tool("compozy__agent_list", args)

    async def prompt_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        return await self._tool("compozy__session_prompt", {**fields, "session_id": session_id})

    async def cancel_turn(self, session_id: str) -> Payload:
        args = {"session_id": session_id}
        return await self._tool("compozy__session_prompt_cancel", args, views=False)

    async def session_history(self, session_id: str, params: Mapping[str, Any]) -> Payload:
        return await self._tool("compozy__session_history", {**params, "session_id": session_id})

    async def session_events(self, session_id: str, params: Mapping[str, Any]) -> Payload:
        return await self._tool("compozy__session_events", {**params, "session_id": session_id})

    async def approve_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        args = {**fields, "session_id": session_id}
        return await self._tool("compozy__session_approve", args, views=False)

    def any_event(self) -> contextlib.AbstractContextManager[asyncio.Event]:
        """An event set each time any session publishes one (the board's stream waits on it:
        the runtime wakes it, nothing is polled)."""
        return self.app.runtime.any_event()

    async def follow_events(self, session_id: str, cursor: int) -> AsyncIterator[Payload | None]:
        async with self.app.runtime.stored_events(session_id) as stored:
            while True:
                stored.clear()  # before the read: a store after it wakes the wait below
                page = await self.session_events(session_id, {"cursor": cursor, "limit": PAGE})
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

    # --- worktrees and hand-off ----------------------------------------------------------------

    async def session_diff(self, session_id: str) -> Payload:
        return await self._tool("compozy__session_diff", {"session_id": session_id})

    async def merge_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        args = {**fields, "session_id": session_id}
        return await self._tool("compozy__session_merge", args, views=False)

    async def open_pull_request(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        args = {**fields, "session_id": session_id}
        return await self._tool("compozy__session_pull_request", args, views=False)

    async def task(self, operation: str, args: Mapping[str, Any]) -> Payload:
        return await self._tool(f"compozy__task_{operation}", args)

    async def heartbeat(self, operation: str, args: Mapping[str, Any]) -> Payload:
        return await self._tool(f"compozy__agent_heartbeat_{operation}", args)

    async def list_worktrees(self, filters: Mapping[str, Any]) -> Payload:
        return await self._tool("compozy__worktree_list", filters)

    async def worktree_info(self, worktree_id: str) -> Payload:
        return await self._tool("compozy__worktree_inspect", {"worktree_id": worktree_id})

    async def create_worktree(self, fields: Mapping[str, Any]) -> Payload:
        return await self._tool("compozy__worktree_create", fields, views=False)

    async def remove_worktree(self, worktree_id: str, *, force: bool = False) -> Payload:
        args = {"worktree_id": worktree_id, "force": force}
        return await self._tool("compozy__worktree_remove", args, views=False)

    # --- upstream MCP servers ----------------------------------------------------------------

    async def list_mcp_servers(self) -> Payload:
        if self._mcp_servers is None:
            return {"servers": []}
        return self._mcp_servers.listing()

    async def aclose(self) -> None:
        # async hooks and run records of this process's calls finish before it ends
        await self.app.shutdown()
        if self._owns_app:
            self.app.close()
