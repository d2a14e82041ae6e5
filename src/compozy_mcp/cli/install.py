"""``compozy install CLIENT [--session ID] [--http URL] [--print]``: point an MCP client at
compozy, in the client's own configuration format (:mod:`compozy_mcp.cli.clients`).

By default the client starts ``compozy proxy`` itself (stdio), with the absolute path of this
``compozy`` executable, so that it works whatever the client's ``PATH``; ``--session`` binds
the proxy to a managed session; ``--http URL`` connects the client to a running proxy or
daemon instead (Claude Desktop, which takes no URL, gets ``compozy --url BASE proxy``, which
relays it). The file is merged: other servers and settings stay. ``--print`` prints the new
content and writes nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compozy_mcp.cli.clients import (
    CLIENTS,
    Server,
    config_path,
    env_for,
    read_existing,
    rendered,
    stdio_only,
)
from compozy_mcp.cli.reporting import EXIT_OK
from compozy_mcp.errors import ConfigError

if TYPE_CHECKING:
    from compozy_mcp.cli.context import Context

#: variables a client must pass to the proxy it starts, when they are set here
PASSED_ON = ("COMPOZY_HOME", "COMPOZY_URL", "COMPOZY_TOKEN_FILE")
MCP_SUFFIX = "/mcp"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    install = commands.add_parser(
        "install",
        help="configure an MCP client to use compozy (Claude Code, Claude Desktop, Cursor, "
        "Codex, VS Code)",
        description="Write (or print, with --print) an MCP client's configuration so that it "
        "uses compozy: the client starts `compozy proxy` on stdio, or with --http connects to "
        "a running proxy or daemon. Project files (.mcp.json, .cursor/mcp.json, "
        ".vscode/mcp.json) go in the workspace; Claude Desktop's and Codex's in your home.",
    )
    install.add_argument("client", choices=CLIENTS, help="the MCP client to configure")
    install.add_argument(
        "--session", metavar="ID", help="bind the proxy to this managed session (its policy)"
    )
    install.add_argument(
        "--http",
        metavar="URL",
        help="connect to this Streamable HTTP endpoint (http://HOST:PORT/mcp of compozy serve "
        "or compozy proxy --http) instead of starting a proxy",
    )
    install.add_argument(
        "--workspace",
        metavar="DIR",
        help="where project files go (default: $COMPOZY_WORKSPACE or the current directory)",
    )
    install.add_argument(
        "--print", action="store_true", help="print the configuration; write nothing"
    )


def executable() -> str:
    """The absolute path of this ``compozy``: the console script beside this interpreter
    (a venv, pipx or ``uv tool`` install), else the one on ``PATH``."""
    beside = Path(sys.executable).with_name("compozy")
    if beside.exists():
        return str(beside)
    found = shutil.which("compozy")
    if found is None:
        raise ConfigError("cannot find the compozy executable; install compozy-mcp first")
    return str(Path(found).resolve())


def server_for(args: argparse.Namespace, context: Context) -> Server:
    passed = env_for(context.env, PASSED_ON)
    if args.http and not stdio_only(args.client):
        if args.session:
            raise ConfigError(
                "--session applies to a proxy the client starts; with --http, start the proxy "
                "yourself: compozy proxy --http HOST:PORT --session ID"
            )
        if not args.http.startswith(("http://", "https://")):
            raise ConfigError(f"--http takes an http(s):// URL, got {args.http!r}")
        return Server(url=args.http)
    words = ["proxy"]
    if args.http:  # a stdio-only client relays the daemon (or proxy) at that URL
        base = args.http.rstrip("/").removesuffix(MCP_SUFFIX)
        words = ["--url", base, "proxy"]
        passed.pop("COMPOZY_URL", None)
    if args.session:
        words += ["--session", args.session]
    return Server(command=executable(), args=tuple(words), env=passed)


def run(args: argparse.Namespace, context: Context) -> int:
    server = server_for(args, context)
    home = Path(context.env.get("HOME") or Path.home())
    path = config_path(args.client, workspace=context.workspace(args.workspace), home=home)
    existing = None if args.print else read_existing(path)
    try:
        content = rendered(args.client, server, existing)
    except ValueError as exc:
        raise ConfigError(f"cannot update {path}: {exc}; fix or move it first") from None
    if args.print:
        sys.stdout.write(content)
        return EXIT_OK
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    how = (
        f"connects to {server.url}"
        if server.url
        else f"starts {server.command} " + " ".join(server.args)
    )
    print(f'wrote {path}: the {args.client} server "compozy" {how}')
    print(f"restart {args.client} (or reload its MCP servers) to pick it up", file=sys.stderr)
    return EXIT_OK
