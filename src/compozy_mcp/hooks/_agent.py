"""The seam for the runtime: tool hooks for a tool call an ACP agent reports during a turn.

Upstream fires ``tool.pre_call`` / ``tool.post_call`` / ``tool.post_error`` for those calls too
(``hook_agent_events.go``). When the runtime lands, it calls :func:`fire_agent_tool_hooks` once
per event of such a call and acts on what comes back: a ``tool.pre_call`` denial is raised
(:class:`~compozy_mcp.errors.HookDenied` or :class:`~compozy_mcp.errors.HookFailed`), patches
come back applied. An agent's tool is not a native tool: it has no result views (no
``has_result_views`` in its payloads) and no schema to check a patched input against, but the
same identity rules hold (no hook changes the tool id or who makes the call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compozy_mcp.hooks._engine import HookEngine
from compozy_mcp.hooks._events import CallSubject, ToolReference
from compozy_mcp.hooks._patches import Patch


@dataclass(slots=True)
class AgentToolCall:
    """An agent's tool call, as its hooks left it."""

    session_id: str
    tool_call_id: str
    tool_id: str
    tool_input: dict[str, Any]
    turn_id: str | None = None
    title: str | None = None
    tool_result: Any = None
    error: str | None = None
    read_only: bool = False

    def fields(self) -> dict[str, Any]:
        return {
            "turn_id": self.turn_id,
            "title": self.title,
            "tool_input": self.tool_input,
            "tool_result": self.tool_result,
            "error": self.error,
        }

    async def apply(self, patch: Patch) -> None:
        if patch.tool_input is not None:
            self.tool_input = patch.tool_input
        if patch.title is not None:
            self.title = patch.title
        if patch.tool_result is not None:
            self.tool_result = patch.tool_result
        if patch.error is not None:
            self.error = patch.error


async def fire_agent_tool_hooks(
    engine: HookEngine, event: str, call: AgentToolCall
) -> AgentToolCall:
    """Run ``event``'s hooks for an agent's tool call; ``call`` comes back patched."""
    subject = CallSubject(
        ToolReference(
            tool_call_id=call.tool_call_id,
            tool_id=call.tool_id,
            read_only=call.read_only,
            has_result_views=False,
        ),
        engine.caller(call.session_id),
    )
    await engine.fire(event, subject, call.fields, call.apply)
    return call
