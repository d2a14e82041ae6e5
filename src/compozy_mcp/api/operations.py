"""The Host API: the operations behind the HTTP routes, the CLI and the ``compozy_host__*`` tools.

Each operation returns the JSON payload the HTTP API sends for it and raises a
:class:`~compozy_mcp.errors.ToolError` on failure, so that every surface (the routes, the CLI
in-process or against a daemon, the Host API MCP server) gives the same answer.

- Tool operations return ``ToolDescriptorPayload``\\ s (``tool_id`` instead of ``id``); ``invoke``
  runs the one dispatcher and returns ``{"result": {"structured", "preview", ...}}``. The
  selector travels inside the tool input, as with the CLI.
- Session operations return the complete ``SessionPayload`` straight from the session service
  (the record the ``full`` view returns; views never apply here) as ``{"session": ...}`` or
  ``{"sessions": [...], "next_cursor"?}``. Their inputs are checked against the input schemas of
  the matching native tools (without the selector), so errors name that tool.
- Workspace and profile operations return ``{"workspaces": [...]}`` / ``{"workspace": ...}``
  and ``{"profiles": [...]}`` / ``{"profile": ...}``; their bodies are checked by
  :mod:`compozy_mcp.api.bodies`.

Nothing here imports the HTTP stack or the MCP SDK.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol

from compozy_mcp.api import bodies
from compozy_mcp.calls import CallInfo, scope_of
from compozy_mcp.errors import ToolNotFound
from compozy_mcp.info.descriptors import descriptor
from compozy_mcp.validation import InputCheck

if TYPE_CHECKING:
    from compozy_mcp.app import App
    from compozy_mcp.native.registry import RegisteredTool

SESSION_LIST = "compozy__session_list"
SESSION_STATUS = "compozy__session_status"
SESSION_CREATE = "compozy__session_create"
SESSION_ARCHIVE = "compozy__session_archive"
SESSION_UNARCHIVE = "compozy__session_unarchive"
TOOL_SEARCH = "compozy__tool_search"


@functools.cache
def input_schema(tool_id: str) -> dict[str, Any]:
    """A native tool's own input schema, without the selector the registry adds."""
    from compozy_mcp.native import native_tools

    for definition in native_tools():
        if definition.id == tool_id:
            return dict(definition.input_schema)
    raise KeyError(tool_id)


@functools.cache
def _own_input(tool_id: str) -> InputCheck:
    return InputCheck(input_schema(tool_id))


def check(tool_id: str, value: Any) -> None:
    """Raise the tool's own :class:`~compozy_mcp.errors.ToolInvalidInput` if ``value`` breaks
    its input schema."""
    _own_input(tool_id).check(tool_id, value)


