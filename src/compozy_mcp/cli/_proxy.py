"""``compozy proxy``: the hosted MCP proxy over stdio (default), Streamable HTTP or a socket.

In-process on the embedded store by default, with the upstream MCP servers of
``$COMPOZY_HOME/mcp.yaml`` and the workspace's ``.compozy/mcp.yaml`` (those the session's policy
allows, with ``--session``) served beside the native tools; with ``--url`` / ``--socket``
(``COMPOZY_URL``) it relays a daemon's ``/mcp`` instead (:mod:`compozy_mcp.proxy.relay`), with
the same listing and results. ``--discovery search`` advertises the three discovery tools
instead of every tool."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compozy_mcp import jsonutil
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import InvalidRequest

if TYPE_CHECKING:
    from mcp.server import Server

    from compozy_mcp.assembly import App
    from compozy_mcp.calls import CallScope
    from compozy_mcp.cli._context import Context
    from compozy_mcp.hostapi.target import Target
    from compozy_mcp.upstream.supervisor import Upstreams

DEFAULT_PORT = 8765


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT`` or ``:PORT`` (loopback)."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise InvalidRequest(f"--http takes HOST:PORT, got {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise InvalidRequest(f"--http port must be a number, got {port_text!r}") from None
    if not 0 <= port <= 65535:
        raise InvalidRequest(f"--http port must be between 0 and 65535, got {port}")
    return host, port


def _say(text: str) -> None:
    print(f"compozy proxy: {text}", file=sys.stderr, flush=True)


def announce_stdio(program: str, served: str, command: str) -> None:
    """On a terminal (stdin is one: no MCP client started this process), one line on stderr
    saying what is served and how a client connects. stdout is the MCP stream: never there;
    and nothing at all when a client runs the command."""
    if not sys.stdin.isatty():
        return
    print(
        f"{program}: serving {served} over MCP on stdio; an MCP client starts this command "
        f"itself (`compozy install claude-code|claude-desktop|cursor|codex|vscode`, or "
        f"`claude mcp add compozy -- {command}`); Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )


def client_setup(url: str) -> str:
    """How to point Claude Code, or any client reading ``.mcp.json``, at the proxy."""
    snippet = {"mcpServers": {"compozy": {"type": "http", "url": url}}}
    return (
        f"  Claude Code: claude mcp add --transport http compozy {url}\n"
        f"  .mcp.json:   {jsonutil.dumps_text(snippet)}"
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    proxy = commands.add_parser(
        "proxy", help="serve the native tools to MCP clients (stdio by default)"
    )
    where = proxy.add_mutually_exclusive_group()
    where.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    where.add_argument("--uds", metavar="PATH", help="serve Streamable HTTP on a Unix socket")
    proxy.add_argument(
        "--session",
        metavar="ID",
        help="bind to a managed session: only the tools its policy allows are listed and callable",
    )
    discovery_option(proxy)
    proxy.add_argument(
        "--workspace",
        metavar="DIR",
        help="the workspace whose .compozy/mcp.yaml servers are served (default: the session's "
        "workspace with --session, else $COMPOZY_WORKSPACE or the current directory)",
    )
    proxy.add_argument(
        "--page-size",
        type=int,
        metavar="N",
        help="tools per tools/list page (default: the whole catalog in one page)",
    )


def discovery_option(parser: argparse.ArgumentParser) -> None:
    from compozy_mcp.proxy.modes import Discovery

    parser.add_argument(
        "--discovery",
        choices=[mode.value for mode in Discovery],
        default=Discovery.FULL.value,
        help="full: tools/list advertises every tool (default); search: only "
        "compozy__tool_search, compozy__tool_info and compozy__tool_call, which find and call "
        "the rest",
    )


#: what a proxy serves with, imported up front (:func:`interpreter.imports_without_collector`)
_SERVING_MODULES = ("compozy_mcp.proxy.transports", "compozy_mcp.net")
_RELAY_MODULES = ("compozy_mcp.proxy.relay", *_SERVING_MODULES)
_IN_PROCESS_MODULES = ("compozy_mcp.assembly", "compozy_mcp.proxy.server", *_SERVING_MODULES)


def run(args: argparse.Namespace, context: Context) -> int:
    from compozy_mcp.interpreter import imports_without_collector

    if args.page_size is not None and args.page_size < 1:
        raise InvalidRequest("--page-size must be at least 1")
    daemon = context.daemon()
    with imports_without_collector():
        for name in _RELAY_MODULES if daemon is not None else _IN_PROCESS_MODULES:
            importlib.import_module(name)
    if daemon is not None:
        return _relay(args, context, daemon)
    return _in_process(args, context)


def _in_process(args: argparse.Namespace, context: Context) -> int:
    """Serve the native tools from this process, on the embedded store."""
    from compozy_mcp.assembly import open_app
    from compozy_mcp.calls import OPERATOR, scope_of
    from compozy_mcp.errors import ResourceNotFound
    from compozy_mcp.proxy.modes import Discovery
    from compozy_mcp.proxy.server import ProxyServer

    settings = context.settings()
    with open_app(settings) as app:
        scope = OPERATOR
        workspace = context.workspace(args.workspace)
        if args.session:
            policy = app.services.sessions.policy(args.session)
            if policy is None:
                raise ResourceNotFound("compozy proxy", "session", args.session)
            scope = scope_of(args.session)
            if not args.workspace:
                workspace = _session_workspace(app, args.session) or workspace
        upstreams = upstreams_for(
            context,
            settings.home,
            workspace,
            app,
            scope,
            kind="proxy",
            many_clients=bool(args.http or args.uds),
        )
        proxy = ProxyServer(
            app,
            scope=scope,
            page_size=args.page_size,
            upstreams=upstreams,
            discovery=Discovery(args.discovery),
        )
        holding = running(upstreams)

        @contextlib.asynccontextmanager
        async def serving() -> AsyncIterator[None]:
            # its tasks run while it serves; async hooks and run records finish before it ends
            upstream = holding() if holding is not None else contextlib.nullcontext()
            async with app.running(), upstream:
                yield

        _serve(args, context, proxy.server, serving, proxy.answers_at_once)
    return EXIT_OK


def _session_workspace(app: App, session_id: str) -> Path | None:
    """The directory of the workspace a session belongs to."""
    import asyncio

    from compozy_mcp.calls import CallInfo

    record = asyncio.run(app.sessions.status(CallInfo("compozy proxy"), session_id))
    row = app.sessions.workspaces.workspace(record.get("workspace_id"))
    return Path(row.path) if row is not None else None


def upstreams_for(
    context: Context,
    home: Path,
    workspace: Path,
    app: App,
    scope: CallScope,
    *,
    kind: str,
    many_clients: bool,
) -> Upstreams | None:
    """The upstream servers to connect: every one defined, or those ``scope``'s policy
    allows (the others are withheld: known, refused); ``None`` when none is defined (then
    nothing of the MCP SDK is imported). ``many_clients``: served over HTTP, so every client
    capability is declared to them and each call's own client is checked when asked; else
    (stdio) the one client's own are declared, once its first request says them."""
    from compozy_mcp.upstream.defined import defined

    every = defined(home, workspace).values()
    allowed = [d for d in every if app.catalog.server_visible(d.name, scope)]
    withheld = [d.name for d in every if d not in allowed]
    if not allowed and not withheld:
        return None
    from compozy_mcp.upstream.asking import EVERY_CAPABILITY
    from compozy_mcp.upstream.supervisor import Upstreams

    return Upstreams(
        allowed,
        home=home,
        env=dict(context.env),
        workspace=workspace,
        kind=kind,
        withheld=withheld,
        declared=EVERY_CAPABILITY if many_clients else None,
    )


