"""``compozy__hooks_test``: one hook run once on a payload, read the way a call would read it, with
nothing applied and no tool called.

The payload is the one given, or a sample built for a named tool: its input (given, or one that
fills the tool's required fields with sample values of their types), the calling session's real
context when one is named, and a sample result (post_call) or error (post_error). A sample is
what the dry run is for: the hook sees a payload of the right shape without any tool running.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import HookDenied, HookFailed, ResourceNotFound, ToolError, ToolInvalidInput
from compozy_mcp.hooks._engine import HookEngine, recorded_patch
from compozy_mcp.hooks._events import POST_CALL, POST_ERROR, PRE_CALL, CallSubject, ToolReference
from compozy_mcp.hooks._events import payload as event_payload
from compozy_mcp.hooks._model import Hook
from compozy_mcp.hooks._patches import DENIED, PATCH_REFUSED, interpret
from compozy_mcp.hooks._tool_input import patched_input
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolRegistry
from compozy_mcp.views import SELECTOR_FIELD, ResultView

SAMPLE_CALL_ID = "call-test"
GLOB_CHARACTERS = "*?["


def sample_input(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An input with each required field filled with a sample value of its type."""
    properties = schema.get("properties", {})
    return {
        name: _sample_value(name, properties.get(name, {})) for name in schema.get("required", ())
    }


def _sample_value(name: str, schema: Mapping[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "sess-example" if name.endswith("session_id") else "example"


def _tool_id(call: CallInfo, hook: Hook, request: Mapping[str, Any]) -> str:
    named = request.get("tool_id")
    if isinstance(named, str):
        return named
    glob = hook.matcher.tool
    if glob is not None and not any(c in glob for c in GLOB_CHARACTERS):
        return glob
    matched = f'the tools "{glob}"' if glob else "every tool"
    raise ToolInvalidInput(
        call.tool_id,
        f'tool "{call.tool_id}" input "tool_id" is required to build a sample: hook "{hook.id}" '
        f"matches {matched}; name one, or send a payload",
        field="tool_id",
    )


def sample_payload(
    engine: HookEngine,
    call: CallInfo,
    hook: Hook,
    event: str,
    tool: RegisteredTool | None,
    tool_id: str,
    request: Mapping[str, Any],
) -> dict[str, Any]:
    tool_input = request.get("tool_input")
    if tool_input is None:
        tool_input = sample_input(tool.input_schema) if tool is not None else {}
    session_id = request.get("session_id")
    caller = engine.caller(session_id)
    if session_id is not None and caller is None:
        raise ResourceNotFound(call.tool_id, "session", session_id)
    has_views = tool is not None and tool.has_views
    ref = ToolReference(
        tool_call_id=SAMPLE_CALL_ID,
        tool_id=tool_id,
        read_only=tool is not None and tool.risk is Risk.READ,
        has_result_views=has_views,
    )
    fields: dict[str, Any] = {"tool_input": tool_input}
    if event == POST_CALL:
        if has_views:
            fields["result_view"] = str(tool_input.get(SELECTOR_FIELD, ResultView.COMPACT.value))
        fields["tool_result"] = {"structured": {}, "preview": "(a sample result)"}
    elif event == POST_ERROR:
        fields["error"] = {
            "code": "tool_backend_failed",
            "reason": "handler_failed",
            "message": f'tool "{tool_id}" failed (a sample error)',
            "tool_id": tool_id,
        }
    return event_payload(event, CallSubject(ref, caller), fields, engine.now())


async def test_hook(
    engine: HookEngine,
    tools: ToolRegistry,
    call: CallInfo,
    hook: Hook,
    request: Mapping[str, Any],
) -> dict[str, Any]:
    given = request.get("payload")
    event = str(request.get("event") or (given or {}).get("event") or hook.event)
    if given is not None:
        body = dict(given)
        tool = tools.find(str(body.get("tool_id", "")))
    else:
        tool_id = _tool_id(call, hook, request)
        tool = tools.find(tool_id)
        body = sample_payload(engine, call, hook, event, tool, tool_id, request)
    started = time.perf_counter()
    run = await engine.execute(hook, event, body)
    duration = (time.perf_counter() - started) * 1000
    verdict = interpret(event, hook.id, body, run)
    out: dict[str, Any] = {"hook_id": hook.id, "event": event, "payload": body}
    outcome, error = verdict.outcome, verdict.refusal
    tool_id = str(body.get("tool_id", ""))
    pre = event == PRE_CALL
    if verdict.failed and pre and hook.on_error == "deny":
        error = HookFailed(tool_id, hook.id, str(verdict.detail))
    elif verdict.outcome == DENIED and pre:
        error = HookDenied(tool_id, hook.id, str(verdict.deny_reason))
    patch = verdict.patch
    if pre and error is None and patch is not None and patch.tool_input is not None:
        pinned = body.get("pinned_result_view")
        try:
            if tool is None:
                out["tool_input"] = patch.tool_input
            else:
                checked, view = patched_input(
                    tool, patch.tool_input, ResultView(pinned) if pinned else None
                )
                out["tool_input"] = checked
                if view is not None:
                    out["result_view"] = view.value
        except ToolError as refused:
            outcome, error = PATCH_REFUSED, refused
    if not pre:
        error = None  # after the call, nothing a hook does ends it in an error
        decision = "deny" if verdict.outcome == DENIED else "none"
    else:
        decision = "deny" if error is not None or verdict.outcome == DENIED else "allow"
    out.update(
        outcome=outcome,
        decision=decision,
        duration_ms=round(duration, 3),
        exit_code=run.exit_code,
        stderr=run.stderr_tail,
    )
    detail = verdict.detail
    if outcome == PATCH_REFUSED and error is not None:
        detail = error.message
    if detail is not None:
        out["detail"] = detail
    recorded = recorded_patch(patch)
    if recorded is not None:
        out["patch"] = recorded
    if error is not None:
        out["error"] = error.payload(redact=False)
    return out
