"""Reading the store in SQL: one reader for both engines, in a transaction its store opened
(a consistent snapshot)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store._sql_heartbeats import SQLHeartbeatReader
from compozy_mcp.store._sql_leases import SQLLeaseReader
from compozy_mcp.store._sql_loops import SQLLoopReader
from compozy_mcp.store._sql_rows import (
    GRANT_COLUMNS,
    HOOK_RUN_COLUMNS,
    SESSION_COLUMNS,
    TOKEN_COLUMNS,
    TURN_COLUMNS,
    as_grant,
    as_hook_run,
    as_session,
)
from compozy_mcp.store._sql_tasks import SQLTaskReader
from compozy_mcp.store._sql_worktrees import SQLWorktreeReader
from compozy_mcp.store.base import (
    ApprovalGrantRow,
    ApprovalTokenRow,
    ArtifactRow,
    ChildSummary,
    HookRow,
    HookRunQuery,
    HookRunRow,
    HookStatsRow,
    ProfileRow,
    SessionEventRow,
    SessionQuery,
    SessionRow,
    StoreReader,
    TranscriptTurn,
    WorkspaceRow,
    chunks,
)
from compozy_mcp.store.sql import Dialect, SQLConnection


class SQLReader(
    SQLHeartbeatReader,
    SQLLeaseReader,
    SQLLoopReader,
    SQLTaskReader,
    SQLWorktreeReader,
    StoreReader,
):
    def __init__(self, conn: SQLConnection, dialect: Dialect) -> None:
        self._conn = conn
        self._dialect = dialect

    def _one(self, sql: str, params: Sequence[Any]) -> Any | None:
        row: Any | None = self._conn.execute(sql, params).fetchone()
        return row

    def workspace(self, workspace_id: str) -> WorkspaceRow | None:
        row = self._one(
            "SELECT id, name, path, created_at, trusted_at FROM workspaces WHERE id = ?",
            (workspace_id,),
        )
        return WorkspaceRow(**dict(row)) if row else None

    def workspaces(self) -> list[WorkspaceRow]:
        # rowid: insertion order among rows created in the same second
        rows = self._conn.execute(
            "SELECT id, name, path, created_at, trusted_at FROM workspaces "
            "ORDER BY created_at, rowid"
        )
        return [WorkspaceRow(**dict(row)) for row in rows]

    def profile(self, profile_id: str) -> ProfileRow | None:
        row = self._one(
            "SELECT id, name, color, icon, created_at FROM profiles WHERE id = ?", (profile_id,)
        )
        return ProfileRow(**dict(row)) if row else None

    def all_profiles(self) -> list[ProfileRow]:
        rows = self._conn.execute(
            "SELECT id, name, color, icon, created_at FROM profiles ORDER BY created_at, rowid"
        )
        return [ProfileRow(**dict(row)) for row in rows]

    def session(self, session_id: str) -> SessionRow | None:
        row = self._one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return as_session(row) if row else None

    def sessions(self, query: SessionQuery) -> list[SessionRow]:
        # a literal, as the index on (archived_at IS NOT NULL) is written
        where = [f"(archived_at IS NOT NULL) = {'TRUE' if query.archived else 'FALSE'}"]
        params: list[Any] = []
        for column, value in (
            ("workspace_id", query.workspace_id),
            ("state", query.state),
            ("parent_session_id", query.parent_session_id),
            ("agent_name", query.agent_name),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if query.before_seq is not None:
            where.append("seq < ?")
            params.append(query.before_seq)
        prefix = ""
        if query.subtree_of is not None:
            prefix = (
                "WITH RECURSIVE tree(id) AS (SELECT id FROM sessions WHERE id = ? "
                "UNION SELECT s.id FROM sessions s "
                "JOIN tree ON s.parent_session_id = tree.id) "
            )
            params.insert(0, query.subtree_of)
            where.append("id IN (SELECT id FROM tree)")
        params.append(query.limit)
        sql = (
            f"{prefix}SELECT {SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)} "
            "ORDER BY seq DESC LIMIT ?"
        )
        return [as_session(row) for row in self._conn.execute(sql, params)]

    def children(self, parent_ids: Sequence[str]) -> list[SessionRow]:
        found: list[SessionRow] = []
        for part in chunks(list(parent_ids)):
            marks = ",".join("?" * len(part))
            found.extend(
                as_session(row)
                for row in self._conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions "
                    f"WHERE parent_session_id IN ({marks}) ORDER BY seq",
                    part,
                )
            )
        return found

    def child_summaries(self, parent_ids: Sequence[str]) -> list[ChildSummary]:
        found: list[ChildSummary] = []
        for part in chunks(list(parent_ids)):
            marks = ",".join("?" * len(part))
            # The document is stored without defaults: an absent runtime status is "unbound".
            field = self._dialect.json_text
            rows = self._conn.execute(
                "SELECT id, parent_session_id, agent_name, state, "
                f"{field('doc', 'lineage', 'kind')} AS kind, "
                f"{field('doc', 'name')} AS name, "
                f"{field('doc', 'lineage', 'spawn_role')} AS spawn_role, "
                f"({field('doc', 'failure')} IS NOT NULL "
                f" OR {field('doc', 'runtime', 'status')} = 'failed') AS failed "
                f"FROM sessions WHERE parent_session_id IN ({marks}) ORDER BY seq",
                part,
            )
            found.extend(
                ChildSummary(
                    session_id=row["id"],
                    parent_session_id=row["parent_session_id"],
                    kind=row["kind"],
                    agent_name=row["agent_name"],
                    name=row["name"],
                    state=row["state"],
                    spawn_role=row["spawn_role"],
                    failed=bool(row["failed"]),
                )
                for row in rows
            )
        return found

    def expired_sessions(self, now: str) -> list[SessionRow]:
        rows = self._conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions "
            "WHERE ttl_expires_at IS NOT NULL AND ttl_expires_at <= ? AND state != 'stopped' "
            "ORDER BY seq",
            (now,),
        )
        return [as_session(row) for row in rows]

    def live_runtime_sessions(self) -> list[str]:
        found = []
        for row in self._conn.execute("SELECT id, doc FROM sessions WHERE state != 'stopped'"):
            runtime = jsonutil.loads(row["doc"]).get("runtime") or {}
            if runtime.get("status") in ("binding", "ready", "running"):
                found.append(row["id"])
        return found

    def any_expired(self, now: str) -> bool:
        row = self._one(
            "SELECT 1 FROM sessions WHERE ttl_expires_at IS NOT NULL AND ttl_expires_at <= ? "
            "AND state != 'stopped' LIMIT 1",
            (now,),
        )
        return row is not None

    def earliest_expiry(self) -> str | None:
        row = self._one(
            "SELECT ttl_expires_at AS earliest FROM sessions WHERE ttl_expires_at IS NOT NULL "
            "AND state != 'stopped' ORDER BY ttl_expires_at LIMIT 1",
            (),
        )
        return None if row is None else str(row["earliest"])

    def ancestry(self, session_id: str) -> list[str]:
        rows = self._conn.execute(
            "WITH RECURSIVE up(id, parent, depth) AS ("
            " SELECT id, parent_session_id, 0 FROM sessions WHERE id = ?"
            " UNION ALL SELECT s.id, s.parent_session_id, up.depth + 1 FROM sessions s"
            " JOIN up ON s.id = up.parent WHERE up.depth < 64"
            ") SELECT id FROM up ORDER BY depth",
            (session_id,),
        )
        return [row["id"] for row in rows]

    def transcript(
        self, session_id: str, *, after_turn: int = 0, limit: int | None = None
    ) -> list[TranscriptTurn]:
        sql = (
            f"SELECT {TURN_COLUMNS} FROM transcript_turns "
            "WHERE session_id = ? AND turn > ? ORDER BY turn"
        )
        params: tuple[Any, ...] = (session_id, after_turn)
        if limit is not None:
            sql, params = f"{sql} LIMIT ?", (*params, limit)
        rows = self._conn.execute(sql, params)
        return [TranscriptTurn(**dict(row)) for row in rows]

    def turn(self, session_id: str, turn_id: str) -> TranscriptTurn | None:
        row = self._one(
            f"SELECT {TURN_COLUMNS} FROM transcript_turns WHERE session_id = ? AND turn_id = ?",
            (session_id, turn_id),
        )
        return None if row is None else TranscriptTurn(**dict(row))

    def session_events(
        self, session_id: str, *, after_seq: int = 0, limit: int = 100
    ) -> list[SessionEventRow]:
        rows = self._conn.execute(
            "SELECT seq, session_id, turn_id, kind, at, payload FROM session_events "
            "WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after_seq, limit),
        )
        return [SessionEventRow(**dict(row)) for row in rows]

    def artifact(self, uri: str) -> ArtifactRow | None:
        row = self._one(
            "SELECT uri, sha256, mime_type, bytes, tool_id, created_at, meta, expires_at "
            "FROM artifacts WHERE uri = ?",
            (uri,),
        )
        if row is None:
            return None
        fields = dict(row)
        fields["meta"] = jsonutil.loads(fields["meta"])
        return ArtifactRow(**fields)

    def artifact_bytes(self, uri: str, offset: int, limit: int) -> bytes:
        # substr() on a BLOB (BYTEA) counts bytes and is 1-based.
        row = self._one(
            "SELECT substr(data, CAST(? AS INTEGER), CAST(? AS INTEGER)) AS part "
            "FROM artifacts WHERE uri = ?",
            (offset + 1, limit, uri),
        )
        return bytes(row["part"]) if row and row["part"] is not None else b""

    def artifact_owners(self, uri: str) -> list[str]:
        rows = self._conn.execute("SELECT owner FROM artifact_refs WHERE uri = ?", (uri,))
        return [row["owner"] for row in rows]

    def subtree(self, session_id: str) -> list[str]:
        rows = self._conn.execute(
            "WITH RECURSIVE tree(id, depth) AS (SELECT id, 0 FROM sessions WHERE id = ? "
            "UNION ALL SELECT s.id, tree.depth + 1 FROM sessions s "
            "JOIN tree ON s.parent_session_id = tree.id WHERE tree.depth < 64) "
            "SELECT id FROM tree ORDER BY depth",
            (session_id,),
        )
        return [row["id"] for row in rows]

    def hooks(self) -> list[HookRow]:
        rows = self._conn.execute(
            "SELECT id, doc, created_at, updated_at FROM hooks ORDER BY created_at, rowid"
        )
        return [
            HookRow(row["id"], jsonutil.loads(row["doc"]), row["created_at"], row["updated_at"])
            for row in rows
        ]

    def hook_runs(self, query: HookRunQuery) -> list[HookRunRow]:
        where: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("hook_id", query.hook_id),
            ("event", query.event),
            ("tool_call_id", query.tool_call_id),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        for column, values in (("session_id", query.session_ids), ("outcome", query.outcomes)):
            if values is not None:
                where.append(f"{column} IN ({','.join('?' * len(values)) or 'NULL'})")
                params.extend(values)
        if query.before_seq is not None:
            where.append("seq < ?")
            params.append(query.before_seq)
        params.append(query.limit)
        condition = f"WHERE {' AND '.join(where)} " if where else ""
        sql = f"SELECT {HOOK_RUN_COLUMNS} FROM hook_runs {condition}ORDER BY seq DESC LIMIT ?"
        return [as_hook_run(row) for row in self._conn.execute(sql, params)]

    def hook_stats(self) -> list[HookStatsRow]:
        rows = self._conn.execute(
            "SELECT hook_id, runs, failed, last_outcome, last_run_at FROM hook_stats"
        )
        return [HookStatsRow(**dict(row)) for row in rows]

    def approval_grants(self, workspace_id: str | None = None) -> list[ApprovalGrantRow]:
        where, params = ("WHERE workspace_id = ? ", [workspace_id]) if workspace_id else ("", [])
        rows = self._conn.execute(
            f"SELECT {GRANT_COLUMNS} FROM approval_grants {where}ORDER BY seq", params
        )
        return [as_grant(row) for row in rows]

    def approval_grant(self, grant_id: str) -> ApprovalGrantRow | None:
        row = self._one(f"SELECT {GRANT_COLUMNS} FROM approval_grants WHERE id = ?", (grant_id,))
        return as_grant(row) if row else None

    def approval_token(self, token_hash: str) -> ApprovalTokenRow | None:
        row = self._one(
            f"SELECT {TOKEN_COLUMNS} FROM approval_tokens WHERE token_hash = ?", (token_hash,)
        )
        return ApprovalTokenRow(**dict(row)) if row else None

    def approval_modes(self, session_ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for part in chunks(list(session_ids)):
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT session_id, mode FROM approval_modes WHERE session_id IN ({marks})", part
            )
            found.update((row["session_id"], row["mode"]) for row in rows)
        return found
