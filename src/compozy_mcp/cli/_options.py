"""Pieces every command shares: the command type and the output options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context
    from compozy_mcp.hostapi.operation import Operation

Command = Callable[[argparse.Namespace, "Context"], int]


#: ``-o``: ``table`` (readable; ``text`` is its old name), or the document as JSON or YAML
OUTPUT_FORMATS = ("table", "json", "yaml", "text")


def output_options(parser: argparse.ArgumentParser) -> None:
    """``-o json|yaml|table``. (``-v`` is a global option: :mod:`compozy_mcp.cli._parsing`.)"""
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUT_FORMATS,
        default="table",
        help="output format: table (default), json or yaml",
    )


#: how a command line names each id a Host API path takes: metavar and help
ID_ARGUMENTS = {
    "session_id": ("ID", "the session"),
    "tool_id": ("TOOL_ID", "the tool's id (compozy tool list)"),
    "worktree_id": ("ID", "the worktree (wt-...)"),
    "task_id": ("ID", "the task (task-...)"),
    "run_id": ("RUN_ID", "the run"),
    "loop_id": ("ID", "the loop"),
    "workspace_id": ("ID", "the workspace"),
}


def operation_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    operation: Operation[Any],
    *,
    ids: bool = True,
    **options: Any,
) -> argparse.ArgumentParser:
    """The subcommand that runs ``operation``: its name and help from the operation's
    declaration (:mod:`compozy_mcp.hostapi.operations`) and, with ``ids``, a positional
    argument for each id its path takes; the caller adds the options."""
    if operation.cli is None:
        raise ValueError(f"{operation.name} declares no command")
    name = operation.cli.words.split()[-1]
    command = commands.add_parser(name, help=operation.cli.help, **options)
    for field in operation.path_fields if ids else ():
        metavar, text = ID_ARGUMENTS[field]
        command.add_argument(field, metavar=metavar, help=text)
    return command
