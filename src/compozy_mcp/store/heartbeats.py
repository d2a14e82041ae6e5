"""The part of the store interface that keeps heartbeats: a session woken with a prompt on a
schedule, and the outcome of its last wake."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HeartbeatRow:
    session_id: str
    interval_seconds: int
    #: ``""``: none of its own (a wake reads the workspace's HEARTBEAT.md then)
    prompt: str
    #: 1 while the schedule runs
    enabled: int
    next_wake_at: str
    created_at: str
    updated_at: str
    #: ``HH:MM-HH:MM`` (UTC) during which scheduled wakes are skipped
    quiet_hours: str | None = None
    last_wake_at: str | None = None
    #: ``woken``, ``nothing_to_do`` (a reply of only HEARTBEAT_OK), ``skipped_busy``,
    #: ``skipped_quiet``, ``failed``
    last_outcome: str | None = None
    last_turn_id: str | None = None
    last_error: str | None = None
    wakes: int = 0
    #: a 5-field cron expression (UTC) the wakes follow instead of ``interval_seconds``
    cron: str | None = None
    #: JSON: the last wakes, newest first (``at``, ``outcome``, ``turn_id``, ``error``)
    recent_wakes: str | None = None


class HeartbeatReader(ABC):
    @abstractmethod
    def heartbeat(self, session_id: str) -> HeartbeatRow | None: ...

    @abstractmethod
    def due_heartbeats(self, now: str) -> list[HeartbeatRow]:
        """Enabled heartbeats whose next wake is at or before ``now``."""


class HeartbeatWriter(HeartbeatReader):
    @abstractmethod
    def put_heartbeat(self, row: HeartbeatRow) -> None: ...
