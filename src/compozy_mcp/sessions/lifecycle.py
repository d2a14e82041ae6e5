"""A session's life: create, read, list, archive, unarchive, rename and stop.

Writes are synchronous, one store transaction each (run them off the event loop); reads are
bodies over a reader that :class:`~compozy_mcp.sessions.service.Sessions` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import ResourceNotFound, ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions._workspaces import DEFAULT_PROFILE, DEFAULT_WORKSPACE_ID
from compozy_mcp.sessions.ledger import Record, SessionLedger, new_id, session_row
from compozy_mcp.sessions.model import (
    Lineage,
    PermissionPolicy,
    Selection,
    SessionState,
    SpawnBudget,
    Supervision,
)
from compozy_mcp.store.base import (
    DeletedCounts,
    SessionQuery,
    SessionRow,
    StoreReader,
    StoreWriter,
)
from compozy_mcp.store.worktrees import WorktreeRow

#: the spawn budget of a root session; a child inherits its parent's limits
ROOT_SPAWN_BUDGET = SpawnBudget(max_children=16, max_depth=3, ttl_seconds=86_400)
ROOT_TOOLS = ["*"]
SESSION_CURSOR = "s"


@dataclass(frozen=True, slots=True)
class SessionPage:
    records: list[Record]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """What ``compozy__session_list`` narrows a listing by."""

    workspace_id: str | None = None
    state: str | None = None
    archived: bool = False
    parent_session_id: str | None = None
    agent_name: str | None = None
    limit: int = 50
    cursor: str | None = None


class Lifecycle:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    # --- reads ---------------------------------------------------------------------------

    def status(self, reader: StoreReader, call: CallInfo, session_id: str) -> Record:
        return self._ledger.read_record(reader, call, session_id)

    def query(self, call: CallInfo, filters: SessionFilter) -> SessionQuery:
        """The store query of a listing; checks the cursor before any store work."""
        cursor = filters.cursor
        before = decode_cursor(call.tool_id, SESSION_CURSOR, cursor) if cursor else None
        return SessionQuery(
            workspace_id=filters.workspace_id,
            state=filters.state,
            archived=filters.archived,
            parent_session_id=filters.parent_session_id,
            agent_name=filters.agent_name,
            before_seq=before,
            limit=filters.limit + 1,
        )

    def page(self, reader: StoreReader, query: SessionQuery) -> SessionPage:
        limit = query.limit - 1
        rows = reader.sessions(query)
        more = len(rows) > limit
        rows = rows[:limit]
        records = self._ledger.read_records(reader, rows)
        return SessionPage(records, encode_cursor(SESSION_CURSOR, rows[-1].seq) if more else None)

    # --- writes --------------------------------------------------------------------------

    def create(
        self,
        call: CallInfo,
        *,
        agent_name: str,
        selection: Selection | None,
        session_id: str | None = None,
        name: str | None = None,
        workspace_id: str | None = None,
        profile_id: str | None = None,
        session_type: Literal["user", "automation"] = "user",
        branch: str | None = None,
        worktree: WorktreeRow | None = None,
    ) -> Record:
        """Create a root session; ``worktree`` (made for ``session_id`` beforehand) is
        recorded with it."""
        now = self._ledger.now()
        with self._ledger.store.write() as writer:
            workspace = writer.workspace(workspace_id or DEFAULT_WORKSPACE_ID)
            if workspace is None:
                raise ResourceNotFound(
                    call.tool_id, "workspace", workspace_id or DEFAULT_WORKSPACE_ID
                )
            profile = writer.profile(profile_id or DEFAULT_PROFILE.id)
            if profile is None:
                raise ResourceNotFound(call.tool_id, "profile", profile_id or DEFAULT_PROFILE.id)
            ident = session_id or new_id("sess")
            if writer.session(ident) is not None:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{ident}" already exists',
                    reason=Reason.SESSION_EXISTS,
                )
            state = SessionState(
                id=ident,
                name=name,
                agent_name=agent_name,
                profile_id=profile.id,
                workspace_id=workspace.id,
                type=session_type,
                branch=branch,
                lineage=Lineage(
                    kind="root",
                    root_session_id=ident,
                    spawn_budget=ROOT_SPAWN_BUDGET,
                    permission_policy=PermissionPolicy(
                        tools=list(ROOT_TOOLS),
                        skills=["*"],
                        mcp_servers=["*"],
                        workspace_paths=[workspace.path],
                    ),
                ),
                supervision=Supervision(mode="operator"),
                created_at=now,
                updated_at=now,
            )
            if selection is not None:
                state.runtime.selected = selection
                state.runtime.selection_revision = 1
            if worktree is not None:
                self._ledger.attach_worktree(writer, call, state, worktree)
            writer.insert_session(session_row(state))
            return self._ledger.record(writer, state)

    def archive(self, call: CallInfo, session_id: str) -> Record:
        now = self._ledger.now()

        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.archived_at is not None:
                return False
            state.archived_at = now
            return True

        return self._ledger.mutate(call, session_id, change)

    def unarchive(self, call: CallInfo, session_id: str) -> Record:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.archived_at is None:
                return False
            state.archived_at = None
            return True

        return self._ledger.mutate(call, session_id, change)

    def rename(self, call: CallInfo, session_id: str, name: str) -> Record:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.name == name:
                return False
            state.name = name
            return True

        return self._ledger.mutate(call, session_id, change)

    def delete(self, call: CallInfo, session_id: str) -> tuple[list[str], DeletedCounts]:
        """Delete an archived session and every descendant, with their transcripts and the
        artifacts only they stored; returns the ids deleted and what went with them."""
        with self._ledger.store.write() as writer:
            _, state = self._ledger.load(writer, call, session_id)
            if state.archived_at is None:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{session_id}" is not archived; archive it before deleting it',
                    reason=Reason.SESSION_NOT_ARCHIVED,
                )
            ids = writer.subtree(session_id)
            return ids, writer.delete_sessions(ids)

    def stop(self, call: CallInfo, session_id: str, reason: str | None = None) -> Record:
        ledger = self._ledger
        with ledger.store.write() as writer:
            ledger.stop_expired(writer)
            row, state = ledger.load(writer, call, session_id)
            if state.state != "stopped":
                ledger.stop(
                    writer,
                    row,
                    state,
                    cause="operator",
                    reason=Reason.STOPPED_BY_OPERATOR,
                    detail=reason,
                )
            return ledger.record(writer, state)
