"""``compozy mcp serve``: the Host API as MCP tools (``compozy_host__*``) on stdio, in-process on
the store or, with ``--url`` / ``--socket`` / ``COMPOZY_URL``, against a daemon."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from compozy_mcp.cli.reporting import EXIT_OK

if TYPE_CHECKING:
    from compozy_mcp.cli.context import Context


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="MCP servers of the Host API")
    sub = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    sub.add_parser(
        "serve",
        help="serve the compozy_host__* tools (sessions and tools of the Host API) on stdio",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    import anyio

    from compozy_mcp.host.server import HostServer
    from compozy_mcp.proxy.transports import serve_stdio

    host = context.open_host()

    async def main() -> None:
        try:
            await serve_stdio(HostServer(host).server)
        finally:
            await host.aclose()

    anyio.run(main)
    return EXIT_OK
