"""``compozy``: entry point and argument parsing. Subcommands live in their own modules."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from compozy_mcp import __version__
from compozy_mcp.errors import CompozyError

Command = Callable[[argparse.Namespace], int]


def _output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json"),
        default="text",
        help="output format (default: text)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="on failure, also print the dispatch diagnostic",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compozy",
        description="Managed agent sessions: native tools with compact and full result views.",
    )
    parser.add_argument("--version", action="version", version=f"compozy-mcp {__version__}")
    parser.add_argument("--home", help="data directory (default: $COMPOZY_HOME or ~/.compozy)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    tool = commands.add_parser("tool", help="list, inspect, search and invoke native tools")
    tool_commands = tool.add_subparsers(dest="tool_command", metavar="SUBCOMMAND", required=True)

    invoke = tool_commands.add_parser("invoke", help="invoke a tool with a JSON input")
    invoke.add_argument("tool_id", metavar="TOOL_ID")
    invoke.add_argument(
        "--input",
        default="{}",
        metavar="JSON",
        help="the tool input: a JSON object, @FILE to read it from a file, or - for stdin",
    )
    invoke.add_argument("--session", metavar="ID", help="call as this managed session")
    _output_option(invoke)

    info = tool_commands.add_parser("info", help="show a tool's contract")
    info.add_argument("tool_id", metavar="TOOL_ID")
    _output_option(info)

    listing = tool_commands.add_parser("list", help="list the native tools")
    listing.add_argument("--toolset", help="only tools of this toolset")
    _output_option(listing)

    search = tool_commands.add_parser("search", help="search the native tools")
    search.add_argument("query", metavar="QUERY")
    _output_option(search)
    return parser


def _command(args: argparse.Namespace) -> Command:
    if args.command == "tool":
        from compozy_mcp.cli import tool

        return tool.COMMANDS[args.tool_command]
    raise AssertionError(args.command)  # argparse only lets known commands through


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.home:
        os.environ["COMPOZY_HOME"] = args.home
    try:
        return _command(args)(args)
    except CompozyError as error:
        from compozy_mcp.cli.errors import report

        return report(
            error,
            json_output=getattr(args, "output", "text") == "json",
            verbose=getattr(args, "verbose", False),
        )
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into a command that closed early (``| head``) is not an error.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
