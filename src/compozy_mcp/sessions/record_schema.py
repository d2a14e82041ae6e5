"""The session record, declared once (:data:`SESSION`): its full schema, its field order and
what the compact view keeps all come from here (spec, "What compact keeps" and "Session record
tools"). :mod:`.record` builds records in this order; the property tests validate real records
against both derived schemas.
"""

from __future__ import annotations

from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    OPEN_OBJECT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    nullable,
    obj,
    strings,
)
from compozy_mcp.views.shape import Shape, full_only, keep, nested

SESSION_ID = described(STRING, "Session id.")
POSITIVE = {"type": "integer", "minimum": 1}
SESSION_STATES = ("starting", "active", "stopping", "stopped")
STATE = enum(*SESSION_STATES)
FAILURE = obj({"kind": STRING, "summary": STRING}, {"crash_bundle_path": STRING})
INTERACTION_KIND = enum("permission", "question", "plan", "approval")

SELECTION = Shape(
    keep("provider", STRING, required=True),
    keep("model", STRING),
    keep("reasoning_effort", STRING),
)

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

RUNTIME = Shape(
    keep(
        "status",
        enum("unbound", "binding", "ready", "running", "reconfiguring", "recovering", "failed"),
        required=True,
    ),
    full_only(
        "transition",
        enum("initial_bind", "live_configuration", "process_replacement", "automatic_recovery"),
    ),
    keep("failure", FAILURE),
    keep("generation", POSITIVE),
    keep("selection_revision", COUNT, required=True),
    full_only("selected", SELECTION),
    nested("effective", SELECTION),
    full_only("acp_session_id", STRING),
    full_only("acp_caps", ACP_CAPS),
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

LINEAGE = Shape(
    keep("kind", enum("root", "spawn", "fork"), required=True),
    keep("parent_session_id", STRING),
    keep("root_session_id", STRING, required=True),
    full_only("spawn_depth", COUNT, required=True),
    full_only("spawn_role", STRING),
    keep("ttl_expires_at", TIMESTAMP),
    keep("spawn_budget", SPAWN_BUDGET, required=True),
    full_only("permission_policy", PERMISSIONS, required=True),
    full_only("auto_stop_on_parent", BOOLEAN, required=True),
    full_only("notify_creator", BOOLEAN, required=True),
)

INTERACTION = obj(
    {
        "session_id": STRING,
        "interaction_id": STRING,
        "kind": INTERACTION_KIND,
        "provider_request_id": STRING,
        "status": enum("pending"),
        "created_at": TIMESTAMP,
    },
    {
        "turn_id": STRING,
        "title": STRING,
        "choices": strings(),
        "decisions": strings(),
        "tool_id": STRING,
        "tool_input": described(OPEN_OBJECT, "The input of the call, as sent (selector too)."),
        "input_digest": STRING,
    },
    order=(
        "session_id",
        "interaction_id",
        "kind",
        "provider_request_id",
        "turn_id",
        "title",
        "choices",
        "decisions",
        "tool_id",
        "tool_input",
        "input_digest",
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
        "interaction_kind": INTERACTION_KIND,
    }
)
PULL_REQUEST = obj(
    {
        "number": POSITIVE,
        "url": STRING,
        "state": enum("open", "draft", "merged", "closed"),
    },
    {"title": STRING},
)
QUEUE = obj(
    {
        "pending": POSITIVE,
        "next": obj({"prompt_id": STRING, "preview": STRING, "queued_at": TIMESTAMP}),
    }
)
CHILD = obj(
    {
        "session_id": STRING,
        "kind": enum("spawn", "fork"),
        "agent_name": STRING,
        "state": STATE,
    },
    {"name": STRING, "spawn_role": STRING},
    order=("session_id", "kind", "agent_name", "name", "state"),
)
SUBAGENT_SUMMARY = obj({"total": COUNT, "active": COUNT, "stopped": COUNT, "failed": COUNT})
LATER = obj({"set_at": TIMESTAMP}, {"until": TIMESTAMP, "note": STRING})
BADGE = enum(
    "idle",
    "starting",
    "running",
    "waiting-for-auth",
    "waiting-for-input",
    "later",
    "review",
    "merged",
    "stopped",
    "failed",
    "archived",
)
BOARD_COLUMNS = ("backlog", "working", "needs_you", "review", "later", "done")
WORKTREE_STATES = ("active", "removed", "missing")
#: where a session's worktree is, what it was based on, and what it holds (full view)
WORKTREE = obj(
    {
        "path": STRING,
        "directory": STRING,
        "state": enum(*WORKTREE_STATES),
        "base": obj({"commit": STRING}, {"ref": STRING}),
    },
    {
        "changes": obj({"files": COUNT, "added": COUNT, "removed": COUNT, "checked_at": TIMESTAMP}),
        "merged": obj({"into": STRING, "commit": STRING, "at": TIMESTAMP}),
    },
)

#: The complete session record (the full view), field by field in record order.
SESSION = Shape(
    keep("id", STRING, required=True),
    keep("name", STRING),
    keep("agent_name", STRING, required=True),
    keep("profile_id", STRING, required=True),
    full_only("profile_name", STRING),
    full_only("profile_color", STRING),
    full_only("profile_icon", STRING),
    keep("type", enum("user", "subagent", "automation"), required=True),
    keep("workspace_id", STRING, required=True),
    full_only("workspace_path", STRING),
    keep("worktree_id", STRING),
    keep("branch", STRING),
    full_only("worktree", WORKTREE),
    keep("state", STATE, required=True),
    keep("badge", BADGE, required=True),
    keep("board_column", enum(*BOARD_COLUMNS), required=True),
    keep("attention", ATTENTION),
    keep("attention_dismissible", BOOLEAN),
    keep("waiting_on", WAITING_ON),
    nested("runtime", RUNTIME, required=True),
    keep("transcript_epoch", POSITIVE),
    nested("lineage", LINEAGE, required=True),
    keep("pending_interactions", array(INTERACTION), required=True),
    full_only("supervision", SUPERVISION, required=True),
    full_only("available_commands", array(COMMAND), required=True),
    full_only("diagnostics", array(DIAGNOSTIC), required=True),
    keep("stop_reason", STRING),
    keep("stop_detail", STRING),
    keep("stop_cause", enum("operator", "parent", "ttl", "failure")),
    keep("failure", FAILURE),
    keep("permission_mode_degraded", {"type": "boolean", "const": True}),
    keep("pull_request", nullable(PULL_REQUEST), required=True),
    keep("queue", QUEUE),
    keep("children", array(CHILD)),
    keep("subagent_summary", SUBAGENT_SUMMARY),
    keep("later", LATER),
    keep("archived_at", nullable(TIMESTAMP), required=True),
    keep("created_at", TIMESTAMP, required=True),
    keep("updated_at", TIMESTAMP, required=True),
)

SESSION_RECORD = SESSION.schema()
SESSION_RESULT = obj({"session": SESSION_RECORD})
#: what the compact view keeps of a session record
SESSION_COMPACT = SESSION.mask()
