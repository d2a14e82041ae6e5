"""The part of the store interface that keeps Loops: definition versions and runs.

A definition is never changed: an update adds a version, and a run names the version it runs.
A run is one row whose document (node states, outputs, pinned contracts) is replaced as the run
moves, compared-and-swapped on ``version`` like a session.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

#: the largest run document the store writes, or reads whole: past the most outputs a run may
#: hold (``COMPOZY_LOOP_RUN_BYTES``, at most 64 MiB), with room for the rest of the record. A
#: larger one (written before the budgets existed) is read as :func:`oversized_run`, and
#: recovery marks it failed, so that no read loads it and the daemon starts.
RUN_DOC_CAP = 80 * 1024 * 1024
#: the key of an oversized run's stand-in document: the stored size, in bytes
OVERSIZED = "record_bytes"


def oversized_run(row: LoopRunRow, size: int) -> LoopRunRow:
    """``row`` (read without its document) with a stand-in document that says why."""
    failure = {
        "code": "limit_exceeded",
        "reason": "run_too_large",
        "message": (
            f"the run record is {size} bytes, past the {RUN_DOC_CAP} the store reads whole; "
            "its node states are kept in the store but not shown"
        ),
    }
    status = row.status if row.status in ("succeeded", "failed", "cancelled") else "failed"
    doc: dict[str, Any] = {
        "run_id": row.id,
        "loop_id": row.loop_id,
        "loop_version": row.loop_version,
        "status": status,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "nodes": {},
        "error": failure,
        OVERSIZED: size,
    }
    return replace(row, status=status, owner=None, doc=doc)


@dataclass(frozen=True, slots=True)
class LoopRow:
    id: str
    version: int
    name: str | None
    #: ``{"document": ..., "source": ...}``: the definition as given, and its text if any
    doc: dict[str, Any]
    created_at: str
    #: the session whose tree the Loop belongs to (every version carries the first one's);
    #: ``None``: the operator's, as is every Loop stored before Loops had owners
    owner: str | None = None
    #: the session that wrote this version; ``None``: the operator
    author: str | None = None


@dataclass(frozen=True, slots=True)
class LoopRunRow:
    id: str
    loop_id: str
    loop_version: int
    status: str
    #: the process running it (``None`` when no process is: waiting, or ended)
    owner: str | None
    created_at: str
    updated_at: str
    doc: dict[str, Any]
    version: int = 0
    seq: int = 0
    #: the session that started it; ``None``: the operator
    started_by: str | None = None


@dataclass(frozen=True, slots=True)
class LoopRunQuery:
    loop_id: str | None = None
    statuses: Sequence[str] | None = None
    before_seq: int | None = None
    limit: int = 50


class LoopReader(ABC):
    @abstractmethod
    def loop(self, loop_id: str, version: int | None = None) -> LoopRow | None:
        """One version of a Loop (``None``: the latest)."""

    @abstractmethod
    def loop_versions(self, loop_id: str) -> list[LoopRow]:
        """Every version of a Loop, oldest first."""

    @abstractmethod
    def loops(self) -> list[LoopRow]:
        """The latest version of every Loop, oldest Loop first."""

    @abstractmethod
    def loop_run(self, run_id: str) -> LoopRunRow | None: ...

    @abstractmethod
    def loop_runs(self, query: LoopRunQuery) -> list[LoopRunRow]:
        """Runs, newest first."""


class LoopWriter(LoopReader):
    @abstractmethod
    def add_loop(self, row: LoopRow) -> None:
        """Store a new version; raises :class:`~compozy_mcp.store.base.StaleWrite` if that
        version exists already (two writers raced)."""

    @abstractmethod
    def set_loop_run_status(self, run_id: str, status: str, updated_at: str) -> None:
        """Change a run's status (and clear its owner) without touching its document: how
        recovery ends a run whose document is too large to load."""

    @abstractmethod
    def put_loop_run(self, row: LoopRunRow) -> LoopRunRow:
        """Insert a run (``version`` 0) or replace it if its ``version`` is still the stored
        one (raises :class:`~compozy_mcp.store.base.StaleWrite`); returns it as stored."""
