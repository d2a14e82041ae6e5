"""The task tools: ``compozy__task_create``, ``_list``, ``_status``, ``_update``, ``_cancel``,
and the runs agents work them in: ``compozy__task_run_claim_next``, ``_heartbeat``,
``_complete``, ``_fail``, ``_release`` and ``_review_submit``.

Who may act (see :mod:`compozy_mcp.sessions.tasks`): a managed session sees and changes the
tasks of its own workspace only; ``claim_next`` takes a ``session_id`` it acts for (itself,
the default, or a descendant, never its parent or a sibling: ``acts_on``); a run is acted on
by its session or an ancestor of it; a session never reviews a run it worked on.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Handler, Risk, ToolDefinition, count_preview
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    INTEGER,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.sessions.record_schema import SESSION_ID
from compozy_mcp.sessions.tasks import DEFAULT_LEASE_SECONDS
from compozy_mcp.store.tasks import TASK_RUN_STATES, TASK_STATES
from compozy_mcp.views import Each, Fields, ViewSpec

TASKS = ("compozy__tasks",)

TASK_ID = described(STRING, "Task id (task-...).")
RUN_ID = described(STRING, "Task run id (trun-...).")
TITLE = {"type": "string", "minLength": 1, "maxLength": 300}
TEXT = {"type": "string", "maxLength": 65_536}
PRIORITY = described(
    {"type": "integer", "minimum": 0, "maximum": 1000},
    "Higher is claimed first; default 0.",
)
LABELS = strings(maxItems=50)
CRITERIA = array({"type": "string", "minLength": 1, "maxLength": 2000}, maxItems=100)
LEASE = described(
    {"type": "integer", "minimum": 30, "maximum": 86_400},
    f"Seconds the claim lasts without a heartbeat; default {DEFAULT_LEASE_SECONDS}.",
)

TASK_RUN = obj(
    {
        "run_id": STRING,
        "task_id": STRING,
        "session_id": STRING,
        "state": enum(*TASK_RUN_STATES),
        "claimed_at": TIMESTAMP,
        "claim_expires_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    {
        "ended_at": TIMESTAMP,
        "summary": STRING,
        "failure": STRING,
        "delivery_id": STRING,
        "branch": STRING,
        "commit": STRING,
        "diff_stat": obj({"files": COUNT, "added": COUNT, "removed": COUNT}),
    },
    order=(
        "run_id",
        "task_id",
        "session_id",
        "state",
        "claimed_at",
        "claim_expires_at",
        "updated_at",
        "ended_at",
        "summary",
        "failure",
        "delivery_id",
        "branch",
        "commit",
        "diff_stat",
    ),
)
#: what compact keeps of a run: who holds it, until when, and what it delivered
RUN_COMPACT = Fields.of(
    "run_id", "task_id", "session_id", "state", "claim_expires_at", "delivery_id", "branch"
)
TASK_REVIEW = obj(
    {
        "review_id": STRING,
        "task_id": STRING,
        "run_id": STRING,
        "delivery_id": STRING,
        "decision": enum("accept", "request_changes"),
        "comments": STRING,
        "created_at": TIMESTAMP,
    },
    {"reviewer": STRING},
    order=(
        "review_id",
        "task_id",
        "run_id",
        "delivery_id",
        "decision",
        "comments",
        "reviewer",
        "created_at",
    ),
)
#: compact review records keep delivery_id (spec: "task review records preserve delivery_id")
REVIEW_COMPACT = Fields.of("review_id", "task_id", "run_id", "delivery_id", "decision")
TASK = obj(
    {
        "task_id": STRING,
        "workspace_id": STRING,
        "title": STRING,
        "state": enum(*TASK_STATES),
        "priority": INTEGER,
        "labels": strings(),
        "description": STRING,
        "acceptance_criteria": strings(),
        "version": COUNT,
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    {
        "created_by": STRING,
        "current_run": TASK_RUN,
        "review_notes": STRING,
        "runs": array(TASK_RUN),
        "reviews": array(TASK_REVIEW),
    },
    order=(
        "task_id",
        "workspace_id",
        "title",
        "state",
        "priority",
        "labels",
        "description",
        "acceptance_criteria",
        "created_by",
        "current_run",
        "review_notes",
        "runs",
        "reviews",
        "version",
        "created_at",
        "updated_at",
    ),
)
#: what compact keeps of a task: identity, state, the current run, what a follow-up takes
TASK_COMPACT = Fields.of(
    "task_id",
    "workspace_id",
    "title",
    "state",
    "priority",
    "labels",
    "review_notes",
    current_run=RUN_COMPACT,
    reviews=Each(REVIEW_COMPACT),
)
TASK_FOLLOW_UP = ("task.task_id", "task.current_run.run_id")
SINGLE_TASK = obj({"task": TASK})
SINGLE_TASK_VIEWS = ViewSpec(Fields({"task": TASK_COMPACT}), follow_up=TASK_FOLLOW_UP)


def _task_preview(result: dict[str, Any]) -> str:
    task = result["task"]
    return f"{task['task_id']} {task['state']}: {task['title']}"


async def _create(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"task": await call.services.tasks.create(call.info, args)}


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    tasks = await call.services.tasks.list(
        call.info,
        workspace_id=args.get("workspace_id"),
        states=args.get("states"),
        label=args.get("label"),
        limit=args.get("limit", 200),
    )
    return {"tasks": tasks}


async def _status(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"task": await call.services.tasks.status(call.info, args["task_id"])}


async def _update(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    changes = {key: value for key, value in args.items() if key != "task_id"}
    return {"task": await call.services.tasks.update(call.info, args["task_id"], changes)}


async def _cancel(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"task": await call.services.tasks.cancel(call.info, args["task_id"])}


async def _claim_next(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.claim_next(
        call.info,
        args["session_id"],
        lease_seconds=args.get("lease_seconds", DEFAULT_LEASE_SECONDS),
        task_id=args.get("task_id"),
    )


async def _heartbeat(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.heartbeat(
        call.info, args["run_id"], lease_seconds=args.get("lease_seconds", DEFAULT_LEASE_SECONDS)
    )


async def _complete(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.complete(
        call.info, args["run_id"], summary=args["summary"], commit=args.get("commit")
    )


async def _fail(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.fail(call.info, args["run_id"], args["reason"])


async def _release(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.release(call.info, args["run_id"])


async def _review_submit(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.tasks.review_submit(
        call.info,
        args["task_id"],
        decision=args["decision"],
        comments=args.get("comments", ""),
    )


def _claim_preview(result: dict[str, Any]) -> str:
    if not result["claimed"]:
        return "no todo task to claim"
    return f"claimed {_task_preview(result)}"


def _single_task_tool(
    tool_id: str,
    *,
    description: str,
    input_schema: dict[str, Any],
    handler: Handler,
    risk: Risk,
    idempotent: bool = False,
) -> ToolDefinition:
    """A tool that answers one task (``{"task": ...}``), with the task views."""
    return ToolDefinition(
        id=tool_id,
        description=description,
        input_schema=input_schema,
        output_schema=SINGLE_TASK,
        handler=handler,
        risk=risk,
        toolsets=TASKS,
        views=SINGLE_TASK_VIEWS,
        preview=_task_preview,
        idempotent=idempotent,
    )


def _run_tool(
    tool_id: str,
    description: str,
    handler: Handler,
    extra: dict[str, Any],
    *,
    required: dict[str, Any] | None = None,
) -> ToolDefinition:
    """A tool that ends or changes a run and answers its task."""
    return _single_task_tool(
        tool_id,
        description=description,
        input_schema=tool_input({"run_id": RUN_ID, **(required or {})}, extra),
        handler=handler,
        risk=Risk.MUTATING,
    )


def task_tools() -> list[ToolDefinition]:
    return [
        _single_task_tool(
            "compozy__task_create",
            description="Queue a task for agents: title, description, acceptance criteria, "
            "labels and priority, in a workspace (a session: its own). It starts todo.",
            input_schema=tool_input(
                {"title": described(TITLE, "What is to be done, in a line.")},
                {
                    "workspace_id": described(
                        STRING,
                        "Workspace of the task; default: a session's own, else the default one.",
                    ),
                    "description": described(TEXT, "The work, in full."),
                    "acceptance_criteria": described(CRITERIA, "What a review checks."),
                    "labels": described(LABELS, "Labels to filter by."),
                    "priority": PRIORITY,
                },
            ),
            handler=_create,
            risk=Risk.MUTATING,
        ),
        ToolDefinition(
            id="compozy__task_list",
            description="List tasks in the order they are claimed (priority, then age); a "
            "session sees its own workspace's.",
            input_schema=tool_input(
                optional={
                    "workspace_id": described(STRING, "Only this workspace's tasks."),
                    "states": described(
                        array(enum(*TASK_STATES), minItems=1, uniqueItems=True),
                        "Only tasks in these states.",
                    ),
                    "label": described(STRING, "Only tasks with this label."),
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 500,
                        "description": "At most this many; default 200.",
                    },
                }
            ),
            output_schema=obj({"tasks": array(TASK)}),
            handler=_list,
            risk=Risk.READ,
            toolsets=TASKS,
            views=ViewSpec(
                Fields({"tasks": Each(TASK_COMPACT)}),
                follow_up=("tasks[].task_id", "tasks[].current_run.run_id"),
            ),
            preview=count_preview("tasks", "task"),
            idempotent=True,
        ),
        _single_task_tool(
            "compozy__task_status",
            description="Read one task with its runs (who worked on it, what they delivered) "
            "and its reviews.",
            input_schema=tool_input({"task_id": TASK_ID}),
            handler=_status,
            risk=Risk.READ,
            idempotent=True,
        ),
        _single_task_tool(
            "compozy__task_update",
            description="Change a task's title, description, acceptance criteria, labels or "
            "priority (not once it is done or cancelled).",
            input_schema=tool_input(
                {"task_id": TASK_ID},
                {
                    "title": described(TITLE, "New title."),
                    "description": described(TEXT, "New description."),
                    "acceptance_criteria": described(CRITERIA, "New acceptance criteria."),
                    "labels": described(LABELS, "New labels (replacing the old ones)."),
                    "priority": PRIORITY,
                },
            ),
            handler=_update,
            risk=Risk.MUTATING,
        ),
        _single_task_tool(
            "compozy__task_cancel",
            description="Cancel a task that is not done; a run working on it ends cancelled.",
            input_schema=tool_input({"task_id": TASK_ID}),
            handler=_cancel,
            risk=Risk.DESTRUCTIVE,
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__task_run_claim_next",
            description="Claim the highest-priority todo task of the session's workspace for "
            "the session (default: the calling one): it goes in_progress in a run the session "
            "keeps with heartbeats. Two sessions never claim the same task. With task_id, "
            "that task (it must be todo in the session's workspace).",
            input_schema=tool_input(
                {"session_id": SESSION_ID},
                {
                    "lease_seconds": LEASE,
                    "task_id": described(TASK_ID, "Claim this task instead of the next one."),
                },
            ),
            output_schema=obj(
                {"claimed": BOOLEAN, "session_id": STRING},
                {"task": TASK},
            ),
            handler=_claim_next,
            risk=Risk.MUTATING,
            toolsets=TASKS,
            views=ViewSpec(
                Fields.of("claimed", "session_id", task=TASK_COMPACT),
                follow_up=("session_id", "task.task_id", "task.current_run.run_id"),
            ),
            preview=_claim_preview,
            acts_on=("session_id",),
            scope_session_field="session_id",
        ),
        ToolDefinition(
            id="compozy__task_run_heartbeat",
            description="Extend a run's claim; a run whose claim expires goes back to todo.",
            input_schema=tool_input({"run_id": RUN_ID}, {"lease_seconds": LEASE}),
            output_schema=obj({"run": TASK_RUN}),
            handler=_heartbeat,
            risk=Risk.MUTATING,
            toolsets=TASKS,
            views=ViewSpec(Fields({"run": RUN_COMPACT}), follow_up=("run.run_id",)),
            preview=lambda r: f"{r['run']['run_id']} until {r['run']['claim_expires_at']}",
            idempotent=True,
        ),
        _run_tool(
            "compozy__task_run_complete",
            "Deliver a run's work for review with a summary (and the session's worktree "
            "branch and diff stat when it has one): the task goes in_review.",
            _complete,
            {"commit": described(STRING, "The commit that holds the work.")},
            required={"summary": described({**TEXT, "minLength": 1}, "What was done.")},
        ),
        _run_tool(
            "compozy__task_run_fail",
            "End a run as failed, with why: the task goes back to todo.",
            _fail,
            {},
            required={"reason": described({**TEXT, "minLength": 1}, "Why it failed.")},
        ),
        _run_tool(
            "compozy__task_run_release",
            "Give a claimed task back unfinished: the task goes back to todo.",
            _release,
            {},
        ),
        ToolDefinition(
            id="compozy__task_run_review_submit",
            description="Review an in_review task's delivery: accept (done) or "
            "request_changes with comments (back to in_progress for the same session, whose "
            "agent gets the comments as its next prompt; todo if that session has ended). A "
            "session never reviews its own run.",
            input_schema=tool_input(
                {
                    "task_id": TASK_ID,
                    "decision": described(enum("accept", "request_changes"), "The verdict."),
                },
                {"comments": described(TEXT, "What to change (required to request changes).")},
            ),
            output_schema=obj({"review": TASK_REVIEW, "task": TASK}),
            handler=_review_submit,
            risk=Risk.MUTATING,
            toolsets=TASKS,
            views=ViewSpec(
                Fields({"review": REVIEW_COMPACT, "task": TASK_COMPACT}),
                follow_up=("review.delivery_id", "task.task_id", "task.current_run.run_id"),
            ),
            preview=lambda r: f"{r['review']['decision']}: {_task_preview(r)}",
        ),
    ]
