"""``compozy mcp``: upstream MCP servers, and the Host API as an MCP server.

- ``compozy mcp add [--scope user|workspace] [--transport stdio|http] [-e KEY=VALUE]...
  [-H 'Name: value']... NAME COMMAND_OR_URL [ARGS...]`` defines a server (the shape of
  ``claude mcp add``); ``compozy mcp remove NAME`` removes it; ``compozy mcp list`` shows each
  server and what every running proxy or daemon on this home reports about it (state, tools,
  last error), ``--check`` also tries each one now. Against a daemon (``--url``,
  ``--socket``, ``COMPOZY_URL``), ``list`` shows the daemon's own connections.
- ``compozy mcp serve``: the Host API as MCP tools (``compozy_host__*``) on stdio, in-process on
  the store or against a daemon.

Definitions take effect when a proxy or the daemon starts. ``add``, ``remove`` and ``list``
load no MCP SDK (``--check`` does).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compozy_mcp.cli._options import output_options
from compozy_mcp.cli._output import emit, is_document
from compozy_mcp.cli._reporting import EXIT_FAILED, EXIT_OK
from compozy_mcp.errors import ConfigError, InvalidRequest
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context
    from compozy_mcp.upstream.config import ConfigFile, ServerDefinition


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="upstream MCP servers; the Host API as an MCP server")
    sub = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    sub.add_parser(
        "serve",
        help="serve the compozy_host__* tools (sessions and tools of the Host API) on stdio",
    )

    add = sub.add_parser(
        "add",
        help="define an MCP server the proxy serves as <name>__<tool>",
        description="Define an upstream MCP server. Its tools are served by `compozy proxy` "
        "and the daemon as NAME__<tool>, unchanged. stdio: compozy mcp add NAME -- COMMAND "
        "[ARGS...]; Streamable HTTP: compozy mcp add NAME URL (or --transport http).",
    )
    _scope_option(add, default="user")
    add.add_argument(
        "--transport",
        choices=("stdio", "http"),
        help="stdio (a command) or http (a Streamable HTTP URL); default: http for an "
        "http(s):// target, stdio otherwise",
    )
    add.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment of a stdio server (repeatable; ${VAR} is read when it starts)",
    )
    add.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header of an http server (repeatable; ${VAR} is read when it connects)",
    )
    add.add_argument("name", metavar="NAME", help="the server's name: its tools are NAME__<tool>")
    add.add_argument(
        "target", metavar="COMMAND_OR_URL", help="the command of a stdio server, or its URL"
    )
    add.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARGS", help="the stdio command's arguments"
    )
    output_options(add)

    remove = sub.add_parser("remove", help="remove an MCP server definition")
    _scope_option(remove, default=None)
    remove.add_argument("name", metavar="NAME", help="the server's name")
    output_options(remove)

    listing = sub.add_parser(
        "list", help="list MCP servers with what each running proxy reports about them"
    )
    listing.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace directory (default: $COMPOZY_WORKSPACE or the current directory)",
    )
    listing.add_argument(
        "--check", action="store_true", help="also connect to each server now and list its tools"
    )
    output_options(listing)


def _scope_option(parser: argparse.ArgumentParser, *, default: str | None) -> None:
    parser.add_argument(
        "-s",
        "--scope",
        choices=("user", "workspace"),
        default=default,
        help="user: $COMPOZY_HOME/mcp.yaml; workspace: .compozy/mcp.yaml in the workspace"
        + (f" (default: {default})" if default else " (default: whichever defines NAME)"),
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace directory (default: $COMPOZY_WORKSPACE or the current directory)",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    if args.mcp_command == "add":
        return _add(args, context)
    if args.mcp_command == "remove":
        return _remove(args, context)
    if args.mcp_command == "list":
        return _list(args, context)
    return _serve(context)


# --- add / remove --------------------------------------------------------------------------


def _file(scope: str, args: argparse.Namespace, context: Context) -> ConfigFile:
    from compozy_mcp.upstream.config import user_file, workspace_file

    if scope == "user":
        return user_file(context.settings().home)
    return workspace_file(context.workspace(args.workspace))


def _pairs(items: list[str], separator: str, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            shown = "KEY=VALUE" if separator == "=" else "'NAME: VALUE'"
            raise InvalidRequest(f"{option} takes {shown}, got {item!r}")
        out[key.strip()] = value.strip() if separator == ":" else value
    return out


def _definition(args: argparse.Namespace) -> ServerDefinition:
    from compozy_mcp.upstream.config import Scope, parse_server

    target: str = args.target
    rest = list(args.args)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if target == "--":  # compozy mcp add NAME -- COMMAND ARGS...
        if not rest:
            raise InvalidRequest("a stdio server needs a command after --")
        target, rest = rest[0], rest[1:]
    transport = args.transport or (
        "http" if target.startswith(("http://", "https://")) and not rest else "stdio"
    )
    raw: dict[str, Any]
    if transport == "http":
        if rest or args.env:
            raise InvalidRequest("an http server takes a URL and headers (-H), not arguments or -e")
        raw = {"url": target}
        if args.header:
            raw["headers"] = _pairs(args.header, ":", "-H/--header")
    else:
        if args.header:
            raise InvalidRequest("a stdio server takes a command, arguments and -e, not headers")
        raw = {"command": target}
        if rest:
            raw["args"] = rest
        if args.env:
            raw["env"] = _pairs(args.env, "=", "-e/--env")
    return parse_server(args.name, raw, Scope(args.scope))


def _say(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    emit(args, payload, lambda _style: text)


def _add(args: argparse.Namespace, context: Context) -> int:
    definition = _definition(args)
    config = _file(args.scope, args, context)
    if args.scope == "user":
        from compozy_mcp.store.private_files import private_dir

        # the first command may be this one: $COMPOZY_HOME holds every session's transcript
        private_dir(context.settings().home)
    config.add(definition)
    _say(
        args,
        {
            "server": {
                "name": definition.name,
                "scope": definition.scope.value,
                "transport": definition.transport.value,
                "target": definition.target,
            }
        },
        f"added {definition.transport} server {definition.name} to {config.shown}: "
        f"{definition.target}\nits tools are served as {definition.name}__<tool> by proxies "
        "and daemons started from now on",
    )
    return EXIT_OK


def _remove(args: argparse.Namespace, context: Context) -> int:
    scopes = [args.scope] if args.scope else ["workspace", "user"]
    holders = [
        config
        for config in (_file(scope, args, context) for scope in scopes)
        if args.name in config.read_raw().get("servers", {})
    ]
    if not holders:
        where = f"the {args.scope} scope" if args.scope else "mcp.yaml of either scope"
        raise ConfigError(
            f"no server {args.name!r} is defined in {where}", reason=Reason.MCP_SERVER_UNKNOWN
        )
    if len(holders) > 1:
        raise InvalidRequest(
            f"server {args.name!r} is defined in both scopes; say which with --scope "
            "user or --scope workspace"
        )
    holders[0].remove(args.name)
    _say(
        args,
        {"removed": {"name": args.name, "scope": holders[0].scope.value}},
        f"removed server {args.name} from {holders[0].shown}",
    )
    return EXIT_OK


# --- list ----------------------------------------------------------------------------------


def _list(args: argparse.Namespace, context: Context) -> int:
    if context.target is not None:
        payload: Mapping[str, Any] = context.call(lambda host: host.call(ops.LIST_MCP_SERVERS, {}))
    else:
        payload = _local_listing(args, context)
    if is_document(args):
        emit(args, payload)
    else:
        _print_listing(payload["servers"], checked=args.check)
    if args.check:
        return _check_outcome(payload["servers"])
    return EXIT_OK


def _check_outcome(rows: list[dict[str, Any]]) -> int:
    """``--check`` fails (exit 1) when a server is not ready: the one it just tried, or, against
    a daemon, the daemon's own connection to it."""
    failed = [
        row["name"]
        for row in rows
        if not all(
            state.get("state") == "ready"
            for state in ([row["check"]] if "check" in row else row["connections"]) or [{}]
        )
    ]
    if not failed:
        return EXIT_OK
    print(
        f"{len(failed)} of {len(rows)} MCP server{'' if len(rows) == 1 else 's'} failed the "
        f"check: {', '.join(failed)}",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _local_listing(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    from compozy_mcp.upstream.defined import defined
    from compozy_mcp.upstream.status import StatusBoard, by_server

    home = context.settings().home
    definitions = defined(home, context.workspace(args.workspace))
    reported = by_server(StatusBoard(home).reports())
    rows = [
        {**definition.row(), "connections": reported.get(name, [])}
        for name, definition in sorted(definitions.items())
    ]
    if args.check and definitions:
        from compozy_mcp.upstream.probe import probe_all

        checks = probe_all(
            list(definitions.values()),
            context.env,
            home=home,
            workspace=context.workspace(args.workspace),
        )
        for row in rows:
            check = checks[row["name"]].payload()
            del check["name"]
            row["check"] = check
    return {"servers": rows}


def _describe(state: dict[str, Any]) -> str:
    text = str(state["state"])
    if state["state"] == "ready":
        count = state.get("tools", 0)
        text += f", {count} tool{'' if count == 1 else 's'}"
    extra = []
    if state.get("restarts"):
        extra.append(f"restarts {state['restarts']}")
    if state.get("retry_in") is not None:
        extra.append(f"next try in {state['retry_in']:.0f} s")
    if extra:
        text += f" ({', '.join(extra)})"
    if state.get("last_error"):
        text += f"; last error: {state['last_error']}"
    return text


def _print_listing(rows: list[dict[str, Any]], *, checked: bool) -> None:
    if not rows:
        print("no MCP servers defined (compozy mcp add NAME -- COMMAND [ARGS...])")
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['scope']:<9}  {row['transport']:<9}  {row['target']}")
        for connection in row["connections"]:
            print(f"  {connection['kind']} {connection['pid']}: {_describe(connection)}")
        if "check" in row:
            print(f"  check: {_describe(row['check'])}")
        elif not row["connections"] and not checked:
            print("  not connected: no proxy or daemon on this home serves it (--check tries it)")
    sys.stdout.flush()


# --- serve ---------------------------------------------------------------------------------


def _serve(context: Context) -> int:
    import anyio

    from compozy_mcp.cli._proxy import announce_stdio
    from compozy_mcp.host.server import HostServer
    from compozy_mcp.interpreter import start_serving
    from compozy_mcp.proxy.transports import serve_stdio

    host = context.open_host()
    where = f"the compozy daemon at {context.target}" if context.target else "this home's store"
    start_serving()  # the host closes cleanly on Ctrl-C
    announce_stdio(
        "compozy mcp serve",
        f"the Host API tools (compozy_host__*) of {where}",
        "compozy mcp serve",
    )

    async def main() -> None:
        async with host:
            await serve_stdio(HostServer(host).server)

    anyio.run(main)
    return EXIT_OK
