"""``compozy open``: the operator's board of the daemon in the default browser.

The board is served by ``compozy serve`` at ``/`` of its TCP address: the one ``--url`` or
``COMPOZY_URL`` names; for a daemon reached on its Unix socket (``--socket``, or the one
answering on ``$COMPOZY_HOME/compozy.sock``), the TCP address it says it serves (a browser
cannot open a socket); else the default ``http://127.0.0.1:8765/``. The token (when the daemon
has one) is asked by the page itself, never put in the URL.
"""

from __future__ import annotations

import argparse
import sys

from compozy_mcp.cli._context import Context
from compozy_mcp.errors import InvalidRequest
from compozy_mcp.hostapi.target import Target

DEFAULT_BOARD = "http://127.0.0.1:8765/"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "open",
        help="open the operator's board (compozy serve's page at /) in the default browser",
    )
    parser.add_argument(
        "--print", action="store_true", help="print the board's URL instead of opening it"
    )


def board_url(context: Context) -> str:
    """The board's URL for the daemon this context reaches."""
    target = context.daemon()
    if target is None:
        return DEFAULT_BOARD
    if target.socket is None:
        return target.base_url.rstrip("/") + "/"
    address = _served_address(context, target)
    if not address:
        raise InvalidRequest(
            f"the daemon on {target.socket} serves no TCP address (started with --no-tcp?): "
            "the board is served over TCP; start it with a port, or name its http:// address "
            "with --url"
        )
    return address.rstrip("/") + "/"


def _served_address(context: Context, target: Target) -> str | None:
    """The TCP address the daemon on ``target``'s socket says it serves."""
    import asyncio

    from compozy_mcp.hostapi.remote import RemoteHost

    async def ask() -> str | None:
        diagnostics = context.diagnostics
        async with RemoteHost(
            target, token=context.token, diagnostics=diagnostics, oneshot=True
        ) as host:
            answered = (await host.health()).get("daemon")
        address = answered.get("address") if isinstance(answered, dict) else None
        return address if isinstance(address, str) else None

    return asyncio.run(ask())


def run(args: argparse.Namespace, context: Context) -> int:
    url = board_url(context)
    if args.print:
        print(url)
        return 0
    import webbrowser  # only this command needs it

    if not webbrowser.open(url):
        print(f"compozy open: no browser to open; the board is at {url}", file=sys.stderr)
        return 0
    print(url)
    return 0
