"""``compozy completion bash|zsh|fish``: the shell code that completes ``compozy``'s commands,
options and choices (argcomplete: the shell runs ``compozy`` with ``_ARGCOMPLETE`` set, and
:func:`compozy_mcp.cli.main.main` answers from the parser before running anything)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from compozy_mcp.cli._reporting import EXIT_OK

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context

SHELLS = ("bash", "zsh", "fish")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    completion = commands.add_parser(
        "completion",
        help="print the shell code that completes compozy commands (bash, zsh, fish)",
        description="Print the shell code that completes compozy's commands, options and "
        "choices. Load it in your shell's start-up file, or save it where your shell looks "
        "for completions.",
    )
    completion.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")


def run(args: argparse.Namespace, context: Context) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["compozy"], shell=args.shell))
    return EXIT_OK
