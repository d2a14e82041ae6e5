"""Upkeep: what keeps the store bounded. Expired sessions are stopped, expired artifacts
deleted, the free pages of deleted content given back to the disk (the store vacuums
incrementally) and the write-ahead log folded into the database; on request the database is
rebuilt whole.

The daemon runs it every ``COMPOZY_UPKEEP_SECONDS`` (300); ``compozy store vacuum`` runs it
with a vacuum. It is blocking work: run it off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compozy_mcp.artifacts import ArtifactService
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import Store, StoreSize


@dataclass(frozen=True, slots=True)
class UpkeepReport:
    sessions_stopped: int
    artifacts_deleted: int
    before: StoreSize
    after: StoreSize
    vacuumed: bool

    def payload(self) -> dict[str, Any]:
        return {
            "sessions_stopped": self.sessions_stopped,
            "artifacts_deleted": self.artifacts_deleted,
            "vacuumed": self.vacuumed,
            "bytes_before": {"database": self.before.database, "wal": self.before.wal},
            "bytes_after": {"database": self.after.database, "wal": self.after.wal},
        }


class Upkeep:
    def __init__(
        self,
        store: Store,
        sessions: Sessions,
        artifacts: ArtifactService,
        *,
        sweeps: Sequence[Callable[[], object]] = (),
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._artifacts = artifacts
        #: more expired things to delete (used approval tokens and answers)
        self._sweeps = tuple(sweeps)

    def run(self, *, vacuum: bool = False) -> UpkeepReport:
        before = self._store.size()
        stopped = self._sessions.sweep_expired()
        deleted = self._artifacts.sweep()
        for sweep in self._sweeps:
            sweep()
        if vacuum:
            self._store.vacuum()
        else:
            self._store.checkpoint()
        return UpkeepReport(stopped, deleted, before, self._store.size(), vacuum)
