"""The task tools as HTTP operations: one table that the routes, the OpenAPI document and the
remote client all read, so the three never disagree on a path, a method or a field.

Each operation is a ``compozy__task_<name>`` tool called as the operator, answering its full
record; the id in the path (``task_id``, ``run_id``) is that tool input, the body the rest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TaskOperation:
    #: the tool is ``compozy__task_<name>``
    name: str
    method: str
    #: the path under ``/api``, with ``{task_id}`` or ``{run_id}`` when the tool takes one
    path: str
    operation_id: str
    summary: str
    #: the status of a success
    status: int = 200

    @property
    def tool_id(self) -> str:
        return f"compozy__task_{self.name}"

    @property
    def path_field(self) -> str | None:
        for field in ("task_id", "run_id"):
            if "{" + field + "}" in self.path:
                return field
        return None

    @property
    def has_body(self) -> bool:
        return self.method in ("POST", "PATCH")


TASK_OPERATIONS: tuple[TaskOperation, ...] = (
    TaskOperation(
        "list",
        "GET",
        "/tasks",
        "listTasks",
        "Tasks in the order they are claimed (priority, then age).",
    ),
    TaskOperation("create", "POST", "/tasks", "createTask", "Queue a task.", status=201),
    TaskOperation(
        "run_claim_next",
        "POST",
        "/tasks/claim",
        "claimTask",
        "A session claims its workspace's highest-priority todo task.",
    ),
    TaskOperation(
        "status", "GET", "/tasks/{task_id}", "taskStatus", "One task with its runs and reviews."
    ),
    TaskOperation("update", "PATCH", "/tasks/{task_id}", "updateTask", "Change a task."),
    TaskOperation("cancel", "POST", "/tasks/{task_id}/cancel", "cancelTask", "Cancel a task."),
    TaskOperation(
        "run_review_submit",
        "POST",
        "/tasks/{task_id}/review",
        "reviewTask",
        "Accept an in_review task's delivery or request changes.",
    ),
    TaskOperation(
        "run_heartbeat",
        "POST",
        "/task-runs/{run_id}/heartbeat",
        "heartbeatTaskRun",
        "Extend a run's claim.",
    ),
    TaskOperation(
        "run_complete",
        "POST",
        "/task-runs/{run_id}/complete",
        "completeTaskRun",
        "Deliver a run's work for review.",
    ),
    TaskOperation(
        "run_fail",
        "POST",
        "/task-runs/{run_id}/fail",
        "failTaskRun",
        "End a run as failed; the task goes back to todo.",
    ),
    TaskOperation(
        "run_release",
        "POST",
        "/task-runs/{run_id}/release",
        "releaseTaskRun",
        "Give a claimed task back; it goes back to todo.",
    ),
)
TASK_OPERATION = {operation.name: operation for operation in TASK_OPERATIONS}
#: ``GET /api/tasks`` query parameters (``state``: comma-separated states)
TASK_LIST_QUERY = ("workspace_id", "state", "label", "limit")
