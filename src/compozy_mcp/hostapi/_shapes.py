"""The wire shapes of the Host API: what operations take and answer, as typed dictionaries.

Records themselves (a session, a turn, a Loop run) are JSON objects whose schemas live with the
tools that make them (``SESSION_RECORD``, ``TURN_RECORD``, ...); here they are ``Record``. The
envelopes around them are typed; what an operation takes is its tool's input (checked by it).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

#: one record as JSON (its schema is its tool's output schema)
Record = dict[str, Any]
#: a payload no narrower type describes (a tool's full result)
Payload = dict[str, Any]


class SessionResponse(TypedDict):
    session: Record


class SessionPage(TypedDict):
    sessions: list[Record]
    next_cursor: NotRequired[str]


class Deleted(TypedDict):
    deleted: Record


class TurnResponse(TypedDict):
    turn: Record


class TurnPage(TypedDict):
    session_id: str
    turns: list[Record]
    next_cursor: NotRequired[int]


class EventPage(TypedDict):
    session_id: str
    events: list[Record]
    next_cursor: int


class ToolList(TypedDict):
    tools: list[Record]


class ToolInfo(TypedDict):
    tool: Record


class ToolFound(TypedDict):
    query: str
    tools: list[Record]


class InvokeResponse(TypedDict):
    result: Record


class ApprovalResponse(TypedDict):
    approval: Record


class AgentList(TypedDict):
    agents: list[Record]
    problems: list[Record]


class WorkspaceList(TypedDict):
    workspaces: list[Record]


class WorkspaceResponse(TypedDict):
    workspace: Record


class ProfileList(TypedDict):
    profiles: list[Record]


class ProfileResponse(TypedDict):
    profile: Record


class WorktreeList(TypedDict):
    worktrees: list[Record]


class WorktreeResponse(TypedDict):
    worktree: Record


class LoopList(TypedDict):
    loops: list[Record]


class LoopResponse(TypedDict):
    loop: Record


class LoopValidation(TypedDict):
    valid: bool
    items: list[Record]


class LoopRunResponse(TypedDict):
    run: Record


class LoopRunPage(TypedDict):
    runs: list[Record]
    next_cursor: NotRequired[str]


class Upkeep(TypedDict):
    upkeep: Record


class ServerList(TypedDict):
    servers: list[Record]
