"""Pieces every command shares: the command type and the output options."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Command = Callable[[argparse.Namespace], int]


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
