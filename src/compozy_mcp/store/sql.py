"""What the SQL engines share: the connection the readers and writers talk to, and the few
places where SQLite and PostgreSQL spell a thing differently (:class:`Dialect`).

The SQL of the store is written once, portable where both engines agree (``ON CONFLICT``,
``RETURNING``, ``CASE``, recursive CTEs) with ``?`` parameter markers; what differs is asked of the
dialect (a JSON field as text, a byte length, a lock skipped by a claimer). The schema's
migrations are rendered per engine by :func:`render_schema`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class SQLCursor(Protocol):
    """What a statement gives back: rows by column name, and how many rows it changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class SQLConnection(Protocol):
    """A connection inside one transaction: SQLite's own, or PostgreSQL's behind an adapter
    that turns ``?`` into its own parameter markers. Rows are read by column name
    (``row["id"]``)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> SQLCursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> SQLCursor: ...


#: the PostgreSQL channel the daemons on one store listen on (:mod:`compozy_mcp.cluster.wakeup`)
NEWS_CHANNEL = "compozy_news"


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one engine spells what the other spells differently."""

    name: str

    def json_text(self, column: str, *path: str) -> str:
        """A field of a JSON text column, as text (``NULL`` when absent or JSON ``null``)."""
        if self.name == "sqlite":
            return f"json_extract({column}, '$.{'.'.join(path)}')"
        # json, not jsonb: jsonb refuses a \u0000 escape anywhere in the document
        return f"(({column})::json #>> '{{{','.join(path)}}}')"

    def octet_length(self, column: str) -> str:
        if self.name == "sqlite":
            return f"length(CAST({column} AS BLOB))"
        return f"octet_length({column})"

    def json_array_texts(self, column: str) -> str:
        """A table of the texts of a JSON array column, with one column ``value``."""
        if self.name == "sqlite":
            return f"json_each({column})"
        return f"json_array_elements_text(({column})::json) AS elements(value)"

    @property
    def news(self) -> str | None:
        """The statement that tells the other daemons on the store that it holds news for them
        (a queued turn, a signal, stored events), sent when the transaction commits; ``None``:
        the engine has no notifications between processes (they poll)."""
        return None if self.name == "sqlite" else f"SELECT pg_notify('{NEWS_CHANNEL}', '')"

    @property
    def skip_locked(self) -> str:
        """Said after a claimer's subquery: a row another transaction is taking is passed
        over, not waited for (SQLite has one writer at a time, so nothing to pass over)."""
        return "" if self.name == "sqlite" else " FOR UPDATE SKIP LOCKED"


SQLITE = Dialect("sqlite")
POSTGRES = Dialect("postgresql")

#: A statement of a migration prefixed with this fills rows of tables that only a SQLite store
#: can hold at that version: a PostgreSQL store starts at a schema that has them already.
SQLITE_ONLY = "@SQLITE_ONLY"
#: Ends the columns of a table read in insertion order: SQLite has ``rowid``, PostgreSQL gets a
#: column of that name.
ROWID = "@ROWID"

_POSTGRES_TYPES = (
    (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"), "BIGSERIAL PRIMARY KEY"),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
    # byte order, as SQLite compares: ids and timestamps sort the same on both engines
    (re.compile(r"\bTEXT\b"), 'TEXT COLLATE "C"'),
)


def render_schema(script: str, dialect: Dialect) -> list[str]:
    """A migration's statements for one engine."""
    rendered: list[str] = []
    for part in script.split(";"):
        statement = part.strip()
        if not statement:
            continue
        if statement.startswith(SQLITE_ONLY):
            if dialect is not SQLITE:
                continue
            statement = statement.removeprefix(SQLITE_ONLY).strip()
        if dialect is SQLITE:
            statement = statement.replace(ROWID, "")
        else:
            statement = statement.replace(ROWID, ",\n            rowid BIGSERIAL")
            for pattern, spelled in _POSTGRES_TYPES:
                statement = pattern.sub(spelled, statement)
        rendered.append(statement)
    return rendered


class ConstraintViolation(Exception):
    """A statement broke a unique or foreign key constraint (what SQLite raises as
    ``sqlite3.IntegrityError``; the PostgreSQL adapter raises this for its own)."""
