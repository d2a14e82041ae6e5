"""``compozy``: entry point. Each command lives in its own module under ``compozy_mcp.cli``
with ``add_parser(commands)`` and ``run(args, context)``; modules import heavy things (the
store, the MCP SDK, the HTTP stack) inside ``run`` only, so start-up stays fast."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from compozy_mcp import __version__
from compozy_mcp.errors import CompozyError

if TYPE_CHECKING:
    from collections.abc import Mapping

#: command name -> module in compozy_mcp.cli; the module registers the parser and runs it
COMMAND_MODULES = {
    "tool": "tool",
    "proxy": "proxy",
    "workspace": "workspace",
    "profile": "workspace",
    "session": "session",
    "serve": "serve",
    "mcp": "mcp",
    "catalog": "release_note",
    "store": "store",
    "hooks": "hooks",
    "agent": "agent",
    "loop": "loop",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compozy",
        description="Managed agent sessions: native tools with compact and full result views.",
    )
    parser.add_argument("--version", action="version", version=f"compozy-mcp {__version__}")
    parser.add_argument("--home", help="data directory (default: $COMPOZY_HOME or ~/.compozy)")
    daemon = parser.add_mutually_exclusive_group()
    daemon.add_argument(
        "--url",
        help="run against the daemon at this URL (http://HOST:PORT or unix:PATH; default: "
        "$COMPOZY_URL, else in-process on the store)",
    )
    daemon.add_argument("--socket", metavar="PATH", help="run against the daemon on this socket")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(f"compozy_mcp.cli.{module}").add_parser(commands)
    return parser


class _Formatter(logging.Formatter):
    """``compozy: warning: ...``; tracebacks only with ``COMPOZY_DEBUG=1``."""

    def __init__(self, debug: bool) -> None:
        super().__init__("compozy: %(levelname)s: %(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        # a copy: other handlers (a test's log capture) see the record as it was logged
        shown = logging.makeLogRecord(record.__dict__)
        shown.levelname = record.levelname.lower()
        if not self.debug:
            shown.exc_info = None
            shown.exc_text = None
        return super().format(shown)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The CLI's one log handler: on whatever ``sys.stderr`` is when a record is written."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _configure_logging(env: Mapping[str, str]) -> None:
    debug = env.get("COMPOZY_DEBUG") == "1"
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _Handler)), None)
    if handler is None:
        handler = _Handler(sys.stderr)
        root.addHandler(handler)
    handler.setFormatter(_Formatter(debug))
    root.setLevel(logging.DEBUG if debug else logging.WARNING)


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None) -> int:
    """Run one command. ``env`` is the environment commands read (``os.environ`` by default);
    nothing here writes to ``os.environ``."""
    from compozy_mcp.cli.context import Context

    env = os.environ if env is None else env
    args = build_parser().parse_args(argv)
    _configure_logging(env)
    module = importlib.import_module(f"compozy_mcp.cli.{COMMAND_MODULES[args.command]}")
    try:
        context = Context.resolve(env, home=args.home, url=args.url, socket=args.socket)
        code: int = module.run(args, context)
        return code
    except CompozyError as error:
        from compozy_mcp.cli.reporting import report

        return report(
            error,
            json_output=getattr(args, "output", "text") == "json",
            verbose=getattr(args, "verbose", False),
        )
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into a command that closed early (``| head``) is not an error.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
