"""The part of the store interface that keeps worktrees: the git worktree a session works in.

A row outlives its directory: removing a worktree keeps the row (``state`` ``removed``, the
branch stays in the repository), so a session's diff and merge can still be read from its
branch. At most one ``active`` row per session and per path (two sessions never share one).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

WorktreeStateName = Literal["active", "removed", "missing"]


class WorktreeTaken(Exception):
    """Another active worktree row holds this session or this path."""


@dataclass(frozen=True, slots=True)
class WorktreeRow:
    id: str
    session_id: str
    workspace_id: str
    #: the worktree's directory
    path: str
    #: the root of the workspace's repository (its main working tree), where git runs
    repository: str
    #: the workspace's path inside the repository (``""`` or ending in ``/``): the session's
    #: directory is ``path/prefix``
    prefix: str
    branch: str
    #: the branch (or ref) the worktree was based on; ``None`` for a detached HEAD
    base_ref: str | None
    #: the commit diffs are taken against
    base_commit: str
    state: WorktreeStateName
    created_at: str
    updated_at: str
    removed_at: str | None = None
    #: what the last turn left changed against the base (``None``: not looked at yet)
    changed_files: int | None = None
    lines_added: int | None = None
    lines_removed: int | None = None
    changes_checked_at: str | None = None
    #: the last merge of its branch: into which branch, the commit it made (or moved to)
    merged_into: str | None = None
    merge_commit: str | None = None
    merged_at: str | None = None


@dataclass(frozen=True, slots=True)
class WorktreeQuery:
    workspace_id: str | None = None
    session_ids: Sequence[str] | None = None
    states: Sequence[WorktreeStateName] | None = ("active",)
    limit: int = 200


class WorktreeReader(ABC):
    @abstractmethod
    def worktree(self, worktree_id: str) -> WorktreeRow | None: ...

    @abstractmethod
    def worktrees(self, query: WorktreeQuery) -> list[WorktreeRow]:
        """Worktrees, newest first."""


class WorktreeWriter(WorktreeReader):
    @abstractmethod
    def put_worktree(self, row: WorktreeRow) -> None:
        """Insert or replace a worktree row; raises :class:`WorktreeTaken` when another active
        row holds its session or its path."""
