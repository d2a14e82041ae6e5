"""``compozy worktree list | inspect | create | remove``: the git worktrees sessions work in
(the ``compozy__worktree_*`` tools' complete records, in-process or against a daemon)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._output import Column, Style, emit, state_colour, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops

WORKTREE_TABLE = (
    Column.key("ID", "worktree_id"),
    Column.key("SESSION", "session_id"),
    Column.key("STATE", "state", colour=state_colour),
    Column.key("BRANCH", "branch", flex=True),
    Column.key("DIRECTORY", "directory", flex=True),
)


def _lines(tree: dict[str, Any]) -> list[str]:
    base = tree["base"]
    lines = [
        f"{tree['worktree_id']}  {tree['state']}  session {tree['session_id']}",
        f"  branch:     {tree['branch']}",
        f"  base:       {base.get('ref', '-')} {base['commit'][:12]}",
        f"  directory:  {tree['directory']}",
    ]
    if "head" in tree:
        lines.append(f"  head:       {str(tree['head'])[:12]}")
    if tree.get("dirty"):
        lines.append(f"  uncommitted: {len(tree['dirty'])} file(s): {', '.join(tree['dirty'][:8])}")
    changes = tree.get("changes")
    if changes:
        lines.append(
            f"  changes:    {changes['files']} file(s) +{changes['added']} -{changes['removed']} "
            f"(at {changes['checked_at']})"
        )
    merged = tree.get("merged")
    if merged:
        lines.append(f"  merged:     into {merged['into']} at {merged['at']}")
    if tree.get("work_in_progress_commit"):
        lines.append(
            f"  committed:  uncommitted work as {tree['work_in_progress_commit'][:12]} "
            f"on {tree['branch']}"
        )
    return lines


def _print(args: argparse.Namespace, context: Context, payload: Mapping[str, Any]) -> int:
    emit(args, payload, lambda _style: "\n".join(_lines(payload["worktree"])), env=context.env)
    return EXIT_OK


def list_worktrees(args: argparse.Namespace, context: Context) -> int:
    filters: dict[str, Any] = {"workspace_id": args.workspace, "session_id": args.session}
    filters = {name: value for name, value in filters.items() if value is not None}
    if args.all:
        filters["include_removed"] = True
    page = context.call(lambda host: host.call(ops.LIST_WORKTREES, filters))

    def readable(style: Style) -> str:
        rows = page["worktrees"]
        return table(WORKTREE_TABLE, rows, style) if rows else "no worktrees"

    emit(args, page, readable, env=context.env)
    return EXIT_OK


def inspect(args: argparse.Namespace, context: Context) -> int:
    return _print(
        args,
        context,
        context.call(lambda host: host.call(ops.WORKTREE_INFO, {"worktree_id": args.worktree_id})),
    )


def create(args: argparse.Namespace, context: Context) -> int:
    fields = {"session_id": args.session, "branch": args.branch, "base": args.base}
    fields = {name: value for name, value in fields.items() if value is not None}
    return _print(args, context, context.call(lambda host: host.call(ops.CREATE_WORKTREE, fields)))


def remove(args: argparse.Namespace, context: Context) -> int:
    payload = context.call(
        lambda host: host.call(
            ops.REMOVE_WORKTREE, {"worktree_id": args.worktree_id, "force": args.force}
        )
    )
    return _print(args, context, payload)


COMMANDS: dict[str, Command] = {
    "list": list_worktrees,
    "inspect": inspect,
    "create": create,
    "remove": remove,
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worktree = commands.add_parser(
        "worktree", help="the git worktrees sessions work in: list, inspect, create, remove"
    )
    sub = worktree.add_subparsers(dest="worktree_command", metavar="SUBCOMMAND", required=True)

    cmd = operation_command(sub, ops.LIST_WORKTREES)
    cmd.add_argument("--workspace", metavar="ID", help="only this workspace's worktrees")
    cmd.add_argument("--session", metavar="ID", help="only this session's worktrees")
    cmd.add_argument("--all", action="store_true", help="removed worktrees too")
    output_options(cmd)

    cmd = operation_command(sub, ops.WORKTREE_INFO)
    output_options(cmd)

    cmd = operation_command(sub, ops.CREATE_WORKTREE)
    cmd.add_argument("--session", required=True, metavar="ID", help="the session")
    cmd.add_argument(
        "--branch", help="the new branch (default: the session's branch, else compozy/<name>)"
    )
    cmd.add_argument("--base", metavar="REF", help="the commit or branch to start from")
    output_options(cmd)

    cmd = operation_command(sub, ops.REMOVE_WORKTREE)
    cmd.add_argument(
        "--force",
        action="store_true",
        help="commit uncommitted changes to its branch, then remove it",
    )
    output_options(cmd)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.worktree_command](args, context)
