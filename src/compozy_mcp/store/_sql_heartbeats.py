"""The SQL of :mod:`compozy_mcp.store.heartbeats`, both engines."""

from __future__ import annotations

from dataclasses import astuple, fields

from compozy_mcp.store.heartbeats import HeartbeatReader, HeartbeatRow, HeartbeatWriter
from compozy_mcp.store.sql import SQLConnection

_NAMES = [f.name for f in fields(HeartbeatRow)]
_COLUMNS = ", ".join(_NAMES)
_MARKS = ", ".join("?" * len(_NAMES))
_UPDATES = ", ".join(f"{name} = excluded.{name}" for name in _NAMES[1:])


class SQLHeartbeatReader(HeartbeatReader):
    _conn: SQLConnection

    def heartbeat(self, session_id: str) -> HeartbeatRow | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM heartbeats WHERE session_id = ?", (session_id,)
        ).fetchone()
        return HeartbeatRow(**dict(row)) if row is not None else None

    def due_heartbeats(self, now: str) -> list[HeartbeatRow]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM heartbeats WHERE enabled = 1 AND next_wake_at <= ? "
            "ORDER BY next_wake_at, session_id",
            (now,),
        )
        return [HeartbeatRow(**dict(row)) for row in rows]


class SQLHeartbeatWriter(SQLHeartbeatReader, HeartbeatWriter):
    def put_heartbeat(self, row: HeartbeatRow) -> None:
        self._conn.execute(
            f"INSERT INTO heartbeats ({_COLUMNS}) VALUES ({_MARKS}) "
            f"ON CONFLICT (session_id) DO UPDATE SET {_UPDATES}",
            astuple(row),
        )
