"""The command line's grammar beyond what each command declares: global options accepted before
or after the subcommand, "did you mean" for a mistyped subcommand or choice, and the examples
every command's ``--help`` ends with.

Each command module still builds its own parser (``add_parser``); :func:`finish` then walks
the finished tree once, so a command added later gets all of this without doing anything.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: closest matches offered for a mistyped word, and how close they must be (difflib's ratio)
SUGGESTIONS = 3
CUTOFF = 0.6


def close_matches(word: str, candidates: Sequence[str]) -> list[str]:
    """The candidates a mistyped ``word`` most likely meant, best first. A word that is a
    prefix of exactly a few candidates suggests those too (``sess`` -> ``session``)."""
    import difflib  # only a mistyped word pays for it

    found = difflib.get_close_matches(word, candidates, n=SUGGESTIONS, cutoff=CUTOFF)
    if word:
        found += [c for c in candidates if c.startswith(word) and c not in found]
        found += [c for c in candidates if word in c and c not in found]
    return found[:SUGGESTIONS]


def did_you_mean(word: str, candidates: Sequence[str]) -> str:
    """``' (did you mean "a" or "b"?)'``, or ``''`` when nothing is close."""
    found = close_matches(word, candidates)
    if not found:
        return ""
    return " (did you mean " + " or ".join(f'"{c}"' for c in found) + "?)"


#: reStructuredText a docstring may hold: ``literal`` and :role:`target`
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_ROLE = re.compile(r":[a-z]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`")


def plain_text(text: str) -> str:
    """``text`` with the reStructuredText of a docstring made plain: ``x`` becomes `x`,
    :mod:`a.b` becomes a.b."""
    return _RST_ROLE.sub(r"\1", _RST_LITERAL.sub(r"`\1`", text))


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that an ``examples:`` epilog keeps its lines as written, a
    description keeps its paragraphs, and no reStructuredText reaches the terminal."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES_HEADING):
            return text
        paragraphs = [p for p in plain_text(text).split("\n\n") if p.strip()]
        return "\n\n".join(
            super(HelpFormatter, self)._fill_text(p, width, indent) for p in paragraphs
        )


class Parser(argparse.ArgumentParser):
    """An argument parser whose invalid choices say what was probably meant; subparsers are
    of this class too (argparse makes them of their parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        raise argparse.ArgumentError(
            action,
            f"invalid choice: {value!r}{did_you_mean(str(value), names)}; "
            f"choose from {', '.join(names)}",
        )


@dataclass(frozen=True, slots=True)
class GlobalOption:
    flags: tuple[str, ...]
    options: dict[str, Any]


#: options of the whole program, accepted anywhere on the command line. A command that has
#: an option of the same spelling (``hooks create --url``: a webhook) keeps its own there.
GLOBAL_OPTIONS = (
    GlobalOption(
        ("--home",),
        {"metavar": "DIR", "help": "data directory (default: $COMPOZY_HOME or ~/.compozy)"},
    ),
    GlobalOption(
        ("--url",),
        {
            "metavar": "URL",
            "help": "run against the daemon at this URL "
            "(http://HOST:PORT or unix:PATH; a trailing /api or / is ignored; default: "
            "$COMPOZY_URL, else the daemon listening on $COMPOZY_HOME/compozy.sock, else "
            "in-process on the store; COMPOZY_URL=none always runs in-process)",
        },
    ),
    GlobalOption(
        ("--socket",), {"metavar": "PATH", "help": "run against the daemon on this Unix socket"}
    ),
    GlobalOption(
        ("-v", "--verbose"),
        {
            "action": "store_true",
            "help": "on failure, also print "
            "the dispatch diagnostic (in-process, or from a daemon on a Unix socket or "
            "loopback)",
        },
    ),
    GlobalOption(
        ("--log-level",),
        {
            "choices": ("debug", "info", "warning", "error"),
            "help": "what is logged to stderr (default: warning; info adds a line per "
            "HTTP request of a daemon)",
        },
    ),
    GlobalOption(
        ("--log-format",),
        {
            "choices": ("text", "json"),
            "help": "log lines as text (default) or one JSON object each",
        },
    ),
    GlobalOption(
        ("--color",),
        {
            "choices": ("auto", "always", "never"),
            "help": "colour in "
            "tables: auto (default: on a terminal, unless NO_COLOR is set), always, never",
        },
    ),
)
#: what a global option is when it is not given
GLOBAL_DEFAULTS: dict[str, Any] = {
    "home": None,
    "url": None,
    "socket": None,
    "verbose": False,
    "log_level": None,
    "log_format": "text",
    "color": "auto",
}


def add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The global options on ``parser``; ``suppress``: a subcommand's copy sets nothing
    unless given, so that a value given before the subcommand is not overwritten."""
    for option in GLOBAL_OPTIONS:
        if any(flag in parser._option_string_actions for flag in option.flags):
            continue
        dest = option.flags[-1].lstrip("-").replace("-", "_")
        options = dict(option.options)
        if suppress:  # documented once, in `compozy --help`; accepted here all the same
            options["help"] = argparse.SUPPRESS
        default = argparse.SUPPRESS if suppress else GLOBAL_DEFAULTS[dest]
        parser.add_argument(*option.flags, dest=dest, default=default, **options)


def subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser below ``parser``, with its command path (``"tool invoke"``), once each
    (an alias is not a second parser)."""
    seen: set[int] = set()
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, child in action.choices.items():
            if id(child) in seen:
                continue
            seen.add(id(child))
            path = child.prog.split(" ", 1)[1] if " " in child.prog else name
            yield path, child
            yield from subparsers(child)


def is_leaf(parser: argparse.ArgumentParser) -> bool:
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


EXAMPLES_HEADING = "examples:"


def examples_epilog(lines: Sequence[str]) -> str:
    return EXAMPLES_HEADING + "\n" + "\n".join(f"  {line}" for line in lines)


def finish(parser: argparse.ArgumentParser, examples: Mapping[str, Sequence[str]]) -> None:
    """Global options on every subcommand; each command's examples as its ``--help`` epilog
    (a command whose module wrote its own epilog keeps it)."""
    for path, child in subparsers(parser):
        add_global_options(child, suppress=True)
        if child.epilog is None and path in examples:
            child.epilog = examples_epilog(examples[path])
