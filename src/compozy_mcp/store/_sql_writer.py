"""Writing the store in SQL: one writer for both engines, inside the one transaction its
store opened (committed when the block ends, rolled back on any exception)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple

from compozy_mcp import jsonutil
from compozy_mcp.store._sql_heartbeats import SQLHeartbeatWriter
from compozy_mcp.store._sql_leases import SQLLeaseWriter
from compozy_mcp.store._sql_loops import SQLLoopWriter
from compozy_mcp.store._sql_reader import SQLReader
from compozy_mcp.store._sql_rows import (
    GRANT_COLUMNS,
    PRUNE_EVERY,
    TOKEN_COLUMNS,
    TURN_COLUMNS,
    TURN_MARKS,
    as_grant,
)
from compozy_mcp.store._sql_tasks import SQLTaskWriter
from compozy_mcp.store._sql_worktrees import SQLWorktreeWriter
from compozy_mcp.store.base import (
    HOOK_RUNS_KEPT,
    ApprovalGrantRow,
    ApprovalTokenRow,
    ArtifactRow,
    DeletedCounts,
    HookRow,
    HookRunRow,
    ProfileRow,
    SessionEventRow,
    SessionRow,
    StaleWrite,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
    chunks,
)

_TURN_UPDATES = ", ".join(f"{name} = excluded.{name}" for name in TURN_COLUMNS.split(", ")[2:])


class SQLWriter(
    SQLHeartbeatWriter,
    SQLLeaseWriter,
    SQLLoopWriter,
    SQLTaskWriter,
    SQLWorktreeWriter,
    SQLReader,
    StoreWriter,
):
    def insert_workspace(self, row: WorkspaceRow) -> None:
        self._conn.execute(
            "INSERT INTO workspaces (id, name, path, created_at, trusted_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (row.id, row.name, row.path, row.created_at, row.trusted_at),
        )

    def set_workspace_trust(self, workspace_id: str, trusted_at: str | None) -> bool:
        updated = self._conn.execute(
            "UPDATE workspaces SET trusted_at = ? WHERE id = ?", (trusted_at, workspace_id)
        ).rowcount
        return updated == 1

    def insert_profile(self, row: ProfileRow) -> None:
        self._conn.execute(
            "INSERT INTO profiles (id, name, color, icon, created_at) VALUES (?, ?, ?, ?, ?)",
            (row.id, row.name, row.color, row.icon, row.created_at),
        )

    def insert_session(self, row: SessionRow) -> SessionRow:
        inserted = self._conn.execute(
            "INSERT INTO sessions (id, workspace_id, profile_id, parent_session_id, "
            "root_session_id, agent_name, state, archived_at, ttl_expires_at, created_at, "
            "updated_at, version, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?) "
            "RETURNING seq",
            (
                row.id,
                row.workspace_id,
                row.profile_id,
                row.parent_session_id,
                row.root_session_id,
                row.agent_name,
                row.state,
                row.archived_at,
                row.ttl_expires_at,
                row.created_at,
                row.updated_at,
                row.doc_json.decode(),
            ),
        )
        row.seq = int(inserted.fetchone()["seq"])
        row.version = 1
        return row

    def update_session(self, row: SessionRow) -> SessionRow:
        cursor = self._conn.execute(
            "UPDATE sessions SET state = ?, archived_at = ?, ttl_expires_at = ?, updated_at = ?, "
            "version = version + 1, doc = ? WHERE id = ? AND version = ?",
            (
                row.state,
                row.archived_at,
                row.ttl_expires_at,
                row.updated_at,
                row.doc_json.decode(),
                row.id,
                row.version,
            ),
        )
        if cursor.rowcount != 1:
            raise StaleWrite(row.id)
        row.version += 1
        return row

    def append_turns(self, turns: Sequence[TranscriptTurn]) -> None:
        self._conn.executemany(
            f"INSERT INTO transcript_turns ({TURN_COLUMNS}) VALUES ({TURN_MARKS})",
            [astuple(t) for t in turns],
        )
        self.announce()  # a queued turn: its owner takes it

    def save_turn(self, turn: TranscriptTurn) -> None:
        self._conn.execute(
            f"INSERT INTO transcript_turns ({TURN_COLUMNS}) VALUES ({TURN_MARKS}) "
            f"ON CONFLICT (session_id, turn) DO UPDATE SET {_TURN_UPDATES}",
            astuple(turn),
        )

    def append_session_events(self, events: Sequence[SessionEventRow]) -> None:
        self._conn.executemany(
            "INSERT INTO session_events (session_id, turn_id, kind, at, payload) "
            "VALUES (?, ?, ?, ?, ?)",
            [(e.session_id, e.turn_id, e.kind, e.at, e.payload) for e in events],
        )
        self.announce()  # followers on every daemon read them

    def truncate_transcript(self, session_id: str, keep_turns: int) -> None:
        self._conn.execute(
            "DELETE FROM transcript_turns WHERE session_id = ? AND turn > ?",
            (session_id, keep_turns),
        )

    def put_artifact(self, row: ArtifactRow, data: bytes, *, owner: str) -> None:
        self._conn.execute(
            "INSERT INTO artifacts (uri, sha256, mime_type, bytes, tool_id, created_at, "
            "meta, data, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (uri) DO UPDATE SET expires_at = CASE "
            "WHEN artifacts.expires_at IS NULL OR excluded.expires_at IS NULL THEN NULL "
            "WHEN excluded.expires_at > artifacts.expires_at THEN excluded.expires_at "
            "ELSE artifacts.expires_at END",
            (
                row.uri,
                row.sha256,
                row.mime_type,
                row.bytes,
                row.tool_id,
                row.created_at,
                jsonutil.dumps_text(row.meta),
                data,
                row.expires_at,
            ),
        )
        self._conn.execute(
            "INSERT INTO artifact_refs (uri, owner) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (row.uri, owner),
        )

    def delete_expired_artifacts(self, now: str) -> int:
        cursor = self._conn.execute("DELETE FROM artifacts WHERE expires_at <= ?", (now,))
        return cursor.rowcount

    def delete_sessions(self, session_ids: Sequence[str]) -> DeletedCounts:
        turns = artifacts = sessions = 0
        for part in chunks(list(session_ids)):
            marks = ",".join("?" * len(part))
            turns += self._conn.execute(
                f"DELETE FROM transcript_turns WHERE session_id IN ({marks})", part
            ).rowcount
            self._conn.execute(f"DELETE FROM session_events WHERE session_id IN ({marks})", part)
            # hook runs carry a call's stderr and patches: they go with the session
            self._conn.execute(f"DELETE FROM hook_runs WHERE session_id IN ({marks})", part)
            # and so do its approval tokens, answers and permission mode (grants stay: they
            # are the workspace's and the agent's, not one session's)
            self._conn.execute(f"DELETE FROM approval_tokens WHERE session_id IN ({marks})", part)
            self._conn.execute(f"DELETE FROM approval_modes WHERE session_id IN ({marks})", part)
            # a worktree's directory is removed before (its branch stays in the repository)
            self._conn.execute(f"DELETE FROM worktrees WHERE session_id IN ({marks})", part)
            # a heartbeat wakes its session: none is left to wake (task runs stay: the tasks'
            # history; an active one's claim expires)
            self._conn.execute(f"DELETE FROM heartbeats WHERE session_id IN ({marks})", part)
            orphans = [
                row["uri"]
                for row in self._conn.execute(
                    f"SELECT DISTINCT uri FROM artifact_refs WHERE owner IN ({marks})", part
                )
            ]
            self._conn.execute(f"DELETE FROM artifact_refs WHERE owner IN ({marks})", part)
            for uris in chunks(orphans):
                holes = ",".join("?" * len(uris))
                artifacts += self._conn.execute(
                    f"DELETE FROM artifacts WHERE uri IN ({holes}) "
                    "AND uri NOT IN (SELECT uri FROM artifact_refs)",
                    uris,
                ).rowcount
            sessions += self._conn.execute(
                f"DELETE FROM sessions WHERE id IN ({marks})", part
            ).rowcount
        return DeletedCounts(sessions, turns, artifacts)

    def put_hook(self, row: HookRow) -> None:
        self._conn.execute(
            "INSERT INTO hooks (id, doc, created_at, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
            (row.id, jsonutil.dumps(row.definition).decode(), row.created_at, row.updated_at),
        )

    def delete_hook(self, hook_id: str) -> bool:
        deleted = self._conn.execute("DELETE FROM hooks WHERE id = ?", (hook_id,)).rowcount
        self._conn.execute("DELETE FROM hook_stats WHERE hook_id = ?", (hook_id,))
        return deleted == 1

    def put_approval_grant(self, row: ApprovalGrantRow) -> ApprovalGrantRow:
        stored = self._one(
            f"INSERT INTO approval_grants ({GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (workspace_id, agent_name, tool_id, input_digest) DO UPDATE SET "
            "decision = excluded.decision, profile_id = excluded.profile_id, "
            "source = excluded.source, tool_input = excluded.tool_input, "
            f"created_at = excluded.created_at RETURNING {GRANT_COLUMNS}",
            (
                row.id,
                row.workspace_id,
                row.agent_name or "",
                row.tool_id,
                row.input_digest or "",
                row.decision,
                row.profile_id,
                row.source,
                jsonutil.dumps(row.tool_input).decode() if row.tool_input is not None else None,
                row.created_at,
            ),
        )
        assert stored is not None
        return as_grant(stored)

    def delete_approval_grant(self, grant_id: str) -> bool:
        cursor = self._conn.execute("DELETE FROM approval_grants WHERE id = ?", (grant_id,))
        return cursor.rowcount == 1

    def put_approval_token(self, row: ApprovalTokenRow) -> None:
        self._conn.execute(
            f"INSERT INTO approval_tokens ({TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.token_hash,
                row.kind,
                row.tool_id,
                row.session_id,
                row.workspace_id,
                row.agent_name,
                row.input_digest,
                row.created_at,
                row.expires_at,
                row.used_at,
            ),
        )

    def use_approval_token(self, token_hash: str, now: str) -> bool:
        cursor = self._conn.execute(
            "UPDATE approval_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
            (now, token_hash),
        )
        return cursor.rowcount == 1

    def take_approval_pass(
        self, session_id: str, tool_id: str, input_digest: str, now: str
    ) -> ApprovalTokenRow | None:
        while True:
            row = self._one(
                f"SELECT {TOKEN_COLUMNS} FROM approval_tokens WHERE session_id = ? "
                "AND tool_id = ? AND input_digest = ? AND kind != 'token' AND used_at IS NULL "
                "AND expires_at > ? ORDER BY created_at, rowid LIMIT 1",
                (session_id, tool_id, input_digest, now),
            )
            if row is None:
                return None
            # another daemon's writer may take it between the two statements (PostgreSQL
            # runs writers side by side): the next one is tried, so each answer counts once
            if self.use_approval_token(row["token_hash"], now):
                return ApprovalTokenRow(**{**dict(row), "used_at": now})

    def set_approval_mode(self, session_id: str, mode: str | None, now: str) -> None:
        if mode is None:
            self._conn.execute("DELETE FROM approval_modes WHERE session_id = ?", (session_id,))
            return
        self._conn.execute(
            "INSERT INTO approval_modes (session_id, mode, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET mode = excluded.mode, "
            "updated_at = excluded.updated_at",
            (session_id, mode, now),
        )

    def delete_expired_approval_tokens(self, now: str) -> int:
        cursor = self._conn.execute("DELETE FROM approval_tokens WHERE expires_at <= ?", (now,))
        return cursor.rowcount

    def add_hook_run(self, row: HookRunRow, *, failed: bool) -> None:
        inserted = self._conn.execute(
            "INSERT INTO hook_runs (hook_id, event, tool_id, tool_call_id, session_id, "
            "started_at, duration_ms, outcome, decision, patch_applied, detail, exit_code, "
            "stderr_tail, patch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                row.hook_id,
                row.event,
                row.tool_id,
                row.tool_call_id,
                row.session_id,
                row.started_at,
                row.duration_ms,
                row.outcome,
                row.decision,
                int(row.patch_applied),
                row.detail,
                row.exit_code,
                row.stderr_tail,
                jsonutil.dumps(row.patch).decode() if row.patch is not None else None,
            ),
        )
        self._conn.execute(
            "INSERT INTO hook_stats (hook_id, runs, failed, last_outcome, last_run_at) "
            "VALUES (?, 1, ?, ?, ?) ON CONFLICT (hook_id) DO UPDATE SET "
            "runs = hook_stats.runs + 1, failed = hook_stats.failed + excluded.failed, "
            "last_outcome = excluded.last_outcome, last_run_at = excluded.last_run_at",
            (row.hook_id, int(failed), row.outcome, row.started_at),
        )
        seq = int(inserted.fetchone()["seq"])
        if seq % PRUNE_EVERY == 0:
            self._conn.execute("DELETE FROM hook_runs WHERE seq <= ?", (seq - HOOK_RUNS_KEPT,))
