"""``compozy task list | show | create | update | cancel | claim | heartbeat | complete | fail |
release | review | run``: work queued for agents (the ``compozy__task_*`` tools' complete
records, in-process or against a daemon), as the operator. ``task run`` is the one that does
more than a tool: it makes a session for the task, claims the task for it and prompts it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._output import Column, Style, emit, is_document, state_colour, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import CompozyError, ToolConflict
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

if TYPE_CHECKING:
    from compozy_mcp.hostapi import HostClient

CLAIM = "compozy__task_run_claim_next"
TASK_TABLE = (
    Column.key("ID", "task_id"),
    Column.key("STATE", "state", colour=state_colour),
    Column.key("PRIORITY", "priority"),
    Column.key("TITLE", "title", flex=True),
)


def _lines(task: dict[str, Any]) -> list[str]:
    lines = [f"{task['task_id']}  {task['state']}  priority {task['priority']}  {task['title']}"]
    if task.get("labels"):
        lines.append(f"  labels:     {', '.join(task['labels'])}")
    if task.get("description"):
        lines.append(f"  description: {task['description']}")
    for criterion in task.get("acceptance_criteria", []):
        lines.append(f"  - {criterion}")
    run = task.get("current_run")
    if run:
        lines.append(
            f"  run:        {run['run_id']} ({run['state']}) by {run['session_id']}, "
            f"claim until {run['claim_expires_at']}"
        )
        if run.get("delivery_id"):
            lines.append(f"  delivery:   {run['delivery_id']}: {run.get('summary', '')}")
    if task.get("review_notes"):
        lines.append(f"  review notes: {task['review_notes']}")
    for review in task.get("reviews", []):
        lines.append(
            f"  review {review['review_id']}: {review['decision']} of {review['delivery_id']}"
        )
    return lines


def _show(args: argparse.Namespace, context: Context, operation: str, fields: Any) -> int:
    payload = context.call(lambda host: host.call(ops.BY_NAME[f"task_{operation}"], fields))

    def readable(_style: Style) -> str:
        if "task" not in payload:
            return "no todo task to claim" if "claimed" in payload else str(payload)
        return "\n".join(_lines(payload["task"]))

    emit(args, payload, readable, env=context.env)
    return EXIT_OK


def _given(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value not in (None, [])}


def list_tasks(args: argparse.Namespace, context: Context) -> int:
    filters = _given(
        workspace_id=args.workspace, label=args.label, states=args.state, limit=args.limit
    )
    page = context.call(lambda host: host.call(ops.TASK_LIST, filters))

    def readable(style: Style) -> str:
        rows = page["tasks"]
        return table(TASK_TABLE, rows, style) if rows else "no tasks"

    emit(args, page, readable, env=context.env)
    return EXIT_OK


def _task_fields(args: argparse.Namespace) -> dict[str, Any]:
    return _given(
        title=args.title,
        description=args.description,
        acceptance_criteria=args.criterion,
        labels=args.label,
        priority=args.priority,
    )


def create(args: argparse.Namespace, context: Context) -> int:
    fields = {**_task_fields(args), **_given(workspace_id=args.workspace)}
    return _show(args, context, "create", fields)


def update(args: argparse.Namespace, context: Context) -> int:
    return _show(args, context, "update", {"task_id": args.task_id, **_task_fields(args)})


def _by_id(operation: str, field: str) -> Command:
    def command(args: argparse.Namespace, context: Context) -> int:
        return _show(args, context, operation, {field: getattr(args, field)})

    return command


def claim(args: argparse.Namespace, context: Context) -> int:
    fields = _given(session_id=args.session, lease_seconds=args.lease)
    return _show(args, context, "run_claim_next", fields)


def heartbeat(args: argparse.Namespace, context: Context) -> int:
    payload = context.call(
        lambda host: host.call(
            ops.TASK_RUN_HEARTBEAT, _given(run_id=args.run_id, lease_seconds=args.lease)
        )
    )
    run = payload["run"]
    emit(
        args,
        payload,
        lambda _style: f"{run['run_id']} claimed until {run['claim_expires_at']}",
        env=context.env,
    )
    return EXIT_OK


def complete(args: argparse.Namespace, context: Context) -> int:
    fields = _given(run_id=args.run_id, summary=args.summary, commit=args.commit)
    return _show(args, context, "run_complete", fields)


def fail(args: argparse.Namespace, context: Context) -> int:
    return _show(args, context, "run_fail", {"run_id": args.run_id, "reason": args.reason})


def review(args: argparse.Namespace, context: Context) -> int:
    decision = "accept" if args.accept else "request_changes"
    fields = _given(task_id=args.task_id, decision=decision, comments=args.comments)
    return _show(args, context, "run_review_submit", fields)


def task_prompt(task: dict[str, Any], run_id: str) -> str:
    """What a session made for a task is told: the task, and how to deliver it."""
    parts = [f"Task {task['task_id']}: {task['title']}"]
    if task.get("description"):
        parts.append(task["description"])
    if task.get("acceptance_criteria"):
        parts.append(
            "Acceptance criteria:\n"
            + "\n".join(f"- {criterion}" for criterion in task["acceptance_criteria"])
        )
    parts.append(
        f'You have claimed this task in run "{run_id}". Keep the claim with '
        "compozy__task_run_heartbeat while you work. When the work is done, call "
        "compozy__task_run_complete with that run_id and a summary of what you did; if you "
        "cannot do it, call compozy__task_run_fail with the reason."
    )
    return "\n\n".join(parts)


async def _session_for(host: HostClient, task: dict[str, Any], args: argparse.Namespace) -> Any:
    """A new session of ``--agent`` in the task's workspace: in a worktree of its own when the
    workspace is a git repository (unless ``--no-worktree``)."""
    fields: dict[str, Any] = {
        "agent_name": args.agent,
        "provider": args.agent,
        "workspace_id": task["workspace_id"],
        "name": task["title"][:120],
    }
    if not args.no_worktree:
        try:
            return await host.call(ops.CREATE_SESSION, {**fields, "worktree": True})
        except CompozyError as error:
            if str(error.reason) != Reason.NOT_A_GIT_REPOSITORY:
                raise
    return await host.call(ops.CREATE_SESSION, fields)


async def _start(host: HostClient, args: argparse.Namespace) -> dict[str, Any]:
    """Make the session and claim the task for it (the session is archived when the claim
    fails: another claimer won the task, or it is not ``todo``)."""
    task = (await host.call(ops.BY_NAME["task_status"], {"task_id": args.task_id}))["task"]
    if task["state"] != "todo":  # said before a session is made for nothing
        raise ToolConflict(
            CLAIM, f'task "{task["task_id"]}" is {task["state"]}; only a todo task can be claimed'
        )
    session = (await _session_for(host, task, args))["session"]
    claim = _given(session_id=session["id"], task_id=task["task_id"], lease_seconds=args.lease)
    try:
        claimed = await host.call(ops.BY_NAME["task_run_claim_next"], claim)
    except CompozyError:
        await host.call(ops.ARCHIVE_SESSION, {"session_id": session["id"]})
        print(f"{session['id']} archived: the claim failed", file=sys.stderr)
        raise
    return {"session": session, **claimed}


def run_task(args: argparse.Namespace, context: Context) -> int:
    """The session made and the claim print first (``-o json``: the first line; the turn's
    updates follow as ``session prompt`` prints them); ``--no-wait``: one document with the
    queued turn."""
    from compozy_mcp import jsonutil
    from compozy_mcp.cli import _turns as turns

    started = context.call(lambda host: _start(host, args))
    session, task = started["session"], started["task"]
    run_id = task["current_run"]["run_id"]
    text = task_prompt(task, run_id)
    worktree = session.get("worktree")
    claimed = f"{task['task_id']} claimed by {session['id']} (run {run_id})" + (
        f" in worktree {worktree['directory']}" if worktree else ""
    )
    if args.no_wait:
        queued = context.call(
            lambda host: host.call(
                ops.PROMPT_SESSION, {"prompt": text, "session_id": session["id"]}
            )
        )
        turn = queued["turn"]
        emit(
            args,
            {**started, "turn": turn},
            lambda _style: f"{claimed}\nturn {turn['turn']} {turn['status']}  {turn['turn_id']}",
            env=context.env,
        )
        return EXIT_OK
    print(jsonutil.dumps(started).decode() if is_document(args) else claimed, flush=True)
    prompted = argparse.Namespace(**vars(args), session_id=session["id"], text=text)
    return turns.prompt(prompted, context)


COMMANDS: dict[str, Command] = {
    "list": list_tasks,
    "show": _by_id("status", "task_id"),
    "create": create,
    "update": update,
    "cancel": _by_id("cancel", "task_id"),
    "claim": claim,
    "heartbeat": heartbeat,
    "complete": complete,
    "fail": fail,
    "release": _by_id("run_release", "run_id"),
    "review": review,
    "run": run_task,
}


def _task_options(cmd: argparse.ArgumentParser, *, title_required: bool) -> None:
    if title_required:
        cmd.add_argument("title", help="what is to be done, in a line")
    else:
        cmd.add_argument("--title", help="a new title")
    cmd.add_argument("--description", "-d", help="the work, in full")
    cmd.add_argument(
        "--criterion",
        action="append",
        default=[],
        metavar="TEXT",
        help="an acceptance criterion (repeat for more)",
    )
    cmd.add_argument(
        "--label", action="append", default=[], metavar="LABEL", help="a label (repeat)"
    )
    cmd.add_argument("--priority", type=int, help="higher is claimed first (0-1000)")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    task = commands.add_parser(
        "task",
        help="work queued for agents: list, show, create, update, cancel, claim, heartbeat, "
        "complete, fail, release, review, run",
    )
    sub = task.add_subparsers(dest="task_command", metavar="SUBCOMMAND", required=True)

    cmd = operation_command(sub, ops.TASK_LIST)
    cmd.add_argument("--workspace", metavar="ID", help="only this workspace's tasks")
    cmd.add_argument(
        "--state",
        action="append",
        default=[],
        choices=("todo", "in_progress", "in_review", "done", "cancelled"),
        help="only tasks in this state (repeat for more)",
    )
    cmd.add_argument("--label", help="only tasks with this label")
    cmd.add_argument("--limit", type=int, help="at most this many (default 200)")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_STATUS)
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_CREATE)
    _task_options(cmd, title_required=True)
    cmd.add_argument("--workspace", metavar="ID", help="its workspace (default: the default one)")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_UPDATE)
    _task_options(cmd, title_required=False)
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_CANCEL)
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_CLAIM_NEXT)
    cmd.add_argument("--session", required=True, metavar="ID", help="the session that works it")
    cmd.add_argument("--lease", type=int, metavar="SECONDS", help="how long the claim lasts")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_RUN_HEARTBEAT)
    cmd.add_argument("--lease", type=int, metavar="SECONDS", help="how long the claim lasts")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_RUN_COMPLETE)
    cmd.add_argument("--summary", "-m", required=True, help="what was done")
    cmd.add_argument("--commit", help="the commit that holds the work")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_RUN_FAIL)
    cmd.add_argument("--reason", required=True, help="why it failed")
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_RUN_RELEASE)
    output_options(cmd)

    cmd = operation_command(sub, ops.TASK_REVIEW)
    verdict = cmd.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--accept", action="store_true", help="accept it (done)")
    verdict.add_argument(
        "--request-changes", action="store_true", help="send it back with --comments"
    )
    cmd.add_argument("--comments", "-m", help="what to change")
    output_options(cmd)

    cmd = sub.add_parser(
        "run",
        help="make a session of an agent for a todo task (in a worktree when the workspace is "
        "a git repository), claim the task for it and prompt it with the task",
    )
    cmd.add_argument("task_id", metavar="ID", help="the task (task-...)")
    cmd.add_argument("--agent", required=True, help="the agent that works it (claude, codex, ...)")
    cmd.add_argument(
        "--no-worktree", action="store_true", help="work in the workspace itself, not a worktree"
    )
    cmd.add_argument("--lease", type=int, metavar="SECONDS", help="how long the claim lasts")
    cmd.add_argument("--no-wait", action="store_true", help="queue the prompt and return at once")
    output_options(cmd)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.task_command](args, context)
