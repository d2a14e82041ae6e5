"""The waits of the soak's schemathesis run (:mod:`tests.fuzz.schemathesis_hooks`): a
generated call that waits (``session_wait``, a prompt or Loop run with ``wait``) is asked to
wait at most :data:`WAIT_SECONDS`, as the soak's hostile calls are (:mod:`tests.fuzz.calls`).

A wait lasts as long as it is asked (600 s by default; a prompt to a session no agent runs
stays queued, by design), past schemathesis's 10 s request timeout, which reports it as a
network error. Only a valid wait is shortened (one the request leaves out, or a number above
the cap): an invalid ``timeout_seconds`` is left for the daemon to refuse, so no generated case
changes from valid to invalid or back.
"""

from __future__ import annotations

import re
from typing import Any

from compozy_mcp.hostapi.operations import OPERATIONS
from compozy_mcp.native import build_registry

WAIT_SECONDS = 2

_REGISTRY = build_registry()
_WAITING_TOOLS = frozenset(
    tool.id for tool in _REGISTRY if "timeout_seconds" in tool.input_schema.get("properties", {})
)
_INVOKE = re.compile(r"^/api/tools/(?P<tool>[^/]+)/invoke$")
#: the routes (method, path) that call a waiting tool with its input as their body
_WAITING_ROUTES = frozenset(
    (op.method, "/api" + op.path)
    for op in OPERATIONS
    if op.tool_id in _WAITING_TOOLS
    # a body that is the tool's input (its fields unlisted), or one that lists the wait
    and (op.body_fields is None or "timeout_seconds" in op.body_fields)
)


def waiting_input(method: str, path: str, body: Any) -> dict[str, Any] | None:
    """The part of ``body`` that is a waiting tool's input, ``None`` when the call waits not."""
    if not isinstance(body, dict):
        return None
    invoke = _INVOKE.match(path)
    if invoke is not None:
        given = body.get("input")
        return given if invoke["tool"] in _WAITING_TOOLS and isinstance(given, dict) else None
    return body if (method, path) in _WAITING_ROUTES else None


def cap_wait(tool_input: dict[str, Any]) -> None:
    """Ask a valid wait for at most :data:`WAIT_SECONDS` (an invalid one is left as it is)."""
    asked = tool_input.get("timeout_seconds")
    valid_and_long = (
        isinstance(asked, int | float) and not isinstance(asked, bool) and (asked > WAIT_SECONDS)
    )
    if "timeout_seconds" not in tool_input or valid_and_long:
        tool_input["timeout_seconds"] = WAIT_SECONDS
