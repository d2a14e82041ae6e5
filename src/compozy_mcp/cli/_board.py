"""``compozy open``: the operator's board of the daemon in the default browser.

The board is served by ``compozy serve`` at ``/`` of its TCP address: the one ``--url`` or
``COMPOZY_URL`` names, else the default ``http://127.0.0.1:8765/``. A Unix socket has no
address a browser can open. The token (when the daemon has one) is asked by the page itself,
never put in the URL.
"""

from __future__ import annotations

import argparse
import sys

from compozy_mcp.cli._context import Context
from compozy_mcp.errors import InvalidRequest

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
    """The board's URL for the daemon this context names (a TCP one)."""
    target = context.target
    if target is None:
        return DEFAULT_BOARD
    if target.socket is not None:
        raise InvalidRequest(
            "the board is served over TCP: name the daemon's http:// address with --url "
            "(a browser cannot open a Unix socket)"
        )
    return target.base_url.rstrip("/") + "/"


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
