"""``compozy session diff | merge | pr``: what a session changed in its worktree, and handing
it off (a merge into a branch, or a pull request opened with ``gh``).

``diff`` prints the unified patch (coloured on a terminal), or ``--stat`` the files with their
line counts; ``-o json`` prints the complete record (the patch included), read back whole when
it was stored as an artifact.
"""

from __future__ import annotations

import argparse
from typing import Any

from compozy_mcp.cli._artifacts import is_truncated, read_back
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._output import Style, emit
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops

#: patch lines by their first characters, and their colour
_PATCH_COLOURS = (
    ("diff --git", "bold"),
    ("+++", "bold"),
    ("---", "bold"),
    ("@@", "cyan"),
    ("+", "green"),
    ("-", "red"),
)
_STAT_WIDTH = 40


def coloured_patch(patch: str, style: Style) -> str:
    if not style.color:
        return patch.rstrip("\n")
    lines = []
    for line in patch.rstrip("\n").split("\n"):
        colour = next((c for prefix, c in _PATCH_COLOURS if line.startswith(prefix)), None)
        lines.append(style.paint(line, colour))
    return "\n".join(lines)


def stat(record: dict[str, Any], style: Style) -> str:
    """``git diff --stat``'s shape: a line per file, then the totals."""
    files = record["files"]
    if not files:
        return f"no changes against {_base(record)}"
    width = max(len(_name(f)) for f in files)
    biggest = max((f.get("added", 0) + f.get("removed", 0)) for f in files) or 1
    scale = min(1.0, _STAT_WIDTH / biggest)
    lines = []
    for change in files:
        if change.get("binary"):
            bar = "Bin"
        else:
            added, removed = change["added"], change["removed"]
            pluses = style.paint("+" * max(1 if added else 0, round(added * scale)), "green")
            minuses = style.paint("-" * max(1 if removed else 0, round(removed * scale)), "red")
            bar = f"{added + removed:>5} {pluses}{minuses}"
        lines.append(f" {_name(change):<{width}} | {bar}")
    totals = record["totals"]
    lines.append(
        f" {totals['files']} file{'s' if totals['files'] != 1 else ''} changed, "
        f"{totals['added']} insertion{'s' if totals['added'] != 1 else ''}(+), "
        f"{totals['removed']} deletion{'s' if totals['removed'] != 1 else ''}(-) "
        f"against {_base(record)}"
    )
    cut = record.get("truncated")
    if cut:
        lines.append(f" (the first {cut['files_shown']} of {cut['files_total']} files listed)")
    return "\n".join(lines)


def _name(change: dict[str, Any]) -> str:
    if change.get("old_path"):
        return f"{change['old_path']} => {change['path']}"
    return str(change["path"])


def _base(record: dict[str, Any]) -> str:
    base = record["base"]
    return f"{base.get('ref', '')} {base['commit'][:12]}".strip()


def diff(args: argparse.Namespace, context: Context) -> int:
    record = context.call(lambda host: host.call(ops.SESSION_DIFF, {"session_id": args.session_id}))
    if is_truncated(record):  # a large patch: stored whole as an artifact, read it back
        record = read_back(context, record)
    if args.stat:
        emit(args, record, lambda style: stat(record, style), env=context.env)
    else:
        emit(
            args,
            record,
            lambda style: (
                coloured_patch(record["patch"], style) or f"no changes against {_base(record)}"
            ),
            env=context.env,
        )
    return EXIT_OK


def merge(args: argparse.Namespace, context: Context) -> int:
    fields = {"into": args.into, "mode": args.mode, "message": args.message}
    fields = {name: value for name, value in fields.items() if value is not None}
    result = context.call(
        lambda host: host.call(ops.MERGE_SESSION, {**fields, "session_id": args.session_id})
    )
    emit(args, result, lambda _style: _merged(result), env=context.env)
    return EXIT_OK


def _merged(result: dict[str, Any]) -> str:
    outcome = result["outcome"]
    target = result["into"]
    if outcome == "up_to_date":
        return f"{target} already has the work of {result['branch']} ({result['commit'][:12]})"
    how = {
        "fast_forward": "fast-forwarded",
        "merge_commit": "merged with a merge commit",
        "squashed": "squashed into one commit",
    }[outcome]
    wip = (
        "; uncommitted changes were committed to the branch first"
        if result.get("committed_work_in_progress")
        else ""
    )
    return (
        f"{result['branch']} {how} into {target}: {result['previous'][:12]} -> "
        f"{result['commit'][:12]}{wip}"
    )


def pull_request(args: argparse.Namespace, context: Context) -> int:
    fields: dict[str, Any] = {
        "into": args.into,
        "title": args.title,
        "body": args.body,
        "remote": args.remote,
    }
    fields = {name: value for name, value in fields.items() if value is not None}
    if args.draft:
        fields["draft"] = True
    result = context.call(
        lambda host: host.call(ops.OPEN_PULL_REQUEST, {**fields, "session_id": args.session_id})
    )
    opened = result["pull_request"]
    verb = "opened" if result["created"] else "already open:"
    emit(
        args,
        result,
        lambda _style: (
            f"pull request #{opened['number']} {verb} {opened['url']} "
            f"({result['branch']} -> {result['into']})"
        ),
        env=context.env,
    )
    return EXIT_OK


COMMANDS: dict[str, Command] = {"diff": diff, "merge": merge, "pr": pull_request}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = operation_command(sub, ops.SESSION_DIFF)
    cmd.add_argument(
        "--stat", action="store_true", help="files and line counts instead of the patch"
    )
    output_options(cmd)

    cmd = operation_command(sub, ops.MERGE_SESSION)
    cmd.add_argument(
        "--into", metavar="BRANCH", help="the branch to merge into (default: the worktree's base)"
    )
    cmd.add_argument(
        "--mode",
        choices=("fast_forward", "merge", "squash"),
        help="fast_forward only, merge (the default: a merge commit unless it fast-forwards) "
        "or squash into one commit",
    )
    cmd.add_argument("--message", "-m", help="the merge or squash commit's message")
    output_options(cmd)

    cmd = operation_command(sub, ops.OPEN_PULL_REQUEST)
    cmd.add_argument(
        "--into", metavar="BRANCH", help="the base branch (default: the worktree's base)"
    )
    cmd.add_argument("--title", help="the title (default: the session's name)")
    cmd.add_argument("--body", help="the description")
    cmd.add_argument("--draft", action="store_true", help="open it as a draft")
    cmd.add_argument("--remote", metavar="NAME", help="the remote to push to (default: origin)")
    output_options(cmd)
