"""JSON Schema building blocks, and the full schemas of the records native tools return.

Records are closed wherever compozy-mcp owns their shape, so the full contract is exact and a
compact contract derived from it is too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
COUNT: Schema = {"type": "integer", "minimum": 0}
BOOLEAN: Schema = {"type": "boolean"}
TIMESTAMP: Schema = {"type": "string", "format": "date-time"}
OPEN_OBJECT: Schema = {"type": "object"}


def described(schema: Schema, description: str) -> Schema:
    return {**schema, "description": description}


def nullable(schema: Schema) -> Schema:
    kind = schema["type"]
    return {**schema, "type": [*(kind if isinstance(kind, list) else [kind]), "null"]}


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def strings(**extra: Any) -> Schema:
    return array(STRING, **extra)


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


def obj(
    required: Mapping[str, Schema] | None = None,
    optional: Mapping[str, Schema] | None = None,
    *,
    order: tuple[str, ...] = (),
    closed: bool = True,
) -> Schema:
    """An object schema; ``order`` lists property names in record order when they interleave."""
    required = dict(required or {})
    optional = dict(optional or {})
    merged = {**required, **optional}
    names = list(order) + [name for name in merged if name not in order]
    schema: Schema = {"type": "object", "properties": {name: merged[name] for name in names}}
    if required:
        schema["required"] = [name for name in names if name in required]
    schema["additionalProperties"] = not closed
    return schema


def tool_input(
    required: Mapping[str, Schema] | None = None,
    optional: Mapping[str, Schema] | None = None,
    **extra: Any,
) -> Schema:
    """A closed input schema."""
    return {**obj(required, optional), **extra}


# --- session record -------------------------------------------------------------------------

SESSION_ID = described(STRING, "Session id.")
SELECTION = obj({"provider": STRING}, {"model": STRING, "reasoning_effort": STRING})
FAILURE = obj({"kind": STRING, "summary": STRING}, {"crash_bundle_path": STRING})

ACP_CAPS = obj(
    {
        "supports_load_session": BOOLEAN,
        "prompt_image": BOOLEAN,
        "prompt_audio": BOOLEAN,
        "prompt_embedded_context": BOOLEAN,
        "supported_modes": strings(),
        "config_options": array(obj({"id": STRING, "name": STRING, "values": strings()})),
    }
)

RUNTIME = obj(
    {
        "status": enum("unbound", "binding", "ready", "reconfiguring", "recovering", "failed"),
        "selection_revision": COUNT,
    },
    {
        "transition": enum(
            "initial_bind", "live_configuration", "process_replacement", "automatic_recovery"
        ),
        "failure": FAILURE,
        "generation": {"type": "integer", "minimum": 1},
        "selected": SELECTION,
        "effective": SELECTION,
        "acp_session_id": STRING,
        "acp_caps": ACP_CAPS,
    },
    order=("status", "transition", "failure", "generation", "selection_revision"),
)

SPAWN_BUDGET = obj({"max_children": COUNT, "max_depth": COUNT, "ttl_seconds": COUNT})
PERMISSIONS = obj(
    {
        "tools": strings(),
        "skills": strings(),
        "mcp_servers": strings(),
        "workspace_paths": strings(),
    }
)

LINEAGE = obj(
    {
        "kind": enum("root", "spawn", "fork"),
        "root_session_id": STRING,
        "spawn_depth": COUNT,
        "spawn_budget": SPAWN_BUDGET,
        "permission_policy": PERMISSIONS,
        "auto_stop_on_parent": BOOLEAN,
        "notify_creator": BOOLEAN,
    },
    {"parent_session_id": STRING, "spawn_role": STRING, "ttl_expires_at": TIMESTAMP},
    order=(
        "kind",
        "parent_session_id",
        "root_session_id",
        "spawn_depth",
        "spawn_role",
        "ttl_expires_at",
    ),
)

INTERACTION = obj(
    {
        "session_id": STRING,
        "interaction_id": STRING,
        "kind": enum("permission", "question", "plan"),
        "provider_request_id": STRING,
        "status": enum("pending"),
        "created_at": TIMESTAMP,
    },
    {"turn_id": STRING, "title": STRING, "choices": strings()},
    order=(
        "session_id",
        "interaction_id",
        "kind",
        "provider_request_id",
        "turn_id",
        "title",
        "choices",
    ),
)

SUPERVISION = obj(
    {
        "mode": enum("operator", "parent"),
        "heartbeat_interval_seconds": COUNT,
        "idle_timeout_seconds": COUNT,
        "iterations": COUNT,
    },
    {
        "supervisor_session_id": STRING,
        "turn": obj(
            {"turn_id": STRING, "started_at": TIMESTAMP, "last_activity_at": TIMESTAMP},
            {"current_tool": STRING},
        ),
    },
    order=("mode", "supervisor_session_id"),
)

COMMAND = obj({"name": STRING, "description": STRING}, {"input": obj({"hint": STRING})})
DIAGNOSTIC = obj(
    {
        "code": STRING,
        "severity": enum("info", "warning", "error"),
        "message": STRING,
        "at": TIMESTAMP,
    }
)
ATTENTION = obj({"kind": enum("interaction", "failure"), "reason": STRING, "since": TIMESTAMP})
WAITING_ON = obj(
    {
        "kind": enum("interaction"),
        "interaction_id": STRING,
        "interaction_kind": enum("permission", "question", "plan"),
    }
)
PULL_REQUEST = obj(
    {
        "number": {"type": "integer", "minimum": 1},
        "url": STRING,
        "state": enum("open", "draft", "merged", "closed"),
    },
    {"title": STRING},
)
QUEUE = obj(
    {
        "pending": {"type": "integer", "minimum": 1},
        "next": obj({"prompt_id": STRING, "preview": STRING, "queued_at": TIMESTAMP}),
    }
)
CHILD = obj(
    {
        "session_id": STRING,
        "kind": enum("spawn", "fork"),
        "agent_name": STRING,
        "state": enum("starting", "active", "stopping", "stopped"),
    },
    {"name": STRING, "spawn_role": STRING},
    order=("session_id", "kind", "agent_name", "name", "state"),
)
SUBAGENT_SUMMARY = obj({"total": COUNT, "active": COUNT, "stopped": COUNT, "failed": COUNT})
LATER = obj({"set_at": TIMESTAMP}, {"until": TIMESTAMP, "note": STRING})

SESSION_RECORD = obj(
    {
        "id": STRING,
        "agent_name": STRING,
        "profile_id": STRING,
        "type": enum("user", "subagent", "automation"),
        "workspace_id": STRING,
        "state": enum("starting", "active", "stopping", "stopped"),
        "badge": enum(
            "idle",
            "starting",
            "running",
            "waiting-for-auth",
            "waiting-for-input",
            "later",
            "stopped",
            "failed",
            "archived",
        ),
        "board_column": enum("backlog", "working", "needs_you", "later", "done"),
        "runtime": RUNTIME,
        "lineage": LINEAGE,
        "pending_interactions": array(INTERACTION),
        "supervision": SUPERVISION,
        "available_commands": array(COMMAND),
        "diagnostics": array(DIAGNOSTIC),
        "pull_request": nullable(PULL_REQUEST),
        "archived_at": nullable(TIMESTAMP),
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    {
        "name": STRING,
        "profile_name": STRING,
        "profile_color": STRING,
        "profile_icon": STRING,
        "workspace_path": STRING,
        "worktree_id": STRING,
        "branch": STRING,
        "attention": ATTENTION,
        "attention_dismissible": BOOLEAN,
        "waiting_on": WAITING_ON,
        "transcript_epoch": {"type": "integer", "minimum": 1},
        "stop_reason": STRING,
        "stop_detail": STRING,
        "stop_cause": enum("operator", "parent", "ttl", "failure"),
        "failure": FAILURE,
        "permission_mode_degraded": {"type": "boolean", "const": True},
        "queue": QUEUE,
        "children": array(CHILD),
        "subagent_summary": SUBAGENT_SUMMARY,
        "later": LATER,
    },
    order=(
        "id",
        "name",
        "agent_name",
        "profile_id",
        "profile_name",
        "profile_color",
        "profile_icon",
        "type",
        "workspace_id",
        "workspace_path",
        "worktree_id",
        "branch",
        "state",
        "badge",
        "board_column",
        "attention",
        "attention_dismissible",
        "waiting_on",
        "runtime",
        "transcript_epoch",
        "lineage",
        "pending_interactions",
        "supervision",
        "available_commands",
        "diagnostics",
        "stop_reason",
        "stop_detail",
        "stop_cause",
        "failure",
        "permission_mode_degraded",
        "pull_request",
        "queue",
        "children",
        "subagent_summary",
        "later",
        "archived_at",
        "created_at",
        "updated_at",
    ),
)

SESSION_RESULT = obj({"session": SESSION_RECORD})
