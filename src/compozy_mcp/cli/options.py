"""Pieces every command shares: the command type and the output options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compozy_mcp.cli.context import Context

Command = Callable[[argparse.Namespace, "Context"], int]


def output_options(parser: argparse.ArgumentParser) -> None:
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