def running(
    upstreams: Upstreams | None,
) -> Callable[[], AbstractAsyncContextManager[None]] | None:
    """What holds the servers connected while the proxy serves."""
    if upstreams is None:
        return None
    connected = upstreams

    @contextlib.asynccontextmanager
    async def hold() -> AsyncIterator[None]:
        # the server waits for the first attempts when it lists (ProxyServer), not here:
        # requests are read meanwhile, and a client that goes away ends the proxy at once
        async with connected.running(settle=False):
            yield

    return hold


def _relay(args: argparse.Namespace, context: Context, target: Target) -> int:
    """Serve a daemon's tools (``--url`` / ``--socket`` / ``COMPOZY_URL``)."""
    import asyncio

    from compozy_mcp.proxy.modes import Discovery
    from compozy_mcp.proxy.relay import Relay

    relay = Relay(
        target,
        token=context.token,
        session=args.session,
        page_size=args.page_size,
        discovery=Discovery(args.discovery),
    )
    asyncio.run(relay.prepare())
    _say(f"relaying the compozy daemon at {target}")
    _serve(args, context, relay.server, relay.serving)
    return EXIT_OK


def _serve(
    args: argparse.Namespace,
    context: Context,
    server: Server[Any],
    around: Callable[[], AbstractAsyncContextManager[None]] | None,
    answers_at_once: Callable[[Mapping[str, Any]], bool] | None = None,
) -> None:
    """Serve ``server`` on the transport the arguments name, holding ``around`` open;
    ``answers_at_once`` picks the HTTP requests served without an event stream."""
    import anyio

    from compozy_mcp import net
    from compozy_mcp.hostapi.wire import MCP_PATH
    from compozy_mcp.http_limits import HttpDeadlines
    from compozy_mcp.interpreter import start_serving
    from compozy_mcp.proxy import transports

    settings = context.settings()
    deadlines = HttpDeadlines(
        settings.http_head_timeout_seconds, settings.http_body_timeout_seconds
    )

    if args.uds:
        path = Path(args.uds).expanduser()
        sock = net.bind_uds(path)
        app = transports.http_app(
            server, settings, uds=True, around=around, answers_at_once=answers_at_once
        )
        net.serve(
            app,
            [sock],
            socket_files=[path],
            deadlines=deadlines,
            announce=lambda: _say(f"serving MCP on unix socket {path} at {MCP_PATH}"),
        )
    elif args.http:
        host, port = parse_address(args.http)
        sock = net.bind_tcp(host, port)
        port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}{MCP_PATH}"
        if not net.is_loopback(host):
            _say(
                f"warning: {host} is not a loopback address; anyone who can reach it "
                "can call the tools"
            )
        app = transports.http_app(
            server, settings, host=host, around=around, answers_at_once=answers_at_once
        )
        net.serve(
            app,
            [sock],
            deadlines=deadlines,
            announce=lambda: _say(f"serving MCP at {url}\n{client_setup(url)}"),
        )
    else:
        served = "the native tools" + (f" of session {args.session}" if args.session else "")
        if context.target is not None:
            served += f" of the compozy daemon at {context.target}"
        start_serving()  # the server's clean-up (upstream servers) runs on Ctrl-C
        announce_stdio("compozy proxy", served, "compozy proxy")

        anyio.run(transports.serve_stdio, server, around)
