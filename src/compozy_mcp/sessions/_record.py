"""The complete session record (the ``full`` view), built from stored state.

Omission rules, the same in every view (spec, "Session record tools"):

- optional fields appear only when set;
- ``pending_interactions`` is always a list and ``pull_request`` is always present (null when
  none); ``runtime.selection_revision`` is always present;
- ``transcript_epoch`` and ``runtime.generation`` are omitted while they are 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from compozy_mcp.sessions.model import (
    AvailableCommand,
    Diagnostic,
    Interaction,
    Lineage,
    RuntimeState,
    Selection,
    SessionState,
)
from compozy_mcp.store.base import ChildSummary, ProfileRow, WorkspaceRow
from compozy_mcp.store.worktrees import WorktreeRow


@dataclass(frozen=True, slots=True)
class RecordContext:
    """What a record needs besides the session's own state."""

    profile: ProfileRow | None
    workspace: WorkspaceRow | None
    children: Sequence[ChildSummary] = ()
    #: the worktree ``worktree_id`` names (active, removed or missing)
    worktree: WorktreeRow | None = None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def selection_record(selection: Selection) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": selection.provider}
    _put(out, "model", selection.model)
    _put(out, "reasoning_effort", selection.reasoning_effort)
    return out


def _runtime(runtime: RuntimeState) -> dict[str, Any]:
    out: dict[str, Any] = {"status": runtime.status}
    _put(out, "transition", runtime.transition)
    if runtime.failure is not None:
        out["failure"] = runtime.failure.model_dump(exclude_none=True)
    if runtime.generation:
        out["generation"] = runtime.generation
    out["selection_revision"] = runtime.selection_revision
    if runtime.selected is not None:
        out["selected"] = selection_record(runtime.selected)
    if runtime.effective is not None:
        out["effective"] = selection_record(runtime.effective)
    _put(out, "acp_session_id", runtime.acp_session_id)
    if runtime.acp_caps is not None:
        out["acp_caps"] = runtime.acp_caps.model_dump()
    return out


def _lineage(lineage: Lineage) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": lineage.kind}
    _put(out, "parent_session_id", lineage.parent_session_id)
    out["root_session_id"] = lineage.root_session_id
    out["spawn_depth"] = lineage.spawn_depth
    _put(out, "spawn_role", lineage.spawn_role)
    _put(out, "ttl_expires_at", lineage.ttl_expires_at)
    out["spawn_budget"] = lineage.spawn_budget.model_dump()
    out["permission_policy"] = lineage.permission_policy.model_dump()
    out["auto_stop_on_parent"] = lineage.auto_stop_on_parent
    out["notify_creator"] = lineage.notify_creator
    return out


def _interaction(session_id: str, item: Interaction) -> dict[str, Any]:
    out: dict[str, Any] = {
        "session_id": session_id,
        "interaction_id": item.interaction_id,
        "kind": item.kind,
        "provider_request_id": item.provider_request_id,
    }
    _put(out, "turn_id", item.turn_id)
    _put(out, "title", item.title)
    _put(out, "choices", item.choices)
    _put(out, "decisions", item.decisions)
    _put(out, "tool_id", item.tool_id)
    _put(out, "tool_input", item.tool_input)
    _put(out, "input_digest", item.input_digest)
    out["status"] = item.status
    out["created_at"] = item.created_at
    return out


#: interactions that ask for an authorization (the badge says ``waiting-for-auth``)
AUTH_KINDS = ("permission", "approval")

#: dumps whole lists in pydantic-core (a bound runtime advertises tens of commands)
_COMMANDS = TypeAdapter(list[AvailableCommand])
_DIAGNOSTICS = TypeAdapter(list[Diagnostic])


def is_failed(state: SessionState) -> bool:
    return state.failure is not None or state.runtime.status == "failed"


#: runtime statuses in which the session's agent is at work (a turn runs, or it starts)
_AT_WORK = ("running", "binding", "reconfiguring", "recovering")


def _hand_off(worktree: WorktreeRow | None) -> tuple[str, str] | None:
    """``review`` while the session's worktree holds changes not merged yet (as the last turn
    left them), ``done`` once they are merged."""
    if worktree is None or worktree.state == "missing":
        return None
    if worktree.changed_files:
        return "review", "review"
    if worktree.merged_at is not None:
        return "merged", "done"
    return None


def badge_and_column(state: SessionState, worktree: WorktreeRow | None = None) -> tuple[str, str]:
    """The board badge and column, derived from state in a fixed order of precedence."""
    if state.archived_at is not None:
        return "archived", "done"
    if is_failed(state):
        return "failed", "needs_you"
    if state.state == "stopped":
        return "stopped", "done"
    if state.pending_interactions:
        kind = state.pending_interactions[0].kind
        waiting = "waiting-for-auth" if kind in AUTH_KINDS else "waiting-for-input"
        return waiting, "needs_you"
    if state.later is not None:
        return "later", "later"
    status = state.runtime.status
    if status not in _AT_WORK:
        hand_off = _hand_off(worktree)
        if hand_off is not None:
            return hand_off
    if status == "running":  # a turn runs
        return "running", "working"
    if status == "ready":  # bound, between turns: among the sessions at work, idle
        return "idle", "working"
    if status in ("binding", "reconfiguring", "recovering"):
        return "starting", "working"
    return "idle", "backlog"


