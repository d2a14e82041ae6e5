"""What a hook is, as users write it (``hooks.yaml``, ``compozy__hooks_create``) and as the hook
tools return it: the definition's schema, its defaults, and the records of hooks and runs.

Declared here, below the hook engine, because the hook tools publish these schemas as their
inputs and outputs; the engine (:mod:`compozy_mcp.hooks`) reads definitions through
:func:`normalized`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compozy_mcp.errors import ToolInvalidInput
from compozy_mcp.reasons import Reason
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    STRING,
    TIMESTAMP,
    Schema,
    array,
    described,
    enum,
    nullable,
    obj,
)

PRE_CALL = "tool.pre_call"
POST_CALL = "tool.post_call"
POST_ERROR = "tool.post_error"
EVENTS = (PRE_CALL, POST_CALL, POST_ERROR)
#: the letter of compozy__hooks_runs cursors (compozy_mcp.cursors)
RUN_CURSOR = "r"

#: seconds a hook may run unless it says otherwise, and the most it may ask for
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 600.0
#: the exit code of a command hook that denies the call (Claude Code's blocking code)
DENY_EXIT_CODE = 2
#: where hooks come from: made by the tools (stored), or read from a hooks.yaml
SOURCES = ("store", "home", "workspace")
#: what a header value is shown as (a webhook's headers often carry a token)
REDACTED = "<redacted>"

HOOK_ID = {
    "type": "string",
    "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$",
    "description": "Lowercase letters, digits, - and _; at most 64 characters.",
}
#: a hook's id as the tools take it: a workspace's hooks are named <workspace_id>.<id>
HOOK_REF = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "A hook id, as compozy__hooks_list shows it.",
)
GLOB = {"type": "string", "minLength": 1, "maxLength": 200}
MATCHER = obj(
    optional={
        "tool": described(GLOB, "Tool id glob (fnmatch), such as compozy__session_*."),
        "agent_name": described(GLOB, "Glob on the caller's agent name."),
        "workspace": described(GLOB, "Glob on the caller's workspace id or name."),
        "session_type": described(
            enum("user", "subagent", "automation"), "The caller's session type."
        ),
    }
)
COMMAND = {
    "type": ["string", "array"],
    "minLength": 1,
    "minItems": 1,
    "items": {"type": "string"},
    "description": "Shell string (/bin/sh -c) or argv list. Payload: JSON on stdin; patch: "
    f"JSON on stdout (none: no patch); exit {DENY_EXIT_CODE} denies, stderr says why.",
}
URL = described(
    {"type": "string", "pattern": "^https?://", "maxLength": 2000},
    "Webhook: the payload is POSTed; a 2xx body is the patch.",
)
HEADERS = described(
    {"type": "object", "additionalProperties": {"type": "string"}},
    "Webhook headers (values never shown back).",
)
TIMEOUT = described(
    {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT},
    f"Seconds (default {DEFAULT_TIMEOUT:g}); then the hook is killed.",
)
MODE = described(
    enum("sync", "async"),
    "sync (default) or async (observes; the call does not wait).",
)
ON_ERROR = described(
    enum("allow", "deny"),
    "A failing sync pre_call hook: allow (default) lets the call run, deny refuses it.",
)
DESCRIPTION = {"type": "string", "maxLength": 500, "description": "What the hook is for."}
EVENT = described(enum(*EVENTS), "When the hook runs.")

#: the fields a definition may set besides its id, and the schema of each
FIELDS: dict[str, Schema] = {
    "event": EVENT,
    "matcher": described(MATCHER, "Which calls it runs on; default all."),
    "command": COMMAND,
    "url": URL,
    "headers": HEADERS,
    "timeout": TIMEOUT,
    "mode": MODE,
    "enabled": described(BOOLEAN, "Default true."),
    "on_error": ON_ERROR,
    "description": DESCRIPTION,
}
#: what a definition that leaves a field out gets
DEFAULTS: dict[str, Any] = {
    "matcher": {},
    "timeout": DEFAULT_TIMEOUT,
    "mode": "sync",
    "enabled": True,
    "on_error": "allow",
}
OPTIONAL_FIELDS = {name: schema for name, schema in FIELDS.items() if name != "event"}

#: a hook in a hooks.yaml file
FILE_HOOK = obj({"id": HOOK_ID, "event": FIELDS["event"]}, OPTIONAL_FIELDS)
#: the hooks.yaml file itself
HOOKS_FILE = obj(optional={"hooks": array({"type": "object"})})

STATS = obj(
    {"runs": COUNT, "failed": COUNT},
    {"last_outcome": STRING, "last_run_at": TIMESTAMP},
)
HOOK_RECORD = obj(
    {
        "id": STRING,
        "event": enum(*EVENTS),
        "enabled": BOOLEAN,
        "source": enum(*SOURCES),
        "matcher": MATCHER,
        "timeout": {"type": "number"},
        "mode": enum("sync", "async"),
        "on_error": enum("allow", "deny"),
        "stats": STATS,
    },
    {
        "workspace_id": STRING,
        "command": COMMAND,
        "url": STRING,
        "headers": HEADERS,
        "description": STRING,
        "file": described(STRING, "The hooks.yaml the hook is defined in."),
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    order=(
        "id",
        "event",
        "enabled",
        "source",
        "workspace_id",
        "matcher",
        "command",
        "url",
        "headers",
        "timeout",
        "mode",
        "on_error",
        "description",
        "file",
        "created_at",
        "updated_at",
        "stats",
    ),
)
PROBLEM = obj({"source": STRING, "message": STRING}, {"workspace_id": STRING, "hook_id": STRING})

OUTCOMES = ("ok", "denied", "patch_refused", "error", "timeout", "invalid_output")
#: outcomes that count as failed runs
FAILED_OUTCOMES = ("patch_refused", "error", "timeout", "invalid_output")
DECISIONS = ("allow", "deny", "none")
RUN_RECORD = obj(
    {
        "run_id": COUNT,
        "hook_id": STRING,
        "event": enum(*EVENTS),
        "tool_id": STRING,
        "tool_call_id": STRING,
        "started_at": TIMESTAMP,
        "duration_ms": {"type": "number"},
        "outcome": enum(*OUTCOMES),
        "decision": enum(*DECISIONS),
        "patch_applied": BOOLEAN,
        "stderr_tail": STRING,
    },
    {
        "session_id": STRING,
        "detail": STRING,
        "exit_code": nullable({"type": "integer"}),
        "patch": {"type": "object"},
    },
    order=(
        "run_id",
        "hook_id",
        "event",
        "tool_id",
        "tool_call_id",
        "session_id",
        "started_at",
        "duration_ms",
        "outcome",
        "decision",
        "patch_applied",
        "detail",
        "exit_code",
        "stderr_tail",
        "patch",
    ),
)


def definition_problem(definition: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """The rules a schema cannot say simply, as ``(field, problem)``: exactly one of
    ``command`` and ``url``; headers belong to webhooks."""
    if len([name for name in ("command", "url") if name in definition]) != 1:
        return None, 'must set exactly one of "command" and "url"'
    if "headers" in definition and "url" not in definition:
        return "headers", 'applies to webhooks ("url") only'
    return None


def check_definition(tool_id: str, definition: Mapping[str, Any]) -> None:
    """Raise :class:`ToolInvalidInput` (reason ``hook_invalid``) if :func:`definition_problem`
    finds one."""
    found = definition_problem(definition)
    if found is None:
        return
    name, problem = found
    where = "input" if name is None else f'input "{name}"'
    raise ToolInvalidInput(
        tool_id, f'tool "{tool_id}" {where} {problem}', reason=Reason.HOOK_INVALID, field=name
    )


def normalized(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A checked definition with every default filled in, in record order."""
    merged = {**DEFAULTS, **definition}
    if "timeout" in merged:
        merged["timeout"] = float(merged["timeout"])
    order = HOOK_RECORD["properties"]
    return {name: merged[name] for name in order if name in merged}
