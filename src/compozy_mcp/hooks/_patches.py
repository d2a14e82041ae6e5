"""What a hook's run means: a patch, a deny, a failure, or output that is not a patch.

A patch is a JSON object (upstream's ``ToolCallPatch`` / ``ToolResultPatch``):

- ``tool.pre_call``: ``deny``, ``deny_reason``, ``tool_input``;
- ``tool.post_call``: ``deny``, ``deny_reason``, ``title``, ``tool_result``;
- ``tool.post_error``: ``deny``, ``deny_reason``, ``error`` (the message the caller gets).

A hook may echo other payload fields back unchanged. Changing one is refused: ``tool_id`` or
``read_only`` (a hook cannot change which tool runs or its risk) with ``hook_denied``; the
identity fields (``tool_call_id``, ``session_id``, ``workspace_id``, ``agent_name``, ``turn_id``)
with ``scope_mismatch``; anything else is output that is not a patch. ``null`` or an absent field
keeps the original, as upstream's "empty patched fields keep their originals".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.errors import HookDenied, ToolDenied, ToolError
from compozy_mcp.hooks._execution import Execution
from compozy_mcp.native.hook_schema import POST_CALL, POST_ERROR, PRE_CALL
from compozy_mcp.reasons import Reason

IDENTITY_FIELDS = ("tool_call_id", "session_id", "workspace_id", "agent_name", "turn_id")
PATCHABLE: dict[str, tuple[str, ...]] = {
    PRE_CALL: ("deny", "deny_reason", "tool_input"),
    POST_CALL: ("deny", "deny_reason", "title", "tool_result"),
    POST_ERROR: ("deny", "deny_reason", "error"),
}
#: what a tool_result patch may replace; the envelope's other fields may only be echoed
RESULT_FIELDS = ("structured", "preview")
#: characters of unreadable output a run's detail quotes
QUOTED_CHARS = 80

OK = "ok"
DENIED = "denied"
PATCH_REFUSED = "patch_refused"
ERROR = "error"
TIMEOUT = "timeout"
INVALID_OUTPUT = "invalid_output"


class InvalidOutput(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Patch:
    """The fields a hook set (``null`` ones left out), checked for their types."""

    fields: Mapping[str, Any]

    @property
    def deny(self) -> bool:
        return bool(self.fields.get("deny"))

    @property
    def deny_reason(self) -> str | None:
        reason = self.fields.get("deny_reason")
        return reason if isinstance(reason, str) else None

    @property
    def tool_input(self) -> dict[str, Any] | None:
        return self.fields.get("tool_input")

    @property
    def title(self) -> str | None:
        return self.fields.get("title")

    @property
    def tool_result(self) -> dict[str, Any] | None:
        return self.fields.get("tool_result")

    @property
    def error(self) -> str | None:
        return self.fields.get("error")

    @property
    def changes(self) -> bool:
        """Whether applying it changes anything (a deny is not a change)."""
        return any(name not in ("deny", "deny_reason") for name in self.fields)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else "null"


def _typed(event: str, name: str, value: Any, payload: Mapping[str, Any]) -> None:
    wanted: type = {
        "deny": bool,
        "deny_reason": str,
        "tool_input": dict,
        "title": str,
        "tool_result": dict,
        "error": str,
    }[name]
    if not isinstance(value, wanted):
        kind = {bool: "a boolean", str: "a string", dict: "an object"}[wanted]
        raise InvalidOutput(f'patch field "{name}" must be {kind}')
    original = payload.get("tool_result")
    if isinstance(value, dict) and isinstance(original, dict) and "structured" in original:
        _check_result(value, original)  # a tool_result replacing a native tool's envelope


def _check_result(patched: Mapping[str, Any], original: Mapping[str, Any]) -> None:
    if not isinstance(patched.get("structured"), dict):
        raise InvalidOutput('patch field "tool_result" must have an object "structured"')
    if "preview" in patched and not isinstance(patched["preview"], str):
        raise InvalidOutput('patch field "tool_result.preview" must be a string')
    for name, value in patched.items():
        if name not in RESULT_FIELDS and original.get(name) != value:
            raise InvalidOutput(f'patch field "tool_result.{name}" cannot be replaced')


def read_patch(
    event: str, payload: Mapping[str, Any], output: Any, *, hook_id: str
) -> Patch | None:
    """The patch in ``output`` (parsed JSON, or an in-process hook's return value).

    Raises :class:`InvalidOutput` for output that is not a patch of ``event``, and the tool
    error the call ends in for a patch that changes what no hook may change.
    """
    if output is None:
        return None
    if not isinstance(output, dict):
        raise InvalidOutput(f"printed JSON that is {_kind(output)}, not an object")
    tool_id = str(payload.get("tool_id", ""))
    patchable = PATCHABLE[event]
    fields: dict[str, Any] = {}
    for name, value in output.items():
        if name in patchable:
            if value is not None:
                _typed(event, name, value, payload)
                fields[name] = value
            continue
        if name not in payload:
            raise InvalidOutput(
                f'patch field "{name}" is not one {event} takes ({", ".join(patchable)})'
            )
        if payload[name] == value:
            continue  # echoed back unchanged
        if name == "tool_id":
            raise HookDenied(tool_id, hook_id, f'a hook may not change the tool id (to "{value}")')
        if name == "read_only":
            raise HookDenied(tool_id, hook_id, "a hook may not change the tool's risk (read_only)")
        if name in IDENTITY_FIELDS:
            raise ToolDenied(
                tool_id,
                f'tool "{tool_id}" hook "{hook_id}" changed "{name}"; a hook may not change who '
                "makes a call",
                reason=Reason.SCOPE_MISMATCH,
                details={"hook_id": hook_id, "field": name},
            )
        raise InvalidOutput(f'patch field "{name}" cannot change on {event}')
    return Patch(fields) if fields else None


@dataclass(frozen=True, slots=True)
class Verdict:
    """One run, read: its outcome, and what it asks of the call."""

    outcome: str
    patch: Patch | None = None
    #: why the hook denied (its stderr, its deny_reason)
    deny_reason: str | None = None
    #: why the run failed or its patch was refused
    detail: str | None = None
    #: the error a refused patch ends the call in
    refusal: ToolError | None = None

    @property
    def failed(self) -> bool:
        return self.outcome in (ERROR, TIMEOUT, INVALID_OUTPUT)


def _parsed(output: bytes | dict[str, Any] | None) -> Any:
    if not isinstance(output, bytes):
        return output
    text = output.strip()
    if not text:
        return None
    try:
        return jsonutil.loads(text)
    except ValueError:
        shown = text[:QUOTED_CHARS].decode("utf-8", errors="replace")
        more = "…" if len(text) > QUOTED_CHARS else ""
        raise InvalidOutput(f"printed output that is not JSON: {shown!r}{more}") from None


def interpret(event: str, hook_id: str, payload: Mapping[str, Any], run: Execution) -> Verdict:
    """Read one run of a hook on ``payload``."""
    if run.failure is not None:
        return Verdict(TIMEOUT if run.timed_out else ERROR, detail=run.failure)
    if run.denied:
        reason = " ".join(run.stderr_tail.split()) or "no reason given"
        return Verdict(DENIED, deny_reason=reason, detail=f"exited with code 2: {reason}")
    if run.unreadable is not None:
        return Verdict(INVALID_OUTPUT, detail=run.unreadable)
    try:
        patch = read_patch(event, payload, _parsed(run.output), hook_id=hook_id)
    except InvalidOutput as bad:
        return Verdict(INVALID_OUTPUT, detail=bad.detail)
    except ToolError as refused:
        return Verdict(PATCH_REFUSED, detail=refused.message, refusal=refused)
    if patch is not None and patch.deny:
        reason = patch.deny_reason or " ".join(run.stderr_tail.split()) or "no reason given"
        return Verdict(DENIED, patch=patch, deny_reason=reason, detail=f"denied: {reason}")
    return Verdict(OK, patch=patch)
