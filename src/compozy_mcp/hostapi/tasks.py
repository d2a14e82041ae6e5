"""The task and heartbeat tools as HTTP operations: tables that the routes, the OpenAPI
document and the remote client all read, so the three never disagree on a path, a method or a
field.

Each operation is a ``compozy__task_<name>`` (or ``compozy__agent_heartbeat_<name>``) tool
called as the operator, answering its full record; the id in the path (``task_id``, ``run_id``,
``session_id``) is that tool input, the body the rest.
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
    #: the tool is ``<family><name>``
    family: str = "compozy__task_"

    @property
    def tool_id(self) -> str:
        return f"{self.family}{self.name}"

    @property
    def path_field(self) -> str | None:
        for field in ("task_id", "run_id", "session_id"):
            if "{" + field + "}" in self.path:
                return field
        return None

    @property
    def route_path(self) -> str:
        """The path as the router matches it: a session id may hold ``/`` (as on every
        ``/sessions/{id}/...`` route)."""
        return self.path.replace("{session_id}", "{session_id:path}")

    @property
    def has_body(self) -> bool:
        return self.method in ("POST", "PATCH", "PUT")


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

HEARTBEAT = "compozy__agent_heartbeat_"
HEARTBEAT_OPERATIONS: tuple[TaskOperation, ...] = (
    TaskOperation(
        "status",
        "GET",
        "/sessions/{session_id}/heartbeat",
        "heartbeatStatus",
        "A session's heartbeat: the policy its wakes run under, the next wake, the last outcome.",
        family=HEARTBEAT,
    ),
    TaskOperation(
        "set",
        "PUT",
        "/sessions/{session_id}/heartbeat",
        "setHeartbeat",
        "Give a session a heartbeat (an interval or a cron expression, a prompt, quiet hours).",
        family=HEARTBEAT,
    ),
    TaskOperation(
        "wake",
        "POST",
        "/sessions/{session_id}/heartbeat/wake",
        "wakeHeartbeat",
        "Wake a session now with its heartbeat prompt (skipped while a turn runs).",
        family=HEARTBEAT,
    ),
)
HEARTBEAT_OPERATION = {operation.name: operation for operation in HEARTBEAT_OPERATIONS}