def _attention(state: SessionState) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """``attention``, ``waiting_on`` and whether the operator may dismiss the attention."""
    if state.archived_at is not None:
        return None, None, False
    if state.pending_interactions:
        first = state.pending_interactions[0]
        attention = {
            "kind": "interaction",
            "reason": first.title or f"{first.kind} requested",
            "since": first.created_at,
        }
        waiting = {
            "kind": "interaction",
            "interaction_id": first.interaction_id,
            "interaction_kind": first.kind,
        }
        return attention, waiting, False
    failure = state.failure or state.runtime.failure
    if failure is not None:
        return {"kind": "failure", "reason": failure.summary, "since": state.updated_at}, None, True
    return None, None, False


def _children(children: Sequence[ChildSummary]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    items: list[dict[str, Any]] = []
    summary = {"total": 0, "active": 0, "stopped": 0, "failed": 0}
    for child in children:
        item: dict[str, Any] = {
            "session_id": child.session_id,
            "kind": child.kind,
            "agent_name": child.agent_name,
        }
        _put(item, "name", child.name)
        item["state"] = child.state
        _put(item, "spawn_role", child.spawn_role)
        items.append(item)
        if child.kind == "spawn":
            summary["total"] += 1
            if child.failed:
                summary["failed"] += 1
            elif child.state == "stopped":
                summary["stopped"] += 1
            else:
                summary["active"] += 1
    return items, summary


def session_directory(row: WorktreeRow) -> str:
    """Where the session's agent works: the workspace's place inside the worktree."""
    return str(Path(row.path) / row.prefix) if row.prefix else row.path


def worktree_summary(row: WorktreeRow) -> dict[str, Any]:
    """A session's worktree in its record (full view): where it is and what it holds."""
    out: dict[str, Any] = {
        "path": row.path,
        "directory": session_directory(row),
        "state": row.state,
        "base": {"commit": row.base_commit},
    }
    if row.base_ref is not None:
        out["base"]["ref"] = row.base_ref
    if row.changes_checked_at is not None:
        out["changes"] = {
            "files": row.changed_files or 0,
            "added": row.lines_added or 0,
            "removed": row.lines_removed or 0,
            "checked_at": row.changes_checked_at,
        }
    if row.merged_at is not None:
        out["merged"] = {"into": row.merged_into, "commit": row.merge_commit, "at": row.merged_at}
    return out


def session_record(state: SessionState, context: RecordContext) -> dict[str, Any]:
    """The full session record, fields in the order a reader expects them."""
    profile, workspace = context.profile, context.workspace
    out: dict[str, Any] = {"id": state.id}
    _put(out, "name", state.name)
    out["agent_name"] = state.agent_name
    out["profile_id"] = state.profile_id
    if profile is not None:
        out["profile_name"] = profile.name
        _put(out, "profile_color", profile.color)
        _put(out, "profile_icon", profile.icon)
    out["type"] = state.type
    out["workspace_id"] = state.workspace_id
    if workspace is not None:
        out["workspace_path"] = workspace.path
    _put(out, "worktree_id", state.worktree_id)
    _put(out, "branch", state.branch)
    if context.worktree is not None:
        out["worktree"] = worktree_summary(context.worktree)
    out["state"] = state.state
    out["badge"], out["board_column"] = badge_and_column(state, context.worktree)
    attention, waiting_on, dismissible = _attention(state)
    if attention is not None:
        out["attention"] = attention
        out["attention_dismissible"] = dismissible
    _put(out, "waiting_on", waiting_on)
    out["runtime"] = _runtime(state.runtime)
    if state.transcript_epoch:
        out["transcript_epoch"] = state.transcript_epoch
    out["lineage"] = _lineage(state.lineage)
    out["pending_interactions"] = [_interaction(state.id, i) for i in state.pending_interactions]
    out["supervision"] = state.supervision.model_dump(exclude_none=True)
    out["available_commands"] = _COMMANDS.dump_python(state.available_commands, exclude_none=True)
    out["diagnostics"] = _DIAGNOSTICS.dump_python(state.diagnostics)
    _put(out, "stop_reason", state.stop_reason)
    _put(out, "stop_detail", state.stop_detail)
    _put(out, "stop_cause", state.stop_cause)
    if state.failure is not None:
        out["failure"] = state.failure.model_dump(exclude_none=True)
    if state.permission_mode_degraded:
        out["permission_mode_degraded"] = True
    out["pull_request"] = (
        state.pull_request.model_dump(exclude_none=True) if state.pull_request else None
    )
    if state.queue:
        first = state.queue[0]
        out["queue"] = {
            "pending": len(state.queue),
            "next": {
                "prompt_id": first.prompt_id,
                "preview": first.preview,
                "queued_at": first.queued_at,
            },
        }
    if context.children:
        out["children"], out["subagent_summary"] = _children(context.children)
    if state.later is not None:
        out["later"] = state.later.model_dump(exclude_none=True)
    out["archived_at"] = state.archived_at
    out["created_at"] = state.created_at
    out["updated_at"] = state.updated_at
    return out
