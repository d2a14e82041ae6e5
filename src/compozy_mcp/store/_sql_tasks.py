"""The SQL of :mod:`compozy_mcp.store.tasks`, both engines."""

from __future__ import annotations

from dataclasses import astuple, fields
from typing import Any

from compozy_mcp.store.sql import Dialect, SQLConnection
from compozy_mcp.store.tasks import (
    TaskQuery,
    TaskReader,
    TaskReviewRow,
    TaskRow,
    TaskRunRow,
    TaskWriter,
)


def _columns(kind: type) -> tuple[str, str, str]:
    names = [f.name for f in fields(kind)]
    updates = ", ".join(f"{name} = excluded.{name}" for name in names[1:])
    return ", ".join(names), ", ".join("?" * len(names)), updates


_TASK = _columns(TaskRow)
_RUN = _columns(TaskRunRow)
_REVIEW = _columns(TaskReviewRow)
#: the order tasks are claimed in (rowid: the order they were created in, within a second; a
#: column of that name on PostgreSQL)
_CLAIM_ORDER = "priority DESC, created_at, rowid"


class SQLTaskReader(TaskReader):
    _conn: SQLConnection
    _dialect: Dialect

    def task(self, task_id: str) -> TaskRow | None:
        row = self._conn.execute(
            f"SELECT {_TASK[0]} FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        return TaskRow(**dict(row)) if row is not None else None

    def tasks(self, query: TaskQuery) -> list[TaskRow]:
        where: list[str] = []
        params: list[Any] = []
        if query.workspace_id is not None:
            where.append("workspace_id = ?")
            params.append(query.workspace_id)
        if query.states is not None:
            where.append(f"state IN ({', '.join('?' * len(query.states))})")
            params += list(query.states)
        if query.label is not None:
            labels = self._dialect.json_array_texts("tasks.labels")
            where.append(f"EXISTS (SELECT 1 FROM {labels} WHERE value = ?)")
            params.append(query.label)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._conn.execute(
            f"SELECT {_TASK[0]} FROM tasks{clause} ORDER BY {_CLAIM_ORDER} LIMIT ?",
            [*params, query.limit],
        )
        return [TaskRow(**dict(row)) for row in rows]

    def task_run(self, run_id: str) -> TaskRunRow | None:
        row = self._conn.execute(
            f"SELECT {_RUN[0]} FROM task_runs WHERE id = ?", (run_id,)
        ).fetchone()
        return TaskRunRow(**dict(row)) if row is not None else None

    def task_runs(self, task_id: str) -> list[TaskRunRow]:
        rows = self._conn.execute(
            f"SELECT {_RUN[0]} FROM task_runs WHERE task_id = ? ORDER BY claimed_at, seq",
            (task_id,),
        )
        return [TaskRunRow(**dict(row)) for row in rows]

    def expired_task_runs(self, now: str) -> list[TaskRunRow]:
        rows = self._conn.execute(
            f"SELECT {_RUN[0]} FROM task_runs WHERE state = 'active' AND claim_expires_at <= ?"
            " ORDER BY seq",
            (now,),
        )
        return [TaskRunRow(**dict(row)) for row in rows]

    def task_reviews(self, task_id: str) -> list[TaskReviewRow]:
        rows = self._conn.execute(
            f"SELECT {_REVIEW[0]} FROM task_reviews WHERE task_id = ? ORDER BY seq", (task_id,)
        )
        return [TaskReviewRow(**dict(row)) for row in rows]


class SQLTaskWriter(SQLTaskReader, TaskWriter):
    def put_task(self, row: TaskRow) -> None:
        self._conn.execute(
            f"INSERT INTO tasks ({_TASK[0]}) VALUES ({_TASK[1]}) "
            f"ON CONFLICT (id) DO UPDATE SET {_TASK[2]}",
            astuple(row),
        )

    def claim_next(
        self, workspace_id: str, run_id: str, now: str, *, task_id: str | None = None
    ) -> str | None:
        # One statement: the row is chosen and taken together, and the state test in the
        # outer WHERE makes a second claimer of the same row update nothing.
        only = " AND id = ?" if task_id is not None else ""
        row = self._conn.execute(
            "UPDATE tasks SET state = 'in_progress', current_run_id = ?, updated_at = ?, "
            "version = version + 1 WHERE state = 'todo' AND id = ("
            f"SELECT id FROM tasks WHERE state = 'todo' AND workspace_id = ?{only} "
            f"ORDER BY {_CLAIM_ORDER} LIMIT 1{self._dialect.skip_locked}) RETURNING id",
            (run_id, now, workspace_id, *([task_id] if task_id is not None else [])),
        ).fetchone()
        return str(row["id"]) if row is not None else None

    def put_task_run(self, row: TaskRunRow) -> None:
        self._conn.execute(
            f"INSERT INTO task_runs ({_RUN[0]}) VALUES ({_RUN[1]}) "
            f"ON CONFLICT (id) DO UPDATE SET {_RUN[2]}",
            astuple(row),
        )

    def put_task_review(self, row: TaskReviewRow) -> None:
        self._conn.execute(
            f"INSERT INTO task_reviews ({_REVIEW[0]}) VALUES ({_REVIEW[1]})", astuple(row)
        )
