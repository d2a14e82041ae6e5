"""The heartbeat tools: ``compozy__agent_heartbeat_set``, ``_status`` and ``_wake``.

Who may act: each takes a ``session_id`` (default: the calling session) that a managed session
may name only for itself or a descendant, never its parent or a sibling (``acts_on``).
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    obj,
    tool_input,
)
from compozy_mcp.sessions.record_schema import SESSION_ID
from compozy_mcp.views import Fields, ViewSpec

AGENTS = ("compozy__agents",)
OUTCOMES = ("woken", "nothing_to_do", "skipped_busy", "skipped_quiet", "failed")

WAKE = obj(
    {"at": TIMESTAMP, "outcome": enum(*OUTCOMES)},
    {"turn_id": STRING, "error": STRING},
    order=("at", "outcome", "turn_id", "error"),
)
HEARTBEAT = obj(
    {
        "session_id": STRING,
        "snapshot_id": described(STRING, "The permission policy the wakes run under."),
        "enabled": BOOLEAN,
        "wakes": COUNT,
    },
    {
        "interval_seconds": COUNT,
        "cron": described(STRING, "The 5-field cron expression (UTC) the wakes follow."),
        "prompt": described(STRING, "What a wake sends the session."),
        "prompt_source": described(
            enum("input", "HEARTBEAT.md", "built-in"),
            "Where the prompt comes from: the heartbeat's own (input), the workspace's "
            "HEARTBEAT.md as it is now (read again at each wake), or the built-in one.",
        ),
        "quiet_hours": STRING,
        "next_wake_at": TIMESTAMP,
        "last_wake_at": TIMESTAMP,
        "last_outcome": enum(*OUTCOMES),
        "last_turn_id": described(STRING, "The turn the last wake that prompted it started."),
        "last_error": STRING,
        "recent_wakes": described(array(WAKE), "The last wakes, newest first (at most 10)."),
    },
    order=(
        "session_id",
        "snapshot_id",
        "enabled",
        "interval_seconds",
        "cron",
        "prompt",
        "prompt_source",
        "quiet_hours",
        "next_wake_at",
        "last_wake_at",
        "last_outcome",
        "last_turn_id",
        "last_error",
        "wakes",
        "recent_wakes",
    ),
)
#: compact heartbeat status preserves the policy snapshot_id (spec), the next wake and the
#: last outcome
HEARTBEAT_COMPACT = Fields.of(
    "session_id", "snapshot_id", "enabled", "next_wake_at", "last_outcome", "last_turn_id"
)
RESULT = obj({"heartbeat": HEARTBEAT})
VIEWS = ViewSpec(
    Fields({"heartbeat": HEARTBEAT_COMPACT}),
    follow_up=("heartbeat.session_id", "heartbeat.snapshot_id", "heartbeat.last_turn_id"),
)
QUIET_HOURS = described(
    {"type": "string", "pattern": r"^(([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d)?$"},
    "HH:MM-HH:MM (UTC) when scheduled wakes are skipped; kept until others are given, "
    '"" clears them.',
)


def _preview(result: dict[str, Any]) -> str:
    beat = result["heartbeat"]
    return f"{beat['session_id']}: {beat.get('last_outcome', 'never woken')}"


async def _set(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    beat = await call.services.heartbeats.set(call.info, args["session_id"], args)
    return {"heartbeat": beat}


async def _status(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"heartbeat": await call.services.heartbeats.status(call.info, args["session_id"])}


async def _wake(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"heartbeat": await call.services.heartbeats.wake(call.info, args["session_id"])}


def heartbeat_tools() -> list[ToolDefinition]:
    common: dict[str, Any] = {
        "output_schema": RESULT,
        "toolsets": AGENTS,
        "views": VIEWS,
        "preview": _preview,
        "acts_on": ("session_id",),
        "scope_session_field": "session_id",
    }
    return [
        ToolDefinition(
            id="compozy__agent_heartbeat_set",
            description="Give a session a heartbeat: the daemon wakes it with a prompt (default "
            "the workspace's HEARTBEAT.md) every interval or on a cron schedule, skipped while "
            "a turn runs and in quiet hours.",
            input_schema=tool_input(
                {"session_id": SESSION_ID},
                {
                    "interval_seconds": described(
                        {"type": "integer", "minimum": 60, "maximum": 604_800},
                        "Seconds between wakes; default 3600 (replaces a cron expression).",
                    ),
                    "cron": described(
                        {"type": "string", "minLength": 1, "maxLength": 256},
                        "When to wake instead of an interval: a 5-field cron expression "
                        "(minute hour day-of-month month day-of-week, UTC), such as "
                        '"*/30 9-17 * * 1-5".',
                    ),
                    "prompt": described(
                        {"type": "string", "minLength": 1, "maxLength": 65_536},
                        "What the session is woken with; kept until another is given. "
                        "Default: the workspace's HEARTBEAT.md, read at each wake.",
                    ),
                    "quiet_hours": QUIET_HOURS,
                    "enabled": described(BOOLEAN, "false pauses it; default true."),
                },
            ),
            handler=_set,
            risk=Risk.MUTATING,
            idempotent=True,
            **common,
        ),
        ToolDefinition(
            id="compozy__agent_heartbeat_status",
            description="A session's heartbeat: the policy its wakes run under (snapshot_id), "
            "the next wake and the last one's outcome.",
            input_schema=tool_input({"session_id": SESSION_ID}),
            handler=_status,
            risk=Risk.READ,
            idempotent=True,
            **common,
        ),
        ToolDefinition(
            id="compozy__agent_heartbeat_wake",
            description="Wake a session now with its heartbeat prompt (skipped while a turn "
            "runs); records the outcome.",
            input_schema=tool_input({"session_id": SESSION_ID}),
            handler=_wake,
            risk=Risk.MUTATING,
            **common,
        ),
    ]
