"""``compozy workspace add|list|trust`` and ``compozy profile add|list``: where sessions live
and how they are presented. Sessions name them by id (``workspace_id``, ``profile_id``).
In-process or against a daemon, like every command; the output is the same either way.

``compozy workspace trust PATH`` (``--revoke`` to take it back) lets a workspace's
``.compozy/hooks.yaml`` run; ``compozy workspace list`` shows when each was trusted."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compozy_mcp.cli._options import operation_command, output_options
from compozy_mcp.cli._output import Column, emit, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context
    from compozy_mcp.hostapi import HostClient


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workspace = commands.add_parser("workspace", help="register and list workspaces")
    ws_commands = workspace.add_subparsers(
        dest="workspace_command", metavar="SUBCOMMAND", required=True
    )
    add = operation_command(ws_commands, ops.ADD_WORKSPACE)
    add.add_argument("path", metavar="PATH", help="the directory (relative paths are resolved)")
    add.add_argument("--name", help="display name (default: the directory's name)")
    output_options(add)
    output_options(operation_command(ws_commands, ops.LIST_WORKSPACES))
    trust = operation_command(ws_commands, ops.TRUST_WORKSPACE, ids=False)
    trust.add_argument("path", metavar="PATH", help="the workspace's directory, or its id")
    trust.add_argument(
        "--revoke", action="store_true", help="no longer trust it: its hooks.yaml stops running"
    )
    output_options(trust)

    profile = commands.add_parser("profile", help="create and list profiles")
    pr_commands = profile.add_subparsers(
        dest="profile_command", metavar="SUBCOMMAND", required=True
    )
    new = operation_command(pr_commands, ops.ADD_PROFILE)
    new.add_argument("name", metavar="NAME", help="the profile's name (unique)")
    new.add_argument("--color", help="presentation color, such as #2563eb")
    new.add_argument("--icon", help="presentation icon name")
    output_options(new)
    output_options(operation_command(pr_commands, ops.LIST_PROFILES))


WORKSPACE_TABLE = (
    Column.key("ID", "id"),
    Column.key("NAME", "name", flex=True),
    Column.key("PATH", "path", flex=True),
    Column("TRUSTED", lambda row: row.get("trusted_at") or "no"),
)
PROFILE_TABLE = (
    Column.key("ID", "id"),
    Column.key("NAME", "name", flex=True),
    Column.key("COLOR", "color"),
    Column.key("ICON", "icon"),
)


def _print(
    rows: list[dict[str, Any]],
    key: str,
    args: argparse.Namespace,
    columns: tuple[Column, ...],
    env: Mapping[str, str],
) -> None:
    emit(args, {key: rows}, lambda style: table(columns, rows, style), env=env)


def _workspace(args: argparse.Namespace) -> Callable[[HostClient], Awaitable[Mapping[str, Any]]]:
    if args.workspace_command == "list":
        return lambda host: host.call(ops.LIST_WORKSPACES, {})
    if args.workspace_command == "trust":
        return lambda host: _trust(host, args.path, not args.revoke)
    # Resolved here, where the user typed it; a daemon checks that it is a directory there.
    fields = {"path": str(Path(args.path).expanduser().resolve())}
    if args.name is not None:
        fields["name"] = args.name
    return lambda host: host.call(ops.ADD_WORKSPACE, fields)


async def _trust(host: HostClient, given: str, trusted: bool) -> Mapping[str, Any]:
    """Trust the workspace registered at ``given`` (a directory, resolved where the user typed
    it) or with that id."""
    path = str(Path(given).expanduser().resolve())
    listed = (await host.call(ops.LIST_WORKSPACES, {}))["workspaces"]
    found = next((w for w in listed if w["path"] == path), None) or next(
        (w for w in listed if w["id"] == given), None
    )
    if found is None:
        from compozy_mcp.errors import ResourceNotFound

        raise ResourceNotFound("", "workspace", f"{path} (register it: compozy workspace add)")
    return await host.call(
        ops.TRUST_WORKSPACE if trusted else ops.DISTRUST_WORKSPACE, {"workspace_id": found["id"]}
    )


def _profile(args: argparse.Namespace) -> Callable[[HostClient], Awaitable[Mapping[str, Any]]]:
    if args.profile_command == "list":
        return lambda host: host.call(ops.LIST_PROFILES, {})
    fields = {"name": args.name}
    for name in ("color", "icon"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    return lambda host: host.call(ops.ADD_PROFILE, fields)


def _rows(payload: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    """A list payload's rows, or the one row an ``add`` returns."""
    rows: list[dict[str, Any]] = payload.get(f"{kind}s", [payload.get(kind)])
    return rows


def run(args: argparse.Namespace, context: Context) -> int:
    if args.command == "workspace":
        rows = _rows(context.call(_workspace(args)), "workspace")
        _print(rows, "workspaces", args, WORKSPACE_TABLE, context.env)
    else:
        rows = _rows(context.call(_profile(args)), "profile")
        _print(rows, "profiles", args, PROFILE_TABLE, context.env)
    return EXIT_OK
