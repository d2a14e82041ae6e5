"""The SQL of :mod:`compozy_mcp.store.worktrees`, both engines."""

from __future__ import annotations

import sqlite3
from dataclasses import astuple, fields
from typing import Any

from compozy_mcp.store.base import chunks
from compozy_mcp.store.sql import ConstraintViolation, SQLConnection
from compozy_mcp.store.worktrees import (
    WorktreeQuery,
    WorktreeReader,
    WorktreeRow,
    WorktreeTaken,
    WorktreeWriter,
)

_COLUMNS = ", ".join(f.name for f in fields(WorktreeRow))
_MARKS = ", ".join("?" * len(fields(WorktreeRow)))
_UPDATES = ", ".join(f"{f.name} = excluded.{f.name}" for f in fields(WorktreeRow)[1:])


def _worktree(row: Any) -> WorktreeRow:
    return WorktreeRow(**dict(row))


class SQLWorktreeReader(WorktreeReader):
    _conn: SQLConnection

    def worktree(self, worktree_id: str) -> WorktreeRow | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM worktrees WHERE id = ?", (worktree_id,)
        ).fetchone()
        return _worktree(row) if row is not None else None

    def worktrees(self, query: WorktreeQuery) -> list[WorktreeRow]:
        where: list[str] = []
        params: list[Any] = []
        if query.workspace_id is not None:
            where.append("workspace_id = ?")
            params.append(query.workspace_id)
        if query.states is not None:
            where.append(f"state IN ({', '.join('?' * len(query.states))})")
            params += list(query.states)
        sql = f"SELECT {_COLUMNS} FROM worktrees"
        if query.session_ids is None:
            clause = f" WHERE {' AND '.join(where)}" if where else ""
            rows = self._conn.execute(
                f"{sql}{clause} ORDER BY created_at DESC, id DESC LIMIT ?", [*params, query.limit]
            )
            return [_worktree(row) for row in rows]
        found: list[WorktreeRow] = []
        for part in chunks(list(query.session_ids)):
            clause = " AND ".join([*where, f"session_id IN ({', '.join('?' * len(part))})"])
            rows = self._conn.execute(
                f"{sql} WHERE {clause} ORDER BY created_at DESC, id DESC", [*params, *part]
            )
            found += [_worktree(row) for row in rows]
        return found[: query.limit]


class SQLWorktreeWriter(SQLWorktreeReader, WorktreeWriter):
    def put_worktree(self, row: WorktreeRow) -> None:
        try:
            self._conn.execute(
                f"INSERT INTO worktrees ({_COLUMNS}) VALUES ({_MARKS}) "
                f"ON CONFLICT (id) DO UPDATE SET {_UPDATES}",
                astuple(row),
            )
        except (sqlite3.IntegrityError, ConstraintViolation) as exc:
            raise WorktreeTaken(f"worktree {row.id}: {exc}") from None
