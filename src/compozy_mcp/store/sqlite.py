"""The embedded SQLite store: WAL mode, versioned migrations, one transaction per write.

Several processes (the CLI, the proxy, the daemon) may open the same file at once.

- **Writes** go through one connection: each takes SQLite's write lock up front
  (``BEGIN IMMEDIATE``), so a read-modify-write is never interleaved with another one. The wait
  for that lock is bounded (``busy_timeout_ms``); past it the write fails as
  :class:`~compozy_mcp.errors.StoreBusy`, a typed answer the caller may retry, never a stall.
  Async callers run writes in worker threads (:mod:`compozy_mcp.blocking`).
- **Reads** use connections of their own, taken from a small pool: in WAL mode a reader never
  waits for a writer, so a read on the event loop stays fast while another process writes.

An in-memory store (tests) has one connection for everything: separate connections would see
separate databases.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.clock import SystemClock, timestamp
from compozy_mcp.errors import StoreBusy, StoreError
from compozy_mcp.reasons import Reason
from compozy_mcp.store.base import (
    HOOK_RUNS_KEPT,
    ApprovalGrantRow,
    ApprovalTokenRow,
    ArtifactRow,
    ChildSummary,
    DeletedCounts,
    HookRow,
    HookRunQuery,
    HookRunRow,
    HookStatsRow,
    ProfileRow,
    SessionEventRow,
    SessionQuery,
    SessionRow,
    StaleWrite,
    Store,
    StoreReader,
    StoreSize,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
    chunks,
)
from compozy_mcp.store.migrations import LATEST_VERSION, MIGRATIONS
from compozy_mcp.store.sqlite_heartbeats import SQLiteHeartbeatReader, SQLiteHeartbeatWriter
from compozy_mcp.store.sqlite_leases import SQLiteLeaseReader, SQLiteLeaseWriter
from compozy_mcp.store.sqlite_loops import SQLiteLoopReader, SQLiteLoopWriter
from compozy_mcp.store.sqlite_tasks import SQLiteTaskReader, SQLiteTaskWriter
from compozy_mcp.store.sqlite_worktrees import SQLiteWorktreeReader, SQLiteWorktreeWriter

log = logging.getLogger(__name__)

#: how long a write waits for the write lock another connection holds, by default
BUSY_TIMEOUT_MS = 5_000
#: idle reader connections kept for reuse
READER_POOL_SIZE = 8

_SESSION_COLUMNS = (
    "seq, id, workspace_id, profile_id, parent_session_id, root_session_id, agent_name, state, "
    "archived_at, ttl_expires_at, created_at, updated_at, version, doc"
)


_RUN_COLUMNS = (
    "seq, hook_id, event, tool_id, tool_call_id, session_id, started_at, duration_ms, outcome, "
    "decision, patch_applied, detail, exit_code, stderr_tail, patch"
)
#: how often (in runs) the run log drops what it no longer keeps
_TURN_COLUMNS = ", ".join(f.name for f in fields(TranscriptTurn))
_TURN_MARKS = ", ".join("?" * len(fields(TranscriptTurn)))
_PRUNE_EVERY = 100


def _hook_run(row: sqlite3.Row) -> HookRunRow:
    fields = dict(row)
    fields["patch_applied"] = bool(fields["patch_applied"])
    fields["patch"] = jsonutil.loads(fields["patch"]) if fields["patch"] is not None else None
    return HookRunRow(**fields)


_GRANT_COLUMNS = (
    "id, workspace_id, agent_name, tool_id, input_digest, decision, profile_id, source, "
    "tool_input, created_at"
)
_TOKEN_COLUMNS = (
    "token_hash, kind, tool_id, session_id, workspace_id, agent_name, input_digest, created_at, "
    "expires_at, used_at"
)


def _grant(row: sqlite3.Row) -> ApprovalGrantRow:
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


def _session(row: sqlite3.Row) -> SessionRow:
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


class _SQLiteReader(
    SQLiteHeartbeatReader,
    SQLiteLeaseReader,
    SQLiteLoopReader,
    SQLiteTaskReader,
    SQLiteWorktreeReader,
    StoreReader,
):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _one(self, sql: str, params: Sequence[Any]) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
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
        row = self._one(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return _session(row) if row else None

    def sessions(self, query: SessionQuery) -> list[SessionRow]:
        where = ["(archived_at IS NOT NULL) = ?"]
        params: list[Any] = [1 if query.archived else 0]
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
                "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT s.id FROM sessions s "
                "JOIN tree ON s.parent_session_id = tree.id) "
            )
            params.insert(0, query.subtree_of)
            where.append("id IN (SELECT id FROM tree)")
        params.append(query.limit)
        sql = (
            f"{prefix}SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)} "
            "ORDER BY seq DESC LIMIT ?"
        )
        return [_session(row) for row in self._conn.execute(sql, params)]

    def children(self, parent_ids: Sequence[str]) -> list[SessionRow]:
        found: list[SessionRow] = []
        for part in chunks(list(parent_ids)):
            marks = ",".join("?" * len(part))
            found.extend(
                _session(row)
                for row in self._conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM sessions "
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
            rows = self._conn.execute(
                "SELECT id, parent_session_id, agent_name, state, "
                "json_extract(doc, '$.lineage.kind') AS kind, "
                "json_extract(doc, '$.name') AS name, "
                "json_extract(doc, '$.lineage.spawn_role') AS spawn_role, "
                "(json_extract(doc, '$.failure') IS NOT NULL "
                " OR json_extract(doc, '$.runtime.status') = 'failed') AS failed "
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
            f"SELECT {_SESSION_COLUMNS} FROM sessions "
            "WHERE ttl_expires_at IS NOT NULL AND ttl_expires_at <= ? AND state != 'stopped' "
            "ORDER BY seq",
            (now,),
        )
        return [_session(row) for row in rows]

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
        rows = self._conn.execute(
            f"SELECT {_TURN_COLUMNS} FROM transcript_turns "
            "WHERE session_id = ? AND turn > ? ORDER BY turn LIMIT ?",
            (session_id, after_turn, -1 if limit is None else limit),
        )
        return [TranscriptTurn(**dict(row)) for row in rows]

    def turn(self, session_id: str, turn_id: str) -> TranscriptTurn | None:
        row = self._one(
            f"SELECT {_TURN_COLUMNS} FROM transcript_turns WHERE session_id = ? AND turn_id = ?",
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
        # substr() on a BLOB counts bytes and is 1-based.
        row = self._one(
            "SELECT substr(data, ?, ?) AS part FROM artifacts WHERE uri = ?",
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
        sql = f"SELECT {_RUN_COLUMNS} FROM hook_runs {condition}ORDER BY seq DESC LIMIT ?"
        return [_hook_run(row) for row in self._conn.execute(sql, params)]

    def hook_stats(self) -> list[HookStatsRow]:
        rows = self._conn.execute(
            "SELECT hook_id, runs, failed, last_outcome, last_run_at FROM hook_stats"
        )
        return [HookStatsRow(**dict(row)) for row in rows]

    def approval_grants(self, workspace_id: str | None = None) -> list[ApprovalGrantRow]:
        where, params = ("WHERE workspace_id = ? ", [workspace_id]) if workspace_id else ("", [])
        rows = self._conn.execute(
            f"SELECT {_GRANT_COLUMNS} FROM approval_grants {where}ORDER BY seq", params
        )
        return [_grant(row) for row in rows]

    def approval_grant(self, grant_id: str) -> ApprovalGrantRow | None:
        row = self._one(f"SELECT {_GRANT_COLUMNS} FROM approval_grants WHERE id = ?", (grant_id,))
        return _grant(row) if row else None

    def approval_token(self, token_hash: str) -> ApprovalTokenRow | None:
        row = self._one(
            f"SELECT {_TOKEN_COLUMNS} FROM approval_tokens WHERE token_hash = ?", (token_hash,)
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


class _SQLiteWriter(
    SQLiteHeartbeatWriter,
    SQLiteLeaseWriter,
    SQLiteLoopWriter,
    SQLiteTaskWriter,
    SQLiteWorktreeWriter,
    _SQLiteReader,
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
        cursor = self._conn.execute(
            "INSERT INTO sessions (id, workspace_id, profile_id, parent_session_id, "
            "root_session_id, agent_name, state, archived_at, ttl_expires_at, created_at, "
            "updated_at, version, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
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
        row.seq = int(cursor.lastrowid or 0)
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
            f"INSERT INTO transcript_turns ({_TURN_COLUMNS}) VALUES ({_TURN_MARKS})",
            [astuple(t) for t in turns],
        )

    def save_turn(self, turn: TranscriptTurn) -> None:
        self._conn.execute(
            f"INSERT OR REPLACE INTO transcript_turns ({_TURN_COLUMNS}) VALUES ({_TURN_MARKS})",
            astuple(turn),
        )

    def append_session_events(self, events: Sequence[SessionEventRow]) -> None:
        self._conn.executemany(
            "INSERT INTO session_events (session_id, turn_id, kind, at, payload) "
            "VALUES (?, ?, ?, ?, ?)",
            [(e.session_id, e.turn_id, e.kind, e.at, e.payload) for e in events],
        )

    def truncate_transcript(self, session_id: str, keep_turns: int) -> None:
        self._conn.execute(
            "DELETE FROM transcript_turns WHERE session_id = ? AND turn > ?",
            (session_id, keep_turns),
        )

    def put_artifact(self, row: ArtifactRow, data: bytes, *, owner: str) -> None:
        self._conn.execute(
            "INSERT INTO artifacts (uri, sha256, mime_type, bytes, tool_id, created_at, "
            "meta, data, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (uri) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)",
            (
                row.uri,
                row.sha256,
                row.mime_type,
                row.bytes,
                row.tool_id,
                row.created_at,
                jsonutil.dumps(row.meta),
                data,
                row.expires_at,
            ),
        )
        self._conn.execute(
            "INSERT OR IGNORE INTO artifact_refs (uri, owner) VALUES (?, ?)", (row.uri, owner)
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
            f"INSERT INTO approval_grants ({_GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (workspace_id, agent_name, tool_id, input_digest) DO UPDATE SET "
            "decision = excluded.decision, profile_id = excluded.profile_id, "
            "source = excluded.source, tool_input = excluded.tool_input, "
            f"created_at = excluded.created_at RETURNING {_GRANT_COLUMNS}",
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
        return _grant(stored)

    def delete_approval_grant(self, grant_id: str) -> bool:
        cursor = self._conn.execute("DELETE FROM approval_grants WHERE id = ?", (grant_id,))
        return cursor.rowcount == 1

    def put_approval_token(self, row: ApprovalTokenRow) -> None:
        self._conn.execute(
            f"INSERT INTO approval_tokens ({_TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        row = self._one(
            f"SELECT {_TOKEN_COLUMNS} FROM approval_tokens WHERE session_id = ? AND tool_id = ? "
            "AND input_digest = ? AND kind != 'token' AND used_at IS NULL AND expires_at > ? "
            "ORDER BY created_at, rowid LIMIT 1",
            (session_id, tool_id, input_digest, now),
        )
        if row is None:
            return None
        self.use_approval_token(row["token_hash"], now)
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
        cursor = self._conn.execute(
            "INSERT INTO hook_runs (hook_id, event, tool_id, tool_call_id, session_id, "
            "started_at, duration_ms, outcome, decision, patch_applied, detail, exit_code, "
            "stderr_tail, patch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            "VALUES (?, 1, ?, ?, ?) ON CONFLICT (hook_id) DO UPDATE SET runs = runs + 1, "
            "failed = failed + excluded.failed, last_outcome = excluded.last_outcome, "
            "last_run_at = excluded.last_run_at",
            (row.hook_id, int(failed), row.outcome, row.started_at),
        )
        seq = int(cursor.lastrowid or 0)
        if seq % _PRUNE_EVERY == 0:
            self._conn.execute("DELETE FROM hook_runs WHERE seq <= ?", (seq - HOOK_RUNS_KEPT,))


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> None:
    """Create ``path`` (and its parents) readable by its owner only; warn if it exists wider.
    Every prompt and transcript lives under it."""
    if not path.exists():
        path.mkdir(parents=True, mode=PRIVATE_DIR)
        path.chmod(PRIVATE_DIR)  # mkdir's mode is cut by the umask; this one is exact
    elif path.stat().st_mode & 0o077:
        log.warning("%s can be read by other users; chmod 700 it", path)


def private_file(path: Path) -> None:
    """Create the database file owner-only before SQLite opens it (SQLite gives its WAL and
    shared-memory files the database's own mode); warn when an existing one is wider."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            log.warning("%s can be read by other users; chmod 600 it", path)
        return
    os.close(fd)


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SQLiteStore(Store):
    """A store in one SQLite file (or in memory, for tests)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = str(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._memory = self.path == ":memory:"
        if not self._memory:
            private_file(Path(self.path))
        self._write_lock = threading.RLock()
        #: the last write's outcome: ``None`` once one succeeded, else why it failed (what
        #: ``/api/health`` reports as ``degraded``)
        self.write_failure: str | None = None
        self._pool_lock = threading.Lock()
        self._readers: list[sqlite3.Connection] = []
        self._open: list[sqlite3.Connection] = []
        self._closed = False
        self._writer = self._connect(writer=True)
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    @classmethod
    def memory(cls) -> SQLiteStore:
        return cls(":memory:")

    def _connect(self, *, writer: bool = False) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # writes run in worker threads; pooled readers move
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store: {exc}") from exc
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
            conn.execute("PRAGMA foreign_keys = ON")
            if writer and not self._memory:
                # before WAL, and only takes on a database with no table yet (a new one): its
                # deleted pages are given back by each checkpoint; an older one's once its next
                # vacuum has made it incremental
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise StoreError(f"the store cannot use WAL mode (got {mode})")
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError as exc:
            conn.close()
            raise self._failure(exc) from exc
        except BaseException:
            conn.close()
            raise
        with self._pool_lock:
            self._open.append(conn)
        return conn

    def _failure(self, exc: sqlite3.OperationalError) -> StoreBusy | StoreError:
        if _locked(exc):
            return StoreBusy(
                f"the store is busy: another writer held it for more than "
                f"{self.busy_timeout_ms} ms; retry"
            )
        return StoreError(f"the store failed: {exc}")

    def _migrate(self) -> None:
        with self._transaction(self._writer, immediate=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            applied = {int(row[0]) for row in conn.execute("SELECT version FROM schema_migrations")}
            current = max(applied, default=0)
            if current > LATEST_VERSION:
                raise StoreError(
                    f"the store has schema version {current}, newer than this compozy "
                    f"({LATEST_VERSION}); upgrade compozy-mcp",
                    reason=Reason.STORE_TOO_NEW,
                )
            # By set, not by the highest version: versions are numbered per branch, so a
            # store may have 4 applied before a 2 merged later exists.
            for migration in MIGRATIONS:
                if migration.version in applied:
                    continue
                for statement in _statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, timestamp(SystemClock().now())),
                )

    def schema_version(self) -> int:
        with self.read() as reader:
            assert isinstance(reader, _SQLiteReader)
            row = reader._one("SELECT MAX(version) FROM schema_migrations", ())
            return int(row[0] or 0) if row else 0

    def journal_mode(self) -> str:
        with self._write_lock:
            return str(self._writer.execute("PRAGMA journal_mode").fetchone()[0])

    @contextmanager
    def _transaction(
        self, conn: sqlite3.Connection, *, immediate: bool
    ) -> Iterator[sqlite3.Connection]:
        try:
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.OperationalError as exc:
            raise self._failure(exc) from exc
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK")
            raise self._failure(exc) from exc

    def _busy(self) -> StoreBusy:
        return StoreBusy(
            f"the store is busy: {self.busy_timeout_ms} ms passed waiting for a write; retry"
        )

    @contextmanager
    def _holding_writer(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, within one deadline for every wait of the write: our own
        writers' queue here, then SQLite's lock (another process), together at most
        ``busy_timeout_ms`` (waits that stacked made a write fail after three times that)."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        if not self._write_lock.acquire(timeout=self.busy_timeout_ms / 1000):
            raise self._busy()
        try:
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0 and self.busy_timeout_ms > 0:
                raise self._busy()
            self._writer.execute(f"PRAGMA busy_timeout = {max(left_ms, 0)}")
            yield self._writer
        finally:
            self._write_lock.release()

    @contextmanager
    def _reader_connection(self) -> Iterator[sqlite3.Connection]:
        if self._memory:
            with self._holding_writer() as conn:
                yield conn
            return
        with self._pool_lock:
            pooled = self._readers.pop() if self._readers else None
        conn = pooled if pooled is not None else self._connect()
        try:
            yield conn
        finally:
            with self._pool_lock:
                kept = (
                    not self._closed
                    and len(self._readers) < READER_POOL_SIZE
                    and conn in self._open
                )
                if kept:
                    self._readers.append(conn)
            if not kept:
                self._discard(conn)

    def _discard(self, conn: sqlite3.Connection) -> None:
        with self._pool_lock:
            if conn in self._open:
                self._open.remove(conn)
        conn.close()

    @contextmanager
    def read(self) -> Iterator[StoreReader]:
        with self._reader_connection() as conn, self._transaction(conn, immediate=False):
            yield _SQLiteReader(conn)

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        try:
            with self._holding_writer() as conn, self._transaction(conn, immediate=True):
                yield _SQLiteWriter(conn)
        except StoreBusy as busy:
            self.write_failure = busy.message
            raise
        self.write_failure = None

    def close(self) -> None:
        """Close every connection no thread is using; a write in flight in another thread
        (an agent's start, say) finishes first, and a reader in use is closed when it is
        given back: closing a connection under a running statement crashes the interpreter."""
        acquired = self._write_lock.acquire(timeout=2 * max(self.busy_timeout_ms / 1000, 1))
        try:
            with self._pool_lock:
                self._closed = True
                idle = {id(conn) for conn in self._readers}
                idle.add(id(self._writer))
                conns = [conn for conn in self._open if id(conn) in idle]
                self._open = [conn for conn in self._open if id(conn) not in idle]
                self._readers = []
            for conn in conns:
                conn.close()
        finally:
            if acquired:
                self._write_lock.release()

    def size(self) -> StoreSize:
        if self._memory:
            with self.read() as reader:
                assert isinstance(reader, _SQLiteReader)
                pages = reader._one("PRAGMA page_count", ())
                page_size = reader._one("PRAGMA page_size", ())
            return StoreSize(int(pages[0]) * int(page_size[0]) if pages and page_size else 0, 0)
        wal = Path(self.path + "-wal")
        return StoreSize(Path(self.path).stat().st_size, wal.stat().st_size if wal.exists() else 0)

    def checkpoint(self) -> None:
        with self._holding_writer() as conn:
            try:
                # executescript steps the pragma to its end (execute frees one page a call)
                conn.executescript("PRAGMA incremental_vacuum;")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:
                raise self._failure(exc) from exc

    def vacuum(self) -> None:
        with self._holding_writer() as conn:
            try:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # VACUUM makes it take
                conn.execute("VACUUM")
            except sqlite3.OperationalError as exc:
                raise self._failure(exc) from exc
        self.checkpoint()


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


__all__ = ["SQLiteStore", "StaleWrite"]
