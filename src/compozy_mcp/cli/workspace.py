"""``compozy workspace add|list`` and ``compozy profile add|list``: where sessions live and how
they are presented. Sessions name them by id (``workspace_id``, ``profile_id``)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.cli.errors import EXIT_OK
from compozy_mcp.cli.options import output_options
from compozy_mcp.errors import ConfigError


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workspace = commands.add_parser("workspace", help="register and list workspaces")
    ws_commands = workspace.add_subparsers(
        dest="workspace_command", metavar="SUBCOMMAND", required=True
    )
    add = ws_commands.add_parser("add", help="register a directory as a workspace")
    add.add_argument("path", metavar="PATH")
    add.add_argument("--name", help="display name (default: the directory's name)")
    output_options(add)
    output_options(ws_commands.add_parser("list", help="list workspaces"))

    profile = commands.add_parser("profile", help="create and list profiles")
    pr_commands = profile.add_subparsers(
        dest="profile_command", metavar="SUBCOMMAND", required=True
    )
    new = pr_commands.add_parser("add", help="create a profile")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--color", help="presentation color, such as #2563eb")
    new.add_argument("--icon", help="presentation icon name")
    output_options(new)
    output_options(pr_commands.add_parser("list", help="list profiles"))


def _print(
    rows: list[dict[str, Any]], key: str, args: argparse.Namespace, columns: tuple[str, ...]
) -> None:
    if args.output == "json":
        print(jsonutil.dumps_pretty({key: rows}))
        return
    for row in rows:
        print("  ".join(str(row.get(column) or "") for column in columns).rstrip())


def run(args: argparse.Namespace) -> int:
    from compozy_mcp.app import open_app

    with open_app() as app:
        sessions = app.services.sessions
        if args.command == "workspace":
            if args.workspace_command == "add":
                path = Path(args.path).expanduser()
                if not path.is_dir():
                    raise ConfigError(f"{path} is not a directory")
                rows = [sessions.add_workspace(path, args.name)]
            else:
                rows = sessions.workspaces()
            _print([asdict(r) for r in rows], "workspaces", args, ("id", "name", "path"))
        else:
            if args.profile_command == "add":
                prows = [sessions.add_profile(args.name, args.color, args.icon)]
            else:
                prows = sessions.profiles()
            _print([asdict(r) for r in prows], "profiles", args, ("id", "name", "color", "icon"))
    return EXIT_OK
