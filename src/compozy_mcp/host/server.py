"""``compozy mcp serve``: the Host API as MCP tools, ``compozy_host__*``.

Each tool is one Host API operation and returns exactly the payload its HTTP route returns (as
``structuredContent`` and as the one JSON text block); an error is a result with ``isError``
whose content is the route's error body. The tools run on any
:class:`~compozy_mcp.hostapi.HostClient`: in-process on the store or against a daemon.

No tool takes ``result_view`` (``compozy_host__tool_invoke`` passes it inside ``input``) and
none advertises ``outputSchema``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

from compozy_mcp import __version__, jsonutil
from compozy_mcp.errors import CompozyError, InternalError
from compozy_mcp.hostapi import HostClient, bodies
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.inputs import (
    SESSION_ARCHIVE,
    SESSION_CREATE,
    SESSION_DELETE,
    SESSION_LIST,
    SESSION_STATUS,
    SESSION_UNARCHIVE,
    TOOL_SEARCH,
    input_schema,
)
from compozy_mcp.hostapi.wire import error_body
from compozy_mcp.schemas import OPEN_OBJECT, STRING, described, tool_input
from compozy_mcp.validation import InputCheck

log = logging.getLogger(__name__)

SERVER_NAME = "compozy-host"
PREFIX = "compozy_host__"
INSTRUCTIONS = (
    "The compozy Host API: list, read, create and archive managed sessions (full records), "
    "register workspaces and profiles, and list, inspect, search and invoke native tools. "
    'compozy_host__tool_invoke passes the tool input as "input"; put result_view inside it.'
)

Run = Callable[[HostClient, dict[str, Any]], Awaitable[Mapping[str, Any]]]

SESSION_ARG = described(
    STRING, "Make the call as this managed session (its permission policy applies)."
)


@dataclass(frozen=True, slots=True)
class HostTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    run: Run
    #: False when the operation checks its own input, so that errors are the route's own
    checked_here: bool = True


def _session_tool(
    name: str, tool_id: str, description: str, run: Run, *, read_only: bool
) -> HostTool:
    return HostTool(PREFIX + name, description, input_schema(tool_id), read_only, run)


def host_tools() -> list[HostTool]:
    record = 'Returns {"session": SessionPayload}, the complete record (as GET /api/sessions/{id}).'
    return [
        _session_tool(
            "session_list",
            SESSION_LIST,
            "List sessions, newest first, as complete records: "
            '{"sessions": [...], "next_cursor"?}. Pass next_cursor back as cursor.',
            lambda host, args: host.call(ops.LIST_SESSIONS, args),
            read_only=True,
        ),
        _session_tool(
            "session_status",
            SESSION_STATUS,
            f"Read one session. {record}",
            lambda host, args: host.call(ops.SESSION_STATUS, {"session_id": args["session_id"]}),
            read_only=True,
        ),
        _session_tool(
            "session_create",
            SESSION_CREATE,
            f"Create a session for an agent. {record}",
            lambda host, args: host.call(ops.CREATE_SESSION, args),
            read_only=False,
        ),
        _session_tool(
            "session_archive",
            SESSION_ARCHIVE,
            f"Archive a session. {record}",
            lambda host, args: host.call(ops.ARCHIVE_SESSION, {"session_id": args["session_id"]}),
            read_only=False,
        ),
        _session_tool(
            "session_unarchive",
            SESSION_UNARCHIVE,
            f"Return an archived session to the board. {record}",
            lambda host, args: host.call(ops.UNARCHIVE_SESSION, {"session_id": args["session_id"]}),
            read_only=False,
        ),
        _session_tool(
            "session_delete",
            SESSION_DELETE,
            "Delete an archived session and its descendants, with their transcripts and the "
            'artifacts only they stored: {"deleted": {...}}. Cannot be undone.',
            lambda host, args: host.call(ops.DELETE_SESSION, {"session_id": args["session_id"]}),
            read_only=False,
        ),
        HostTool(
            PREFIX + "store_vacuum",
            "Stop expired sessions, delete expired artifacts and rebuild the database so "
            'that deleted content gives its space back: {"upkeep": {...}} with sizes.',
            tool_input(),
            False,
            lambda host, args: host.call(ops.VACUUM_STORE, {}),
        ),
        HostTool(
            PREFIX + "workspace_list",
            'The registered workspaces, oldest first: {"workspaces": [{"id", "name", "path", '
            '"created_at"}]}. Sessions name one by workspace_id.',
            tool_input(),
            True,
            lambda host, args: host.call(ops.LIST_WORKSPACES, {}),
        ),
        HostTool(
            PREFIX + "workspace_add",
            "Register a directory (an absolute path on the host) as a workspace: "
            '{"workspace": {...}}.',
            bodies.WORKSPACE_ADD,
            False,
            lambda host, args: host.call(ops.ADD_WORKSPACE, args),
            checked_here=False,
        ),
        HostTool(
            PREFIX + "profile_list",
            'The profiles, oldest first: {"profiles": [{"id", "name", "color", "icon", '
            '"created_at"}]}. Sessions name one by profile_id.',
            tool_input(),
            True,
            lambda host, args: host.call(ops.LIST_PROFILES, {}),
        ),
        HostTool(
            PREFIX + "profile_add",
            'Create a profile (how sessions are presented): {"profile": {...}}.',
            bodies.PROFILE_ADD,
            False,
            lambda host, args: host.call(ops.ADD_PROFILE, args),
            checked_here=False,
        ),
        HostTool(
            PREFIX + "tool_list",
            'The native tools the caller may use: {"tools": [ToolDescriptorPayload]}.',
            tool_input(optional={"session": SESSION_ARG}),
            True,
            lambda host, args: host.call(ops.LIST_TOOLS, {}, session=args.get("session")),
        ),
        HostTool(
            PREFIX + "tool_info",
            'One native tool\'s contract: {"tool": ToolDescriptorPayload}, with output_views '
            "(compact and full schemas and digests) for tools with views.",
            tool_input(
                {"tool_id": described(STRING, "A tool id, such as compozy__session_status.")},
                {"session": SESSION_ARG},
            ),
            True,
            lambda host, args: host.call(
                ops.TOOL_INFO, {"tool_id": args["tool_id"]}, session=args.get("session")
            ),
        ),
        HostTool(
            PREFIX + "tool_search",
            'Search the native tools: {"query", "tools": [ToolDescriptorPayload]}, best first.',
            tool_input(
                {"query": input_schema(TOOL_SEARCH)["properties"]["query"]},
                {"limit": input_schema(TOOL_SEARCH)["properties"]["limit"], "session": SESSION_ARG},
            ),
            True,
            lambda host, args: host.call(
                ops.SEARCH_TOOLS,
                {k: v for k, v in args.items() if k in ("query", "limit")},
                session=args.get("session"),
            ),
        ),
        HostTool(
            PREFIX + "tool_invoke",
            "Invoke a native tool: "
            '{"result": {"structured", "preview"}}. The tool input goes in "input"; to get '
            'the complete record of a tool with views, put "result_view": "full" inside it.',
            tool_input(
                {"tool_id": described(STRING, "The tool to invoke.")},
                {
                    "input": described(OPEN_OBJECT, "The tool input."),
                    "session": SESSION_ARG,
                    "approval_token": described(
                        STRING, "A one-shot approval token minted for this call."
                    ),
                },
            ),
            False,
            lambda host, args: host.call(
                ops.INVOKE,
                {
                    "tool_id": args["tool_id"],
                    "input": args.get("input", {}),
                    "approval_token": args.get("approval_token"),
                },
                session=args.get("session"),
            ),
        ),
        HostTool(
            PREFIX + "approval_mint",
            "Mint a one-shot approval token for one call of tool_id by session_id, from its "
            "input or input_digest (computed without result_view): "
            '{"approval": {"token", "expires_at", ...}}. Single use, 120 s by default.',
            tool_input(
                {"tool_id": described(STRING, "The tool the call will invoke.")},
                dict(bodies.APPROVAL_MINT["properties"]),
            ),
            False,
            lambda host, args: host.call(ops.MINT_APPROVAL, args),
            checked_here=False,
        ),
        HostTool(
            PREFIX + "session_approve",
            "Answer a session's pending interaction: an approval prompt (allow-once, "
            "allow-always, reject-once, reject-always; the agent then retries the call) or an "
            "agent's permission request (one of its options).",
            tool_input(
                {
                    "session_id": described(STRING, "The session that waits."),
                    "interaction_id": STRING,
                    "decision": STRING,
                }
            ),
            False,
            lambda host, args: host.call(ops.APPROVE_SESSION, args),
        ),
    ]


def _title(name: str) -> str:
    """``compozy_host__session_list`` -> "Host: session list" (the native tools' rule, with
    the server named: a client may show both servers' tools side by side)."""
    return "Host: " + name.removeprefix(PREFIX).replace("_", " ")


def _annotations(tool: HostTool) -> ToolAnnotations:
    """The same rule as the native tools' (``proxy/listing.py``): unsafe defaults explicit."""
    if tool.read_only:
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    # an invoked tool may be destructive; a deletion is
    invoke = tool.name in (PREFIX + "tool_invoke", PREFIX + "session_delete")
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=invoke,
        idempotent_hint=tool.name.endswith("archive"),
        open_world_hint=False,
    )


