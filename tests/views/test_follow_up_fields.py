"""Spec, "What compact keeps": "the fields a follow-up call takes as input".

Walks every native tool with views: each id the full record carries that another tool takes as
input (a property named ``id``, or named as an input ending in ``_id``; the fences
``transcript_epoch``, ``generation``, ``selection_revision``; ``next_cursor``, the input
``cursor``) must be kept by the compact view, unless :data:`LEFT_IN_FULL` says why not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from compozy_mcp.native import build_registry
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.views.mask import keeps_path

FENCES = frozenset({"transcript_epoch", "generation", "selection_revision"})

#: paths (tool-independent: a session record's path is the same in every session tool) that the
#: compact view leaves in the full record on purpose, and why
LEFT_IN_FULL: Mapping[str, str] = {
    "runtime.acp_caps.config_options[].id": (
        "the spec puts option catalogs and runtime.acp_caps in the full result; the values "
        "compozy__session_runtime_set takes are listed by compozy__agent_list"
    ),
    "grants[].profile_id": (
        "the spec keeps profile_archived in compact approval grants and the profile (session "
        "presentation) in the full one; compozy__tool_approvals_revoke takes grants[].id"
    ),
    "task.runs[].run_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "task.runs[].task_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "task.runs[].session_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "tasks[].runs[].run_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "tasks[].runs[].task_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "tasks[].runs[].session_id": (
        "a task's past runs are its history, in the full record; compact keeps current_run, "
        "the run every follow-up (heartbeat, complete, fail, release) takes"
    ),
    "heartbeat.recent_wakes[].turn_id": (
        "a heartbeat's past wakes are its history, in the full record; compact keeps "
        "last_turn_id, the turn a follow-up (compozy__session_wait) takes"
    ),
    "supervision.turn.turn_id": (
        "the spec puts supervision internals in the full result; compozy__session_wait waits "
        "for the latest turn without a turn_id, and compact compozy__session_history lists "
        "every turn_id"
    ),
}


def _follow_up_names(registry: ToolRegistry) -> frozenset[str]:
    names = {"id", "next_cursor"} | FENCES
    for tool in registry:
        for name in tool.input_schema.get("properties", {}):
            if name.endswith("_id"):
                names.add(name)
    return frozenset(names)


def _paths(schema: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            yield (*path, name)
            if isinstance(sub, Mapping):
                yield from _paths(sub, (*path, name))
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _paths(items, (*path, "[]"))


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path).replace(".[]", "[]")


def _tools_with_views() -> list[str]:
    return sorted(tool.id for tool in build_registry([]) if tool.has_views)


@pytest.mark.parametrize("tool_id", _tools_with_views())
def test_compact_keeps_every_id_a_follow_up_call_takes(tool_id: str) -> None:
    registry = build_registry([])
    names = _follow_up_names(registry)
    tool = registry.get(tool_id)
    assert tool.views is not None
    dropped = [
        _dotted(path)
        for path in _paths(tool.views.full.schema)
        if path[-1] in names and not keeps_path(tool.views.mask, path)
    ]
    unexplained = [
        path for path in dropped if not any(path.endswith(known) for known in LEFT_IN_FULL)
    ]
    assert unexplained == []


def test_every_documented_exception_is_still_one() -> None:
    """An entry of LEFT_IN_FULL that no tool drops any more is stale."""
    registry = build_registry([])
    names = _follow_up_names(registry)
    dropped = {
        _dotted(path)
        for tool in registry
        if tool.views is not None
        for path in _paths(tool.views.full.schema)
        if path[-1] in names and not keeps_path(tool.views.mask, path)
    }
    for known in LEFT_IN_FULL:
        assert any(path.endswith(known) for path in dropped), known


def test_compact_events_keep_the_interaction_id_session_approve_takes() -> None:
    events = build_registry([]).get("compozy__session_events")
    assert events.views is not None
    payload = events.views.compact.schema["properties"]["events"]["items"]["properties"]
    kept = payload["payload"]["properties"]
    assert {"status", "stop_reason", "detail", "interaction_id", "options"} <= set(kept)
    assert kept["options"]["items"]["properties"].keys() == {"option_id"}
