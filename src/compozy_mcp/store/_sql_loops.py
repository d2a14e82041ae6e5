"""The SQL of :mod:`compozy_mcp.store.loops`, both engines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store.base import StaleWrite
from compozy_mcp.store.loops import (
    OVERSIZED,
    RUN_DOC_CAP,
    LoopReader,
    LoopRow,
    LoopRunQuery,
    LoopRunRow,
    LoopWriter,
    oversized_run,
)
from compozy_mcp.store.sql import Dialect, SQLConnection


@cache
def _run_columns(dialect: Dialect) -> str:
    """A run's document is read only when it is within the cap (its size is read first)."""
    size = dialect.octet_length("doc")
    return (
        "seq, id, loop_id, loop_version, status, owner, created_at, updated_at, version, "
        f"{size} AS doc_bytes, CASE WHEN {size} > {RUN_DOC_CAP} THEN NULL ELSE doc END AS doc, "
        "started_by"
    )


def _loop(row: Any) -> LoopRow:
    return LoopRow(
        row["id"],
        row["version"],
        row["name"],
        jsonutil.loads(row["doc"]),
        row["created_at"],
        owner=row["owner"],
        author=row["author"],
    )


def _run(row: Any) -> LoopRunRow:
    found = LoopRunRow(
        id=row["id"],
        loop_id=row["loop_id"],
        loop_version=row["loop_version"],
        status=row["status"],
        owner=row["owner"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        doc={},
        version=row["version"],
        seq=row["seq"],
        started_by=row["started_by"],
    )
    if row["doc"] is None:
        return oversized_run(found, int(row["doc_bytes"]))
    return replace(found, doc=jsonutil.loads(row["doc"]))


class SQLLoopReader(LoopReader):
    _conn: SQLConnection
    _dialect: Dialect

    def loop(self, loop_id: str, version: int | None = None) -> LoopRow | None:
        if version is None:
            sql = "SELECT * FROM loops WHERE id = ? ORDER BY version DESC LIMIT 1"
            params: Sequence[Any] = (loop_id,)
        else:
            sql = "SELECT * FROM loops WHERE id = ? AND version = ?"
            params = (loop_id, version)
        row = self._conn.execute(sql, params).fetchone()
        return _loop(row) if row is not None else None

    def loop_versions(self, loop_id: str) -> list[LoopRow]:
        rows = self._conn.execute("SELECT * FROM loops WHERE id = ? ORDER BY version", (loop_id,))
        return [_loop(row) for row in rows]

    def loops(self) -> list[LoopRow]:
        rows = self._conn.execute(
            "SELECT l.* FROM loops l JOIN (SELECT id, MAX(version) AS version FROM loops "
            "GROUP BY id) latest ON l.id = latest.id AND l.version = latest.version "
            "ORDER BY (SELECT MIN(created_at) FROM loops f WHERE f.id = l.id), l.id"
        )
        return [_loop(row) for row in rows]

    def loop_run(self, run_id: str) -> LoopRunRow | None:
        row = self._conn.execute(
            f"SELECT {_run_columns(self._dialect)} FROM loop_runs WHERE id = ?", (run_id,)
        ).fetchone()
        return _run(row) if row is not None else None

    def loop_runs(self, query: LoopRunQuery) -> list[LoopRunRow]:
        where: list[str] = []
        params: list[Any] = []
        if query.loop_id is not None:
            where.append("loop_id = ?")
            params.append(query.loop_id)
        if query.statuses is not None:
            where.append(f"status IN ({','.join('?' * len(query.statuses)) or 'NULL'})")
            params.extend(query.statuses)
        if query.before_seq is not None:
            where.append("seq < ?")
            params.append(query.before_seq)
        params.append(query.limit)
        condition = f"WHERE {' AND '.join(where)} " if where else ""
        columns = _run_columns(self._dialect)
        sql = f"SELECT {columns} FROM loop_runs {condition}ORDER BY seq DESC LIMIT ?"
        return [_run(row) for row in self._conn.execute(sql, params)]


class SQLLoopWriter(SQLLoopReader, LoopWriter):
    def add_loop(self, row: LoopRow) -> None:
        added = self._conn.execute(
            "INSERT INTO loops (id, version, name, doc, created_at, owner, author) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id, version) DO NOTHING",
            (
                row.id,
                row.version,
                row.name,
                jsonutil.dumps_text(row.doc),
                row.created_at,
                row.owner,
                row.author,
            ),
        ).rowcount
        if added != 1:
            raise StaleWrite(f"loop {row.id} version {row.version} exists")

    def set_loop_run_status(self, run_id: str, status: str, updated_at: str) -> None:
        self._conn.execute(
            "UPDATE loop_runs SET status = ?, owner = NULL, updated_at = ?, version = version + 1 "
            "WHERE id = ?",
            (status, updated_at, run_id),
        )

    def put_loop_run(self, row: LoopRunRow) -> LoopRunRow:
        if row.doc.get(OVERSIZED) is not None:
            raise StaleWrite(f"loop run {row.id} is too large to be written back")
        doc = jsonutil.dumps_text(row.doc)
        if len(doc) > RUN_DOC_CAP:  # the runner's budgets keep a run far below this
            raise StaleWrite(f"loop run {row.id} would be {len(doc)} bytes, past the cap")
        if row.version == 0:
            inserted = self._conn.execute(
                "INSERT INTO loop_runs (id, loop_id, loop_version, status, owner, created_at, "
                "updated_at, version, doc, started_by) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) "
                "RETURNING seq",
                (
                    row.id,
                    row.loop_id,
                    row.loop_version,
                    row.status,
                    row.owner,
                    row.created_at,
                    row.updated_at,
                    doc,
                    row.started_by,
                ),
            )
            return replace(row, version=1, seq=int(inserted.fetchone()["seq"]))
        updated = self._conn.execute(
            "UPDATE loop_runs SET status = ?, owner = ?, updated_at = ?, version = version + 1, "
            "doc = ? WHERE id = ? AND version = ?",
            (row.status, row.owner, row.updated_at, doc, row.id, row.version),
        ).rowcount
        if updated != 1:
            raise StaleWrite(f"loop run {row.id} changed since version {row.version}")
        return replace(row, version=row.version + 1)
