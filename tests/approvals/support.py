"""Helpers of the approval tests: an agent (a managed session) making calls, and what its
calls leave on its session."""

from __future__ import annotations

from typing import Any

from tests.conftest import Caller

from compozy_mcp.calls import CallScope
from compozy_mcp.errors import ToolApprovalRequired

#: the mutating native tool the agent calls (its result has views)
RENAME = "compozy__session_rename"
APPROVE = "compozy__session_approve"
AGENT = "sess-agent"


async def agent_session(call: Caller, session_id: str = AGENT, **fields: Any) -> str:
    """A root session (its policy allows every tool): the agent whose calls need approval."""
    created = await call.create(session_id=session_id, **fields)
    return str(created["id"])


def scope(session_id: str = AGENT) -> CallScope:
    return CallScope(session_id=session_id)


async def held(call: Caller, tool_input: dict[str, Any], session_id: str = AGENT) -> Any:
    """Call ``RENAME`` as the agent, expecting it to wait for approval; the error."""
    try:
        await call(RENAME, tool_input, scope=scope(session_id))
    except ToolApprovalRequired as waiting:
        return waiting
    raise AssertionError("the call ran without approval")


async def pending(call: Caller, session_id: str = AGENT) -> list[dict[str, Any]]:
    record = await call.full(session_id)
    items: list[dict[str, Any]] = record["pending_interactions"]
    return items
