"""The part of the store interface that keeps Loops: definition versions and runs.

A definition is never changed: an update adds a version, and a run names the version it runs.
A run is one row whose document (node states, outputs, pinned contracts) is replaced as the run
moves, compared-and-swapped on ``version`` like a session.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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
    def put_loop_run(self, row: LoopRunRow) -> LoopRunRow:
        """Insert a run (``version`` 0) or replace it if its ``version`` is still the stored
        one (raises :class:`~compozy_mcp.store.base.StaleWrite`); returns it as stored."""
