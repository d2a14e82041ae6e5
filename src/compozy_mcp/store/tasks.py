"""The part of the store interface that keeps tasks: work queued for agents, the runs in which
sessions claim and work on them, and the reviews of what a run delivered.

A task's ``state`` is ``todo``, ``in_progress``, ``in_review``, ``done`` or ``cancelled``;
``current_run_id`` names the run that holds it while it is ``in_progress`` or ``in_review``.
Claiming is one conditional ``UPDATE`` (:meth:`TaskWriter.claim_next`), so two sessions never
hold the same task, whichever process or daemon they call through.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

TaskStateName = Literal["todo", "in_progress", "in_review", "done", "cancelled"]
TASK_STATES: tuple[TaskStateName, ...] = ("todo", "in_progress", "in_review", "done", "cancelled")
#: ``active``: claimed and being worked on; the others are how a run ended
TaskRunStateName = Literal["active", "completed", "failed", "released", "expired", "cancelled"]
TASK_RUN_STATES: tuple[TaskRunStateName, ...] = (
    "active",
    "completed",
    "failed",
    "released",
    "expired",
    "cancelled",
)
ReviewDecision = Literal["accept", "request_changes"]


@dataclass(frozen=True, slots=True)
class TaskRow:
    id: str
    workspace_id: str
    title: str
    description: str
    #: JSON array of strings
    acceptance_criteria: str
    #: JSON array of strings
    labels: str
    #: higher is claimed first
    priority: int
    state: TaskStateName
    created_at: str
    updated_at: str
    version: int = 0
    created_by: str | None = None
    current_run_id: str | None = None
    #: the comments of the last review that requested changes
    review_notes: str | None = None


@dataclass(frozen=True, slots=True)
class TaskRunRow:
    id: str
    task_id: str
    session_id: str
    state: TaskRunStateName
    claimed_at: str
    claim_expires_at: str
    updated_at: str
    ended_at: str | None = None
    summary: str | None = None
    failure: str | None = None
    #: what the run delivered for review (set by complete)
    delivery_id: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    #: JSON ``{"files", "added", "removed"}`` of the session's worktree when it had one
    diff_stat: str | None = None


@dataclass(frozen=True, slots=True)
class TaskReviewRow:
    id: str
    task_id: str
    run_id: str
    delivery_id: str
    decision: ReviewDecision
    comments: str
    created_at: str
    #: the reviewing session; ``None`` for the operator
    reviewer: str | None = None


@dataclass(frozen=True, slots=True)
class TaskQuery:
    workspace_id: str | None = None
    states: Sequence[TaskStateName] | None = None
    label: str | None = None
    limit: int = 200


class TaskReader(ABC):
    @abstractmethod
    def task(self, task_id: str) -> TaskRow | None: ...

    @abstractmethod
    def tasks(self, query: TaskQuery) -> list[TaskRow]:
        """Tasks, highest priority first, then oldest first (the order they are claimed in)."""

    @abstractmethod
    def task_run(self, run_id: str) -> TaskRunRow | None: ...

    @abstractmethod
    def task_runs(self, task_id: str) -> list[TaskRunRow]:
        """A task's runs, oldest first."""

    @abstractmethod
    def expired_task_runs(self, now: str) -> list[TaskRunRow]:
        """Active runs whose claim expired at or before ``now``."""

    @abstractmethod
    def task_reviews(self, task_id: str) -> list[TaskReviewRow]:
        """A task's reviews, oldest first."""


class TaskWriter(TaskReader):
    @abstractmethod
    def put_task(self, row: TaskRow) -> None:
        """Insert or replace a task row."""

    @abstractmethod
    def claim_next(
        self, workspace_id: str, run_id: str, now: str, *, task_id: str | None = None
    ) -> str | None:
        """Take the highest-priority ``todo`` task of the workspace (with ``task_id``: that
        task, if it is ``todo`` there) for ``run_id`` in one conditional update; the task's id,
        or ``None`` when none is left."""

    @abstractmethod
    def put_task_run(self, row: TaskRunRow) -> None: ...

    @abstractmethod
    def put_task_review(self, row: TaskReviewRow) -> None: ...
