"""``compozy session status | list | create | archive | unarchive | delete``: the session
routes of the Host API (the complete ``SessionPayload``, never a view), in-process or against a
daemon; ``prompt | history | approve | cancel`` are in :mod:`.turns`.

``-o json`` prints exactly what the HTTP route returns (``{"session": ...}`` or
``{"sessions": [...], "next_cursor"?}``); text output is a readable summary.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from compozy_mcp.cli import _handoff as handoff
from compozy_mcp.cli import _turns as turns
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._output import Column, Style, emit, is_document, state_colour, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops


def _runtime(runtime: dict[str, Any]) -> str:
    text = str(runtime["status"])
    selection = runtime.get("effective") or runtime.get("selected")
    if selection:
        chosen = "/".join(selection[k] for k in ("provider", "model") if k in selection)
        if "reasoning_effort" in selection:
            chosen += f" ({selection['reasoning_effort']})"
        text += f"  {chosen}"
    text += f"  generation {runtime.get('generation', 0)}"
    return text + f"  selection_revision {runtime['selection_revision']}"


def summary(session: dict[str, Any]) -> list[str]:
    """A few lines a person reads; ``-o json`` has the whole record."""
    title = session["id"] + (f"  {session['name']}" if session.get("name") else "")
    where = session.get("workspace_id", "-")
    if session.get("branch"):
        where += f"  branch {session['branch']}"
    worktree = session.get("worktree")
    if worktree:
        where += f"  worktree {worktree['directory']} ({worktree['state']})"
    lineage = session.get("lineage", {})
    lines = [
        title,
        f"  agent:      {session['agent_name']} ({session.get('type', 'user')})",
        f"  state:      {session['state']}  badge {session['badge']}  "
        f"column {session.get('board_column', '-')}",
        f"  workspace:  {where}",
        f"  runtime:    {_runtime(session['runtime'])}",
        f"  fences:     transcript_epoch {session.get('transcript_epoch', 0)}",
    ]
    if lineage:
        parent = lineage.get("parent_session_id")
        lines.append(
            f"  lineage:    {lineage['kind']}"
            + (f" of {parent}" if parent else "")
            + f"  root {lineage.get('root_session_id', session['id'])}"
        )
    pending = session.get("pending_interactions", [])
    if pending:
        lines.append(f"  pending:    {len(pending)} interaction{'s' if len(pending) != 1 else ''}")
        lines.extend(
            f"    {item['interaction_id']} {item['kind']}"
            + (f": {item['title']}" if item.get("title") else "")
            for item in pending
        )
    if session.get("stop_reason"):
        lines.append(
            f"  stopped:    {session['stop_reason']} {session.get('stop_detail', '')}".rstrip()
        )
    if session.get("archived_at"):
        lines.append(f"  archived:   {session['archived_at']}")
    lines.append(f"  created:    {session['created_at']}  updated {session['updated_at']}")
    return lines


def _print(args: argparse.Namespace, payload: Mapping[str, Any]) -> int:
    emit(args, payload, lambda _style: "\n".join(summary(payload["session"])))
    return EXIT_OK


def status(args: argparse.Namespace, context: Context) -> int:
    return _print(
        args,
        context.call(lambda host: host.call(ops.SESSION_STATUS, {"session_id": args.session_id})),
    )


def archive(args: argparse.Namespace, context: Context) -> int:
    return _print(
        args,
        context.call(lambda host: host.call(ops.ARCHIVE_SESSION, {"session_id": args.session_id})),
    )


def delete(args: argparse.Namespace, context: Context) -> int:
    payload = context.call(
        lambda host: host.call(ops.DELETE_SESSION, {"session_id": args.session_id})
    )
    if is_document(args):
        emit(args, payload)
    else:
        deleted = payload["deleted"]
        count = len(deleted["sessions"])
        print(
            f"deleted {count} session{'s' if count != 1 else ''} "
            f"({', '.join(deleted['sessions'])}), {deleted['transcript_turns']} transcript "
            f"turns, {deleted['artifacts']} artifacts"
        )
    return EXIT_OK


def unarchive(args: argparse.Namespace, context: Context) -> int:
    return _print(
        args,
        context.call(
            lambda host: host.call(ops.UNARCHIVE_SESSION, {"session_id": args.session_id})
        ),
    )


CREATE_FLAGS = {
    "agent": "agent_name",
    "id": "session_id",
    "name": "name",
    "workspace": "workspace_id",
    "profile": "profile_id",
    "type": "type",
    "branch": "branch",
    "provider": "provider",
    "model": "model",
    "reasoning_effort": "reasoning_effort",
    "base": "base",
}


def create(args: argparse.Namespace, context: Context) -> int:
    fields = {
        name: getattr(args, flag)
        for flag, name in CREATE_FLAGS.items()
        if getattr(args, flag) is not None
    }
    if args.worktree:
        fields["worktree"] = True
    return _print(args, context.call(lambda host: host.call(ops.CREATE_SESSION, fields)))


def list_sessions(args: argparse.Namespace, context: Context) -> int:
    filters: dict[str, Any] = {
        "workspace_id": args.workspace,
        "state": args.state,
        "agent_name": args.agent,
        "parent_session_id": args.parent,
        "limit": args.limit,
        "cursor": args.cursor,
    }
    filters = {name: value for name, value in filters.items() if value is not None}
    if args.archived:
        filters["archived"] = True
    page = context.call(lambda host: host.call(ops.LIST_SESSIONS, filters))
    emit(args, page, lambda style: _session_table(page, args, style), env=context.env)
    return EXIT_OK


SESSION_TABLE = (
    Column.key("ID", "id"),
    Column.key("STATE", "state", colour=state_colour),
    Column.key("BADGE", "badge", colour=state_colour),
    Column.key("AGENT", "agent_name", flex=True),
    Column.key("UPDATED", "updated_at"),
    Column.key("NAME", "name", flex=True),
)
#: the flags of `session list` a next-page command repeats (all but --cursor)
LIST_FLAGS = ("workspace", "state", "agent", "parent", "limit")


def _session_table(page: Mapping[str, Any], args: argparse.Namespace, style: Style) -> str:
    sessions = page["sessions"]
    lines = [table(SESSION_TABLE, sessions, style) if sessions else "no sessions"]
    if "next_cursor" in page:
        lines.append(f"more: {next_page_command(args, page['next_cursor'])}")
    return "\n".join(lines)


def next_page_command(args: argparse.Namespace, cursor: str) -> str:
    """The command that lists the next page: this one's filters and limit, and the cursor."""
    import shlex

    words = ["compozy", "session", "list"]
    for flag in LIST_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            words += [f"--{flag}", str(value)]
    if args.archived:
        words.append("--archived")
    return shlex.join([*words, "--cursor", cursor])


