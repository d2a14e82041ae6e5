"""Moving a SQLite home's store into PostgreSQL (``compozy store migrate --to postgresql://…``).

Every table is copied, rows and ids as they are (session and run sequence numbers, the
insertion order of the tables read in it), from one snapshot of the SQLite file into one
transaction on the target: the target gets all of it or, on any failure, nothing. The target
must hold no rows yet (its schema may exist: an empty database is migrated first). The counts
of every table are compared once copied, inside that transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compozy_mcp.errors import ConfigError, StoreError

#: rows sent to the server in one COPY batch are read from SQLite this many at a time
_BATCH = 1_000


@dataclass(frozen=True, slots=True)
class Transferred:
    """What was copied: rows per table, in the order they were copied."""

    tables: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.tables.values())


def _sqlite_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND name != 'schema_migrations' ORDER BY name"
    )
    return [str(row[0]) for row in rows]


def _batches(cursor: sqlite3.Cursor) -> Iterator[list[Any]]:
    while batch := cursor.fetchmany(_BATCH):
        yield batch


def migrate_to_postgres(source: Path, url: str, *, busy_timeout_ms: int) -> Transferred:
    """Copy the SQLite store at ``source`` into the empty PostgreSQL database at ``url``."""
    import psycopg

    from compozy_mcp.store._sqlite import SQLiteStore
    from compozy_mcp.store.postgres import WRITE_LOCK, PostgresStore, redact

    if not source.exists():
        raise ConfigError(f"there is no SQLite store to migrate at {source}")
    # both brought to this compozy's schema: the tables and columns then match
    SQLiteStore(source, busy_timeout_ms=busy_timeout_ms).close()
    PostgresStore(url, busy_timeout_ms=busy_timeout_ms).close()
    copied: dict[str, int] = {}
    reader = sqlite3.connect(source, isolation_level=None)
    try:
        reader.execute("BEGIN")  # one snapshot of every table
        with psycopg.connect(url) as target, target.transaction():
            # no daemon already on it writes while the copy runs: its writers take this lock
            target.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            for table in _in_reference_order(target, _sqlite_tables(reader)):
                copied[table] = _copy_table(reader, target, table)
            _refuse_unless_counts_match(target, copied)
            _advance_sequences(target)
    except psycopg.Error as exc:
        raise StoreError(
            f"the copy into {redact(url)} failed and nothing was kept there: {exc}"
        ) from exc
    finally:
        reader.close()
    return Transferred(copied)


def _in_reference_order(target: Any, tables: list[str]) -> list[str]:
    """Tables a foreign key points at before the tables that point (rows within a table go
    in SQLite's insertion order: a parent session before its children)."""
    rows = target.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
        "WHERE c.contype = 'f' AND c.conrelid != c.confrelid"
    ).fetchall()
    needs: dict[str, set[str]] = {table: set() for table in tables}
    for child, parent in rows:
        if child in needs and parent in needs:
            needs[child].add(parent)
    ordered: list[str] = []
    while needs:
        ready = sorted(table for table, parents in needs.items() if parents <= set(ordered))
        if not ready:
            raise StoreError(f"the target's foreign keys form a cycle among {sorted(needs)}")
        ordered += ready
        for table in ready:
            del needs[table]
    return ordered


def _columns(target: Any, table: str) -> dict[str, str]:
    rows = target.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        (table,),
    )
    return {str(name): str(kind) for name, kind in rows}


def _copy_table(reader: sqlite3.Connection, target: Any, table: str) -> int:
    columns = _columns(target, table)
    if not columns:
        raise StoreError(f"the target has no table {table}: is it another program's database?")
    held = target.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone()[0]
    if held:
        raise ConfigError(
            f"the target database is not empty ({table} has rows): migrate into an empty one"
        )
    names = list(columns)
    # rowid: SQLite's own, for the tables read in insertion order (a column on PostgreSQL)
    cursor = reader.execute(f'SELECT {", ".join(names)} FROM "{table}" ORDER BY rowid')
    texts = [i for i, name in enumerate(names) if columns[name] == "text"]
    count = 0
    quoted = ", ".join(f'"{name}"' for name in names)
    with target.cursor().copy(f'COPY "{table}" ({quoted}) FROM STDIN') as copy:
        for batch in _batches(cursor):
            for row in batch:
                values = list(row)
                for i in texts:
                    # an older store kept some JSON text as BLOB
                    if isinstance(values[i], bytes):
                        values[i] = values[i].decode()
                copy.write_row(values)
            count += len(batch)
    return count


def _refuse_unless_counts_match(target: Any, copied: dict[str, int]) -> None:
    for table, expected in copied.items():
        found = target.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        if found != expected:
            raise StoreError(f"{table}: {expected} rows read, {found} found once copied")


def _advance_sequences(target: Any) -> None:
    """Ids given next follow the copied ones."""
    rows = target.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%%'"
    ).fetchall()
    for table, column in rows:
        target.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, %s), "
            f'COALESCE((SELECT MAX("{column}") FROM "{table}"), 0) + 1, false)',
            (table, column),
        )
