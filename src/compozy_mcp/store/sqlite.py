"""The embedded SQLite store: WAL mode, versioned migrations, one transaction per write.

Several processes (the CLI, the proxy, the daemon) may open the same file at once: writes take
SQLite's write lock up front (``BEGIN IMMEDIATE``) and wait up to ``busy_timeout`` for it, so
a read-modify-write inside :meth:`SQLiteStore.write` is never interleaved with another one.
Calls are short (well under a millisecond), which is why async callers use the store directly
instead of hopping to a worker thread.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.clock import SystemClock, timestamp
from compozy_mcp.errors import StoreError
from compozy_mcp.store.base import (
    ArtifactRow,
    ChildSummary,
    ProfileRow,
    SessionQuery,
    SessionRow,
    StaleWrite,
    Store,
    StoreReader,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
    chunks,
)
from compozy_mcp.store.migrations import LATEST_VERSION, MIGRATIONS

BUSY_TIMEOUT_MS = 10_000

_SESSION_COLUMNS = (
    "seq, id, workspace_id, profile_id, parent_session_id, root_session_id, agent_name, state, "
    "archived_at, ttl_expires_at, created_at, updated_at, version, doc"
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


class _SQLiteReader(StoreReader):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _one(self, sql: str, params: Sequence[Any]) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
        return row

    def workspace(self, workspace_id: str) -> WorkspaceRow | None:
        row = self._one(
            "SELECT id, name, path, created_at FROM workspaces WHERE id = ?", (workspace_id,)
        )
        return WorkspaceRow(**dict(row)) if row else None

    def workspaces(self) -> list[WorkspaceRow]:
        # rowid: insertion order among rows created in the same second
        rows = self._conn.execute(
            "SELECT id, name, path, created_at FROM workspaces ORDER BY created_at, rowid"
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
        params.append(query.limit)
        sql = (
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)} "
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

    def transcript(self, session_id: str) -> list[TranscriptTurn]:
        rows = self._conn.execute(
            "SELECT session_id, turn, epoch, role, text, created_at FROM transcript_turns "
            "WHERE session_id = ? ORDER BY turn",
            (session_id,),
        )
        return [TranscriptTurn(**dict(row)) for row in rows]

    def artifact(self, uri: str) -> ArtifactRow | None:
        row = self._one(
            "SELECT uri, sha256, mime_type, bytes, tool_id, created_at, meta "
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


class _SQLiteWriter(_SQLiteReader, StoreWriter):
    def insert_workspace(self, row: WorkspaceRow) -> None:
        self._conn.execute(
            "INSERT INTO workspaces (id, name, path, created_at) VALUES (?, ?, ?, ?)",
            (row.id, row.name, row.path, row.created_at),
        )

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
            "INSERT INTO transcript_turns (session_id, turn, epoch, role, text, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(t.session_id, t.turn, t.epoch, t.role, t.text, t.created_at) for t in turns],
        )

    def truncate_transcript(self, session_id: str, keep_turns: int) -> None:
        self._conn.execute(
            "DELETE FROM transcript_turns WHERE session_id = ? AND turn > ?",
            (session_id, keep_turns),
        )

    def put_artifact(self, row: ArtifactRow, data: bytes) -> None:
        self._conn.execute(
            "INSERT OR IGNORE INTO artifacts (uri, sha256, mime_type, bytes, tool_id, created_at, "
            "meta, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.uri,
                row.sha256,
                row.mime_type,
                row.bytes,
                row.tool_id,
                row.created_at,
                jsonutil.dumps(row.meta),
                data,
            ),
        )


class SQLiteStore(Store):
    """A store in one SQLite file (or in memory, for tests)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._memory = self.path == ":memory:"
        if not self._memory:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        try:
            self._configure()
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    @classmethod
    def memory(cls) -> SQLiteStore:
        return cls(":memory:")

    def _configure(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not self._memory:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"the store at {self.path} cannot use WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = NORMAL")

    def _migrate(self) -> None:
        with self._transaction(immediate=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            current = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] or 0
            if current > LATEST_VERSION:
                raise StoreError(
                    f"the store at {self.path} has schema version {current}, newer than this "
                    f"compozy ({LATEST_VERSION}); upgrade compozy-mcp",
                    reason="store_too_new",
                )
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                for statement in _statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, timestamp(SystemClock().now())),
                )

    def schema_version(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
            return int(row[0] or 0)

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    @contextmanager
    def _transaction(self, *, immediate: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"the store at {self.path} is busy: {exc}") from exc
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[StoreReader]:
        with self._transaction(immediate=False) as conn:
            yield _SQLiteReader(conn)

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        with self._transaction(immediate=True) as conn:
            yield _SQLiteWriter(conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


__all__ = ["SQLiteStore", "StaleWrite"]
