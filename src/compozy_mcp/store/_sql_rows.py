"""The columns of the store's tables and the rows they map to, shared by both engines."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store.base import ApprovalGrantRow, HookRunRow, SessionRow, TranscriptTurn

SESSION_COLUMNS = (
    "seq, id, workspace_id, profile_id, parent_session_id, root_session_id, agent_name, state, "
    "archived_at, ttl_expires_at, created_at, updated_at, version, doc"
)

HOOK_RUN_COLUMNS = (
    "seq, hook_id, event, tool_id, tool_call_id, session_id, started_at, duration_ms, outcome, "
    "decision, patch_applied, detail, exit_code, stderr_tail, patch"
)
TURN_COLUMNS = ", ".join(f.name for f in fields(TranscriptTurn))
TURN_MARKS = ", ".join("?" * len(fields(TranscriptTurn)))
#: how often (in runs) the run log drops what it no longer keeps
PRUNE_EVERY = 100


def as_hook_run(row: Any) -> HookRunRow:
    values = dict(row)
    values["patch_applied"] = bool(values["patch_applied"])
    values["patch"] = jsonutil.loads(values["patch"]) if values["patch"] is not None else None
    return HookRunRow(**values)


GRANT_COLUMNS = (
    "id, workspace_id, agent_name, tool_id, input_digest, decision, profile_id, source, "
    "tool_input, created_at"
)
TOKEN_COLUMNS = (
    "token_hash, kind, tool_id, session_id, workspace_id, agent_name, input_digest, created_at, "
    "expires_at, used_at"
)


def as_grant(row: Any) -> ApprovalGrantRow:
    # "" stands for "any" in the key columns, so that UNIQUE treats it as a value
    return ApprovalGrantRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        agent_name=row["agent_name"] or None,
        tool_id=row["tool_id"],
        input_digest=row["input_digest"] or None,
        decision=row["decision"],
        profile_id=row["profile_id"],
        source=row["source"],
        created_at=row["created_at"],
        tool_input=jsonutil.loads(row["tool_input"]) if row["tool_input"] else None,
    )


def as_session(row: Any) -> SessionRow:
    return SessionRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        profile_id=row["profile_id"],
        parent_session_id=row["parent_session_id"],
        root_session_id=row["root_session_id"],
        agent_name=row["agent_name"],
        state=row["state"],
        archived_at=row["archived_at"],
        ttl_expires_at=row["ttl_expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        doc_json=row["doc"].encode() if isinstance(row["doc"], str) else bytes(row["doc"]),
        version=row["version"],
        seq=row["seq"],
    )
