"""Bringing a database's schema up to this compozy's: the same migrations on either engine, in
one transaction the caller holds (and, on PostgreSQL, under its advisory lock)."""

from __future__ import annotations

from compozy_mcp.clock import SystemClock, timestamp
from compozy_mcp.errors import StoreError
from compozy_mcp.reasons import Reason
from compozy_mcp.store._migrations import LATEST_VERSION, MIGRATIONS
from compozy_mcp.store.sql import Dialect, SQLConnection, render_schema


def migrate(conn: SQLConnection, dialect: Dialect) -> None:
    """Apply every migration the database lacks; refuse a schema newer than this code's."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
        (),
    )
    applied = {
        int(row["version"]) for row in conn.execute("SELECT version FROM schema_migrations", ())
    }
    current = max(applied, default=0)
    if current > LATEST_VERSION:
        raise StoreError(
            f"the store has schema version {current}, newer than this compozy "
            f"({LATEST_VERSION}); upgrade compozy-mcp",
            reason=Reason.STORE_TOO_NEW,
        )
    # By set, not by the highest version: versions are numbered per branch, so a store may
    # have 4 applied before a 2 merged later exists.
    for migration in MIGRATIONS:
        if migration.version in applied:
            continue
        for statement in render_schema(migration.sql, dialect):
            conn.execute(statement, ())
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, timestamp(SystemClock().now())),
        )


def schema_version(conn: SQLConnection) -> int:
    row = conn.execute("SELECT MAX(version) AS version FROM schema_migrations", ()).fetchone()
    return int(row["version"] or 0) if row else 0
