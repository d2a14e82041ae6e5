"""The SQL of :mod:`compozy_mcp.store.leases`, both engines (``INSERT ... ON CONFLICT ... DO
UPDATE ... WHERE`` and ``||`` are plain SQL both run)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, fields

from compozy_mcp.store.leases import LeaseReader, LeaseRow, LeaseWriter, SignalRow
from compozy_mcp.store.sql import Dialect, SQLConnection

_LEASE = ", ".join(f.name for f in fields(LeaseRow))
_SIGNAL = ", ".join(f.name for f in fields(SignalRow))
#: at most this many ids in one ``IN (...)``: SQLite's default limit is 999 variables
_CHUNK = 500


class SQLLeaseReader(LeaseReader):
    _dialect: Dialect
    _conn: SQLConnection

    def lease(self, lease_key: str) -> LeaseRow | None:
        row = self._conn.execute(
            f"SELECT {_LEASE} FROM leases WHERE lease_key = ?", (lease_key,)
        ).fetchone()
        return LeaseRow(**dict(row)) if row is not None else None

    def leases(self) -> list[LeaseRow]:
        rows = self._conn.execute(f"SELECT {_LEASE} FROM leases ORDER BY lease_key")
        return [LeaseRow(**dict(row)) for row in rows]

    def signals(self, daemon_id: str) -> list[SignalRow]:
        rows = self._conn.execute(
            f"SELECT {_SIGNAL} FROM daemon_signals WHERE daemon_id = ? "
            "ORDER BY created_at, signal_id",
            (daemon_id,),
        )
        return [SignalRow(**dict(row)) for row in rows]

    def queued_turn_sessions(self, session_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(session_ids)
        for start in range(0, len(ids), _CHUNK):
            part = ids[start : start + _CHUNK]
            marks = ", ".join("?" * len(part))
            rows = self._conn.execute(
                "SELECT DISTINCT session_id FROM transcript_turns "
                f"WHERE status = 'queued' AND session_id IN ({marks})",
                part,
            )
            found.update(row["session_id"] for row in rows)
        return found

    def unleased_queued_sessions(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT DISTINCT session_id FROM transcript_turns AS t WHERE status = 'queued' "
            "AND NOT EXISTS (SELECT 1 FROM leases WHERE lease_key = 'session:' || t.session_id) "
            "ORDER BY session_id"
        )
        return [row["session_id"] for row in rows]

    def last_event_seq(self) -> int:
        row = self._conn.execute("SELECT MAX(seq) AS last FROM session_events").fetchone()
        return int(row["last"] or 0)

    def event_sessions_after(self, seq: int) -> tuple[int, set[str]]:
        rows = list(
            self._conn.execute(
                "SELECT session_id, MAX(seq) AS last FROM session_events WHERE seq > ? "
                "GROUP BY session_id",
                (seq,),
            )
        )
        if not rows:
            return seq, set()
        return max(int(row["last"]) for row in rows), {row["session_id"] for row in rows}


class SQLLeaseWriter(SQLLeaseReader, LeaseWriter):
    def claim_lease(self, row: LeaseRow, now: int) -> LeaseRow:
        self._conn.execute(
            f"INSERT INTO leases ({_LEASE}) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (lease_key) DO UPDATE SET daemon_id = excluded.daemon_id, "
            "address = excluded.address, expires_at = excluded.expires_at, "
            "acquired_at = CASE WHEN leases.daemon_id = excluded.daemon_id "
            "THEN leases.acquired_at ELSE excluded.acquired_at END "
            "WHERE leases.daemon_id = excluded.daemon_id OR leases.expires_at <= ?",
            (*astuple(row), now),
        )
        held = self.lease(row.lease_key)
        assert held is not None  # inserted, updated, or held by another daemon
        return held

    def renew_leases(self, daemon_id: str, keys: Sequence[str], expires_at: int) -> set[str]:
        renewed: set[str] = set()
        ids = list(keys)
        for start in range(0, len(ids), _CHUNK):
            part = ids[start : start + _CHUNK]
            marks = ", ".join("?" * len(part))
            self._conn.execute(
                f"UPDATE leases SET expires_at = ? WHERE daemon_id = ? AND lease_key IN ({marks})",
                (expires_at, daemon_id, *part),
            )
            rows = self._conn.execute(
                f"SELECT lease_key FROM leases WHERE daemon_id = ? AND lease_key IN ({marks})",
                (daemon_id, *part),
            )
            renewed.update(row["lease_key"] for row in rows)
        return renewed

    def drop_lease(self, lease_key: str, daemon_id: str) -> bool:
        cursor = self._conn.execute(
            "DELETE FROM leases WHERE lease_key = ? AND daemon_id = ?", (lease_key, daemon_id)
        )
        return cursor.rowcount > 0

    def send_signal(self, row: SignalRow) -> None:
        self._conn.execute(
            f"INSERT INTO daemon_signals ({_SIGNAL}) VALUES (?, ?, ?, ?, ?, ?)", astuple(row)
        )
        self.announce()

    def announce(self) -> None:
        """Tell the other daemons on the store, when this transaction commits, that it holds
        news for them (PostgreSQL's NOTIFY; SQLite's daemons poll)."""
        news = self._dialect.news
        if news is not None:
            self._conn.execute(news, ())

    def drop_signals(self, signal_ids: Sequence[str]) -> set[str]:
        dropped: set[str] = set()
        for signal_id in signal_ids:
            cursor = self._conn.execute(
                "DELETE FROM daemon_signals WHERE signal_id = ?", (signal_id,)
            )
            if cursor.rowcount > 0:
                dropped.add(signal_id)
        return dropped
