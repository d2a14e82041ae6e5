"""The calling session's context in a hook payload (upstream §6): who makes the call."""

from __future__ import annotations

from typing import Any

from compozy_mcp.hooks._events import Caller
from compozy_mcp.sessions.model import SessionState
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import WorkspaceRow


def caller_context(
    state: SessionState, workspace: WorkspaceRow | None, directory: str | None = None
) -> dict[str, Any]:
    """``session_id, session_name?, session_type, agent_name, workspace_id, workspace?,
    directory?, state, parent_session_id?, created_at, updated_at``; ``workspace`` is the
    workspace's directory, ``directory`` the session's own when it works in a worktree."""
    out: dict[str, Any] = {"session_id": state.id}
    if state.name is not None:
        out["session_name"] = state.name
    out["session_type"] = state.type
    out["agent_name"] = state.agent_name
    out["workspace_id"] = state.workspace_id
    if workspace is not None:
        out["workspace"] = workspace.path
    if directory is not None:
        out["directory"] = directory
    out["state"] = state.state
    if state.lineage.parent_session_id is not None:
        out["parent_session_id"] = state.lineage.parent_session_id
    out["created_at"] = state.created_at
    out["updated_at"] = state.updated_at
    return out


def read_caller(sessions: Sessions, session_id: str | None) -> Caller | None:
    """The caller of a call made as ``session_id`` (``None``: the operator, or a session that
    no longer exists, which dispatch refuses before any hook runs)."""
    if session_id is None:
        return None
    found = sessions.caller(session_id)
    if found is None:
        return None
    state, workspace = found
    directory = sessions.directory(session_id) if state.worktree_id else None
    return Caller(
        session_id=state.id,
        agent_name=state.agent_name,
        session_type=state.type,
        workspace_id=state.workspace_id,
        workspace_name=workspace.name if workspace is not None else None,
        workspace_path=workspace.path if workspace is not None else None,
        context=caller_context(state, workspace, directory),
    )
