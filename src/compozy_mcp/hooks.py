"""Tool hooks: ``tool.pre_call``, ``tool.post_call`` and ``tool.post_error``.

A hook is an async callable that receives the event payload (the JSON object a command hook
would read on stdin) and returns a patch or ``None``. Only ``tool.pre_call`` patches are
applied: ``{"tool_input": {...}}`` replaces the input (re-checked, selector included) and
``{"deny": true, "deny_reason": "..."}`` refuses the call. Post events are observed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from compozy_mcp.views import ResultView

ToolHook = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]

PRE_CALL = "tool.pre_call"
POST_CALL = "tool.post_call"
POST_ERROR = "tool.post_error"


@dataclass(frozen=True, slots=True)
class ToolReference:
    """The tool reference every tool event carries."""

    tool_call_id: str
    tool_id: str
    read_only: bool
    has_result_views: bool
    pinned_result_view: ResultView | None = None

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool_id": self.tool_id,
            "tool_call_id": self.tool_call_id,
            "read_only": self.read_only,
        }
        # Present only for tools with views (spec, Hooks).
        if self.has_result_views:
            out["has_result_views"] = True
        if self.pinned_result_view is not None:
            out["pinned_result_view"] = self.pinned_result_view.value
        return out


def event(name: str, ref: ToolReference, session_id: str | None, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"event": name, **ref.payload()}
    if session_id is not None:
        payload["session_id"] = session_id
    payload.update({key: value for key, value in fields.items() if value is not None})
    return payload