def _result(payload: dict[str, Any], *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=jsonutil.dumps_text(payload))],
        structured_content=payload,
        is_error=is_error,
    )


class HostServer:
    def __init__(self, client: HostClient) -> None:
        self.client = client
        self.host_tools = {tool.name: tool for tool in host_tools()}
        self.tools = [
            Tool(
                name=tool.name,
                title=_title(tool.name),
                description=tool.description,
                input_schema=tool.input_schema,
                annotations=_annotations(tool),
            )
            for tool in self.host_tools.values()
        ]
        self._checks = {
            name: InputCheck(tool.input_schema)
            for name, tool in self.host_tools.items()
            if tool.checked_here
        }
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            get_tool_input_schema=self._input_schema,
        )

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.host_tools.get(name)
        return None if tool is None else tool.input_schema

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = self.host_tools.get(params.name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        args = dict(params.arguments or {})
        try:
            check = self._checks.get(tool.name)
            if check is not None:
                check.check(tool.name, args)
            payload = await tool.run(self.client, args)
        except CompozyError as error:
            return _result(error_body(error), is_error=True)
        except Exception:  # never take the server down; the next call must work
            log.exception("%s failed", tool.name)
            return _result(error_body(InternalError("internal error")), is_error=True)
        return _result(dict(payload))
