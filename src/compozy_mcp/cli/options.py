"""Pieces every command shares: the command type and the output options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compozy_mcp.cli.context import Context

Command = Callable[[argparse.Namespace, "Context"], int]


#: ``-o``: ``table`` (readable; ``text`` is its old name), or the document as JSON or YAML
OUTPUT_FORMATS = ("table", "json", "yaml", "text")


def output_options(parser: argparse.ArgumentParser) -> None:
    """``-o json|yaml|table``. (``-v`` is a global option: :mod:`compozy_mcp.cli.parsing`.)"""
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUT_FORMATS,
        default="table",
        help="output format: table (default), json or yaml",
    )