class HostClient(Protocol):
    """The Host API as its clients see it: in-process (:class:`HostAPI`) or over HTTP."""

    async def list_tools(self, *, session: str | None = None) -> dict[str, Any]: ...

    async def tool_info(self, tool_id: str, *, session: str | None = None) -> dict[str, Any]: ...

    async def search_tools(
        self, query: str | None, *, limit: int | None = None, session: str | None = None
    ) -> dict[str, Any]: ...

    async def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]: ...

    async def list_sessions(self, filters: Mapping[str, Any]) -> dict[str, Any]: ...

    async def session_status(self, session_id: str) -> dict[str, Any]: ...

    async def create_session(self, fields: Any) -> dict[str, Any]: ...

    async def archive_session(self, session_id: str) -> dict[str, Any]: ...

    async def unarchive_session(self, session_id: str) -> dict[str, Any]: ...

    async def list_workspaces(self) -> dict[str, Any]: ...

    async def add_workspace(self, fields: Any) -> dict[str, Any]: ...

    async def list_profiles(self) -> dict[str, Any]: ...

    async def add_profile(self, fields: Any) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class HostAPI:
    """The Host API over one app, in this process."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._descriptors: dict[str, dict[str, Any]] = {}

    def _descriptor(self, tool: RegisteredTool) -> dict[str, Any]:
        cached = self._descriptors.get(tool.id)
        if cached is None:
            cached = self._descriptors[tool.id] = descriptor(tool, id_key="tool_id")
        return cached

    # --- tools -------------------------------------------------------------------------------

    async def list_tools(self, *, session: str | None = None) -> dict[str, Any]:
        visible = self.app.catalog.visible(scope_of(session))
        return {"tools": [self._descriptor(tool) for tool in visible]}

    async def tool_info(self, tool_id: str, *, session: str | None = None) -> dict[str, Any]:
        tool = self.app.catalog.find_visible(tool_id, scope_of(session))
        if tool is None:
            raise ToolNotFound(tool_id)
        return {"tool": self._descriptor(tool)}

    async def search_tools(
        self, query: str | None, *, limit: int | None = None, session: str | None = None
    ) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if query is not None:
            args["query"] = query
        if limit is not None:
            args["limit"] = limit
        check(TOOL_SEARCH, args)
        catalog = self.app.catalog
        found = catalog.search(args["query"], scope_of(session), args.get("limit", 10))
        tools = [self._descriptor(catalog.registry.get(hit["id"])) for hit in found]
        return {"query": args["query"], "tools": tools}

    async def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]:
        result = await self.app.dispatcher.call(tool_id, tool_input, scope=scope_of(session))
        return {"result": result.envelope()}

    # --- sessions ----------------------------------------------------------------------------

    async def list_sessions(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(filters)
        check(SESSION_LIST, args)
        # The filters are the service's keyword arguments, name for name.
        page = self.app.services.sessions.list_sessions(CallInfo(SESSION_LIST), **args)
        out: dict[str, Any] = {"sessions": page.records}
        if page.next_cursor is not None:
            out["next_cursor"] = page.next_cursor
        return out

    async def session_status(self, session_id: str) -> dict[str, Any]:
        check(SESSION_STATUS, {"session_id": session_id})
        info = CallInfo(SESSION_STATUS)
        return {"session": self.app.services.sessions.status(info, session_id)}

    async def create_session(self, fields: Any) -> dict[str, Any]:
        check(SESSION_CREATE, fields)
        args = dict(fields)
        if "type" in args:
            args["session_type"] = args.pop("type")
        info = CallInfo(SESSION_CREATE)
        return {"session": self.app.services.sessions.create(info, **args)}

    async def archive_session(self, session_id: str) -> dict[str, Any]:
        check(SESSION_ARCHIVE, {"session_id": session_id})
        info = CallInfo(SESSION_ARCHIVE)
        return {"session": self.app.services.sessions.archive(info, session_id)}

    async def unarchive_session(self, session_id: str) -> dict[str, Any]:
        check(SESSION_UNARCHIVE, {"session_id": session_id})
        info = CallInfo(SESSION_UNARCHIVE)
        return {"session": self.app.services.sessions.unarchive(info, session_id)}

    # --- workspaces and profiles -------------------------------------------------------------

    async def list_workspaces(self) -> dict[str, Any]:
        return {"workspaces": [asdict(row) for row in self.app.services.sessions.workspaces()]}

    async def add_workspace(self, fields: Any) -> dict[str, Any]:
        args = bodies.check("workspace", fields)
        path = bodies.workspace_directory(args["path"])
        row = self.app.services.sessions.add_workspace(path, args.get("name"))
        return {"workspace": asdict(row)}

    async def list_profiles(self) -> dict[str, Any]:
        return {"profiles": [asdict(row) for row in self.app.services.sessions.profiles()]}

    async def add_profile(self, fields: Any) -> dict[str, Any]:
        args = bodies.check("profile", fields)
        sessions = self.app.services.sessions
        row = sessions.add_profile(args["name"], args.get("color"), args.get("icon"))
        return {"profile": asdict(row)}

    async def aclose(self) -> None:
        """The app belongs to whoever opened it."""
