"""How commands print: a document as JSON or YAML (``-o json|yaml``), or readable text
(``-o table``, the default) with tables that fit the terminal and colour on a terminal only.

Every command uses :func:`emit`; a table is :func:`table` over :class:`Column` s. Colour is on
when stdout is a terminal, ``NO_COLOR`` is unset or empty (https://no-color.org) and ``TERM``
is not ``dumb``; ``--color always|never`` decides instead. The width is ``COLUMNS``, else the
terminal's, else 100 (a pipe: output meant for a program never wraps at a guess).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from compozy_mcp import jsonutil

#: the width of a table that goes to a pipe, or when the terminal's is unknown
PIPE_WIDTH = 100
#: columns narrower than this are never truncated further
MIN_FLEX = 12
ELLIPSIS = "…"

_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"
COLOURS = {
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "red": "\x1b[31m",
    "dim": "\x1b[2m",
    "cyan": "\x1b[36m",
}


@dataclass(frozen=True, slots=True)
class Style:
    """How readable output is drawn: with colour or not, and how wide."""

    color: bool = False
    width: int = PIPE_WIDTH

    def paint(self, text: str, colour: str | None) -> str:
        if not self.color or not colour or not text:
            return text
        return f"{COLOURS.get(colour, _BOLD) if colour != 'bold' else _BOLD}{text}{_RESET}"


def style_of(env: Mapping[str, str], stream: TextIO | None = None, choice: str = "auto") -> Style:
    """The style of output written to ``stream`` (stdout by default) in ``env``."""
    stream = stream or sys.stdout
    tty = _isatty(stream)
    if choice == "auto":
        color = tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"
    else:
        color = choice == "always"
    return Style(color=color, width=_width(env, tty))


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file at all
        return False


def _width(env: Mapping[str, str], tty: bool) -> int:
    columns = env.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if tty:
        return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    return PIPE_WIDTH


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header, how a row gives its cell, and whether it may be cut to fit
    (``flex``: descriptions and names; ids never are, a cut id is useless)."""

    header: str
    cell: Callable[[Mapping[str, Any]], Any]
    flex: bool = False
    colour: Callable[[str], str | None] | None = None

    @classmethod
    def key(
        cls,
        header: str,
        key: str,
        *,
        flex: bool = False,
        colour: Callable[[str], str | None] | None = None,
    ) -> Column:
        return cls(header, lambda row: row.get(key), flex=flex, colour=colour)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    return " ".join(str(value).split())  # one line a row, whatever the value holds


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def fit(natural: Sequence[int], flex: Sequence[bool], width: int, gap: int = 2) -> list[int]:
    """Column widths that fit ``width``: the flexible columns give up space, the widest
    first, down to :data:`MIN_FLEX` (or their header); fixed ones keep theirs. A table whose
    fixed columns alone are too wide overflows rather than cut an id."""
    widths = list(natural)
    excess = sum(widths) + gap * (len(widths) - 1) - width
    while excess > 0:
        candidates = [i for i, w in enumerate(widths) if flex[i] and w > MIN_FLEX]
        if not candidates:
            break
        widths[max(candidates, key=lambda i: widths[i])] -= 1
        excess -= 1
    return widths


def table(columns: Sequence[Column], rows: Sequence[Mapping[str, Any]], style: Style) -> str:
    """A table with a header row, fitted to ``style.width``; the last column is not padded."""
    cells = [[_text(column.cell(row)) for column in columns] for row in rows]
    natural = [
        max([len(column.header), *(len(line[i]) for line in cells)])
        for i, column in enumerate(columns)
    ]
    widths = fit(natural, [c.flex for c in columns], style.width)
    last = len(columns) - 1

    def line(values: Sequence[str], colours: Sequence[str | None]) -> str:
        shown = []
        for i, value in enumerate(values):
            cut = _cut(value, widths[i])
            padded = cut if i == last else cut.ljust(widths[i])
            pad = padded[len(cut) :]
            shown.append(style.paint(cut, colours[i]) + pad)
        return "  ".join(shown).rstrip()

    out = [line([c.header for c in columns], ["bold"] * len(columns))]
    for values in cells:
        colours = [c.colour(values[i]) if c.colour else None for i, c in enumerate(columns)]
        out.append(line(values, colours))
    return "\n".join(out)


def to_yaml(document: Any) -> str:
    import yaml  # only -o yaml pays for it

    text: str = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    return text


def emit(
    args: argparse.Namespace,
    document: Any,
    readable: Callable[[Style], str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> None:
    """Print ``document`` as ``-o`` asks: JSON, YAML, or ``readable(style)`` (JSON when the
    command has no readable form)."""
    form = getattr(args, "output", "table")
    if form == "yaml":
        print(to_yaml(document), end="")
    elif form == "json" or readable is None:
        print(jsonutil.dumps_pretty(document))
    else:
        print(readable(style_of(env or {}, sys.stdout, getattr(args, "color", "auto"))))


def is_document(args: argparse.Namespace) -> bool:
    """Whether ``-o`` asks for the document (json or yaml) rather than the readable form."""
    return getattr(args, "output", "table") in ("json", "yaml")


#: colours of session states and badges (a state a person should look at is yellow or red)
STATE_COLOURS = {
    "active": "green",
    "running": "green",
    "starting": "cyan",
    "waiting": "yellow",
    "stopping": "yellow",
    "idle": "dim",
    "later": "dim",
    "stopped": "dim",
    "archived": "dim",
    "failed": "red",
}


def state_colour(value: str) -> str | None:
    return STATE_COLOURS.get(value)
