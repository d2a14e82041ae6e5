"""The three tool events and their payloads, as a hook reads them (a command on stdin, a webhook
in its request body, an in-process hook as its argument).

A payload is flat, as upstream's: the event, the tool reference, the event's own fields, the
calling session's context and a timestamp. Key order follows the spec's example::

    {"event": "tool.post_call", "tool_id": "compozy__session_status", "tool_call_id": "call-31",
     "has_result_views": true, "tool_input": {...}, "result_view": "compact",
     "tool_result": {"structured": {...}, "preview": "..."}, "read_only": true,
     "session_id": ..., "timestamp": ...}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compozy_mcp.native.hook_schema import EVENTS, POST_CALL, POST_ERROR, PRE_CALL
from compozy_mcp.views import ResultView

#: an in-process hook: the payload in, a patch (or ``None``) out
ToolHook = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class ToolReference:
    """The tool reference every tool event carries."""

    tool_call_id: str
    tool_id: str
    read_only: bool
    has_result_views: bool
    pinned_result_view: ResultView | None = None

    def payload(self) -> dict[str, Any]:
        """The reference's fields but ``read_only``, which :func:`payload` puts after the
        event's own fields, so that a payload begins as the spec's example does."""
        out: dict[str, Any] = {"tool_id": self.tool_id, "tool_call_id": self.tool_call_id}
        # Present only for tools with views (spec, Hooks).
        if self.has_result_views:
            out["has_result_views"] = True
        if self.pinned_result_view is not None:
            out["pinned_result_view"] = self.pinned_result_view.value
        return out


@dataclass(frozen=True, slots=True)
class Caller:
    """The managed session that makes a call: what matchers test and payloads carry."""

    session_id: str
    agent_name: str
    session_type: str
    workspace_id: str
    workspace_name: str | None
    workspace_path: str | None
    #: the session context of the payload (upstream §6), in payload order
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallSubject:
    """One call as its hooks see it: the tool reference and who calls."""

    ref: ToolReference
    caller: Caller | None = None

    @property
    def tool_id(self) -> str:
        return self.ref.tool_id


def payload(
    event: str, subject: CallSubject, fields: Mapping[str, Any], timestamp: str
) -> dict[str, Any]:
    """The payload of ``event``: ``fields`` are the event's own (``tool_input``,
    ``result_view``, ``tool_result``, ``error``, ``title``); ``None`` values are left out."""
    out: dict[str, Any] = {"event": event, **subject.ref.payload()}
    out.update((key, value) for key, value in fields.items() if value is not None)
    out["read_only"] = subject.ref.read_only
    if subject.caller is not None:
        out.update(subject.caller.context)
    out["timestamp"] = timestamp
    return out


__all__ = [
    "EVENTS",
    "POST_CALL",
    "POST_ERROR",
    "PRE_CALL",
    "CallSubject",
    "Caller",
    "ToolHook",
    "ToolReference",
    "payload",
]
