"""Rows the store's tests write: workspaces, a profile, sessions."""

from __future__ import annotations

from compozy_mcp import jsonutil
from compozy_mcp.store import StoreWriter
from compozy_mcp.store.base import ProfileRow, SessionRow, WorkspaceRow

NOW = "2026-11-10T14:02:11Z"


def workspace(workspace_id: str) -> WorkspaceRow:
    return WorkspaceRow(
        id=workspace_id, name=workspace_id, path=f"/w/{workspace_id}", created_at=NOW
    )


def seed(writer: StoreWriter) -> None:
    """The rows a session's foreign keys point at: two workspaces and one profile."""
    writer.insert_workspace(workspace("ws_a"))
    writer.insert_workspace(workspace("ws_b"))
    writer.insert_profile(ProfileRow(id="prof", name="P", color=None, icon=None, created_at=NOW))


def session(
    session_id: str,
    *,
    workspace_id: str = "ws_a",
    state: str = "active",
    archived: bool = False,
    parent: str | None = None,
    agent: str = "general",
) -> SessionRow:
    return SessionRow(
        id=session_id,
        workspace_id=workspace_id,
        profile_id="prof",
        parent_session_id=parent,
        root_session_id=parent or session_id,
        agent_name=agent,
        state=state,
        archived_at=NOW if archived else None,
        ttl_expires_at=None,
        created_at=NOW,
        updated_at=NOW,
        doc_json=jsonutil.dumps({"id": session_id, "note": "minimal"}),
    )
