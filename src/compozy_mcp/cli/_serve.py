"""``compozy serve``: the daemon. One process serves the HTTP API at ``/api`` and the hosted MCP
endpoint at ``/mcp`` on TCP (default ``127.0.0.1:8765``) and on a Unix socket (default
``$COMPOZY_HOME/compozy.sock``, mode 0600), both at once unless ``--no-uds`` or ``--no-tcp``.

A host that is not a loopback address needs a bearer token (``--token-file`` or ``COMPOZY_TOKEN``);
when a token is set, every request on every listener must carry it. SIGINT or SIGTERM stops
the daemon cleanly and removes the socket file.
"""

from __future__ import annotations

import argparse
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from compozy_mcp.cli._context import DEFAULT_SOCKET
from compozy_mcp.cli._proxy import discovery_option
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import ConfigError, InvalidRequest

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
SOCKET_NAME = DEFAULT_SOCKET


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve", help="run the daemon: the HTTP API (/api) and MCP (/mcp) on TCP and a socket"
    )
    serve.add_argument(
        "--host", default=DEFAULT_HOST, help=f"TCP address to listen on (default {DEFAULT_HOST})"
    )
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one, printed on start)",
    )
    serve.add_argument(
        "--uds", metavar="PATH", help=f"Unix socket path (default $COMPOZY_HOME/{SOCKET_NAME})"
    )
    only = serve.add_mutually_exclusive_group()
    only.add_argument("--no-uds", action="store_true", help="serve TCP only")
    only.add_argument("--no-tcp", action="store_true", help="serve the Unix socket only")
    discovery_option(serve)
    serve.add_argument(
        "--workspace",
        metavar="DIR",
        help="the workspace whose .compozy/mcp.yaml servers are served (default: "
        "$COMPOZY_WORKSPACE or the current directory)",
    )
    serve.add_argument(
        "--store",
        metavar="URL",
        help="the PostgreSQL database to keep everything in, several daemons may share it "
        "(postgresql://USER@HOST/DB; default: $COMPOZY_STORE, else the SQLite file in the "
        "home); docs/deployment.md",
    )
    serve.add_argument(
        "--advertise",
        metavar="URL",
        help="this daemon is one of several on one store, behind a balancer, reached at this "
        "address (http://HOST:PORT); an MCP request for a session another daemon opened is "
        "served here (docs/deployment.md)",
    )
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="require the bearer token this file holds on every request (default: "
        "$COMPOZY_TOKEN); required for a non-loopback --host. A file, so that the token never "
        "shows in the process list",
    )


def _say(text: str) -> None:
    print(f"compozy serve: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, context: Context) -> int:
    from compozy_mcp.interpreter import imports_without_collector

    with imports_without_collector():
        from compozy_mcp import daemon, net
        from compozy_mcp.api.auth import Access
        from compozy_mcp.assembly import open_app
        from compozy_mcp.calls import OPERATOR
        from compozy_mcp.cli._context import read_token_file
        from compozy_mcp.cli._proxy import client_setup, upstreams_for
        from compozy_mcp.cluster import daemon_identity
        from compozy_mcp.credentials import is_session_credential
        from compozy_mcp.http_limits import HttpDeadlines
        from compozy_mcp.proxy.modes import Discovery
        from compozy_mcp.store.open import check_spec

    tcp, uds = not args.no_tcp, not args.no_uds
    token = read_token_file(Path(args.token_file)) if args.token_file else context.token
    if token is not None and is_session_credential(token):
        token = None  # one session's credential (this process was started by an agent's
        # proxy's environment) is no daemon token
    if token is not None:
        from compozy_mcp.childenv import withhold

        withhold(token)  # no hook or agent this daemon starts ever sees it
    if tcp and not net.is_loopback(args.host) and token is None:
        raise ConfigError(
            f"--host {args.host} is not a loopback address: set a bearer token with "
            "--token-file or COMPOZY_TOKEN (every request must then carry it)"
        )
    if not 0 <= args.port <= 65535:
        raise InvalidRequest(f"--port must be between 0 and 65535, got {args.port}")
    if args.advertise is not None and not args.advertise.startswith(("http://", "https://")):
        raise InvalidRequest(f"--advertise must be an http(s):// URL, got {args.advertise!r}")
    settings = context.settings()
    if args.store:
        settings = replace(settings, store=check_spec(args.store))
    path = Path(args.uds).expanduser() if args.uds else settings.home / SOCKET_NAME

    sockets: list[socket.socket] = []
    socket_files: list[Path] = []
    try:
        with open_app(settings) as app:
            # Every listener is bound before any is announced: a second daemon fails here,
            # before it has said anything.
            address = None
            if tcp:
                sockets.append(net.bind_tcp(args.host, args.port))
                shown = f"[{args.host}]" if ":" in args.host else args.host
                address = f"http://{shown}:{sockets[-1].getsockname()[1]}"
            if uds:
                sockets.append(net.bind_uds(path))
                socket_files.append(path)

            def announce() -> None:
                # once Ctrl-C and SIGTERM stop it cleanly: what is said can be acted on
                if address is not None:
                    _say(f"listening on {address} (API /api, MCP /mcp, board {address}/)")
                    print(client_setup(f"{address}/mcp"), file=sys.stderr, flush=True)
                if uds:
                    _say(f"listening on unix:{path} (API /api, MCP /mcp)")
                if token is not None:
                    _say("a bearer token is required on every request")
                if upstreams is not None:
                    _say(f"MCP servers: {', '.join(upstreams.servers)}")

            access = Access.for_host(args.host if tcp else "localhost", token)
            workspace = context.workspace(args.workspace)
            upstreams = upstreams_for(
                context,
                settings.home,
                workspace,
                app,
                OPERATOR,
                kind="daemon",
                many_clients=True,
            )
            deadlines = HttpDeadlines(
                head_timeout=settings.http_head_timeout_seconds,
                body_timeout=settings.http_body_timeout_seconds,
            )
            identity = daemon_identity(settings.home, context.env, args.advertise or address)
            served = daemon.daemon_app(
                app,
                access,
                address=address,
                upstreams=upstreams,
                discovery=Discovery(args.discovery),
                identity=identity,
                balanced=args.advertise is not None,
            )
            net.serve(
                served,
                sockets,
                socket_files=socket_files,
                deadlines=deadlines,
                announce=announce,
            )
    finally:
        for sock in sockets:
            sock.close()
    _say("stopped")
    return EXIT_OK
