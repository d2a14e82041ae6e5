"""``compozy catalog release-note``: what changed for the tools with result views."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from compozy_mcp.cli._reporting import EXIT_OK

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context

FORMATS = ("markdown", "text", "json", "yaml")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    catalog = commands.add_parser("catalog", help="facts about the native tool catalog")
    catalog_commands = catalog.add_subparsers(
        dest="catalog_command", metavar="SUBCOMMAND", required=True
    )
    note = catalog_commands.add_parser(
        "release-note",
        help="the release note: every tool whose default changed, and the fields that moved to "
        "the full view",
    )
    note.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default="markdown",
        help="output format: markdown (default), text, json or yaml",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    # the registry only: no store, no MCP SDK
    from compozy_mcp import releasenote
    from compozy_mcp.native import build_registry

    found = releasenote.changes(build_registry())
    if args.output in ("json", "yaml"):
        from compozy_mcp.cli._output import emit

        emit(args, releasenote.payload(found))
    elif args.output == "text":
        sys.stdout.write(releasenote.text(found))
    else:
        sys.stdout.write(releasenote.markdown(found))
    return EXIT_OK