COMMANDS: dict[str, Command] = {
    "status": status,
    "list": list_sessions,
    "create": create,
    "archive": archive,
    "unarchive": unarchive,
    "delete": delete,
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    session = commands.add_parser(
        "session", help="create, read and archive sessions; prompt their agents"
    )
    sub = session.add_subparsers(dest="session_command", metavar="SUBCOMMAND", required=True)

    for operation in (
        ops.SESSION_STATUS,
        ops.ARCHIVE_SESSION,
        ops.UNARCHIVE_SESSION,
        ops.DELETE_SESSION,
    ):
        output_options(operation_command(sub, operation))

    list_cmd = operation_command(sub, ops.LIST_SESSIONS)
    list_cmd.add_argument("--workspace", metavar="ID", help="only this workspace's sessions")
    list_cmd.add_argument(
        "--state", choices=("starting", "active", "stopping", "stopped"), help="only this state"
    )
    list_cmd.add_argument("--agent", metavar="NAME", help="only this agent's sessions")
    list_cmd.add_argument("--parent", metavar="ID", help="only children of this session")
    list_cmd.add_argument("--archived", action="store_true", help="list archived sessions")
    list_cmd.add_argument("--limit", type=int, metavar="N", help="at most N (default 50)")
    list_cmd.add_argument("--cursor", metavar="CURSOR", help="the next_cursor of a previous page")
    output_options(list_cmd)

    create_cmd = operation_command(sub, ops.CREATE_SESSION)
    create_cmd.add_argument("--agent", required=True, metavar="NAME", help="the agent's name")
    create_cmd.add_argument("--id", metavar="ID", help="the session id (generated if omitted)")
    create_cmd.add_argument("--name", help="a display name")
    create_cmd.add_argument("--workspace", metavar="ID", help="workspace id (default: ws_default)")
    create_cmd.add_argument("--profile", metavar="ID", help="profile id (default: prof_default)")
    create_cmd.add_argument("--type", choices=("user", "automation"), help="session type")
    create_cmd.add_argument(
        "--branch",
        help="the branch the session works on; with --worktree, the new branch (default "
        "compozy/<name>)",
    )
    create_cmd.add_argument(
        "--worktree",
        action="store_true",
        help="work in a git worktree of its own under $COMPOZY_HOME/worktrees, on a new branch",
    )
    create_cmd.add_argument(
        "--base", metavar="REF", help="with --worktree: the commit or branch to start from"
    )
    create_cmd.add_argument(
        "--provider",
        help="the agent that runs it: claude, codex, gemini, echo (compozy agent list)",
    )
    create_cmd.add_argument("--model", help="model (needs --provider)")
    create_cmd.add_argument(
        "--reasoning-effort", dest="reasoning_effort", help="reasoning effort (needs --provider)"
    )
    output_options(create_cmd)
    turns.add_parsers(sub)
    handoff.add_parsers(sub)


def run(args: argparse.Namespace, context: Context) -> int:
    name = args.session_command
    command = COMMANDS.get(name) or turns.COMMANDS.get(name) or handoff.COMMANDS[name]
    return command(args, context)
