"""``compozy``: entry point. Each command lives in its own module under ``compozy_mcp.cli``
with ``add_parser(commands)`` and ``run(args, context)``; modules import heavy things (the
store, the MCP SDK, the HTTP stack) inside ``run`` only, so start-up stays fast."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from compozy_mcp import __version__

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from compozy_mcp.cli._context import Context
    from compozy_mcp.errors import CompozyError

#: command name -> module in compozy_mcp.cli; the module registers the parser and runs it
COMMAND_MODULES = {
    "tool": "_tool",
    "proxy": "_proxy",
    "workspace": "_workspace",
    "profile": "_workspace",
    "session": "_session",
    "serve": "_serve",
    "mcp": "_mcp",
    "catalog": "_release_note",
    "store": "_store",
    "hooks": "_hooks",
    "agent": "_agent",
    "approvals": "_approvals",
    "completion": "_completion",
    "install": "_install",
    "loop": "_loop",
    "worktree": "_worktree",
    "task": "_task",
    "heartbeat": "_heartbeat",
    "open": "_board",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``compozy``; with ``command`` (a key of :data:`COMMAND_MODULES`), one
    that knows that command's module only: a command line that names its command need not
    import the other modules (and what they import) nor build their ~700 arguments."""
    from compozy_mcp.cli._examples import EXAMPLES
    from compozy_mcp.cli._parsing import Parser, add_global_options, finish

    parser = Parser(
        prog="compozy",
        description="Managed agent sessions: native tools with compact and full result views.",
        epilog="Global options (--home, --url, --socket, -v, --log-level, --log-format, "
        "--color) may come before or after the subcommand. Shell completion: "
        "compozy completion bash|zsh|fish.",
    )
    parser.add_argument("--version", action="version", version=f"compozy-mcp {__version__}")
    add_global_options(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = dict.fromkeys(COMMAND_MODULES.values())
    if command is not None:
        modules = {COMMAND_MODULES[command]: None}
    for module in modules:
        importlib.import_module(f"compozy_mcp.cli.{module}").add_parser(commands)
    finish(parser, EXAMPLES)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command a command line names (its first word after the global options), or None
    when it names none the parser knows, or asks for help or the version first: then the
    whole parser answers (the list of commands, a suggestion for a misspelt one)."""
    from compozy_mcp.cli._parsing import GLOBAL_OPTIONS

    takes_value = {
        flag for option in GLOBAL_OPTIONS if "action" not in option.options for flag in option.flags
    }
    words = iter(argv)
    for word in words:
        if word in takes_value:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMAND_MODULES else None
        elif word.split("=", 1)[0] not in takes_value and word not in ("-v", "--verbose"):
            return None  # --help, --version, --, or an option the parser will reject
    return None


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None) -> int:
    """Run one command. ``env`` is the environment commands read (``os.environ`` by default);
    nothing here writes to ``os.environ``."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words == ["--version"]:  # what a script asks most often: nothing to import or build
        print(f"compozy-mcp {__version__}")
        return 0
    from compozy_mcp.cli._context import Context
    from compozy_mcp.cli._logs import configure_logging
    from compozy_mcp.errors import CompozyError

    env = os.environ if env is None else env
    # completion walks every command; a command line that names one needs that one only
    parser = build_parser(None if "_ARGCOMPLETE" in env else command_named(words))
    if "_ARGCOMPLETE" in env:  # the shell asks for completions (compozy completion ...)
        import argcomplete

        argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    configure_logging(env, level=args.log_level, form=args.log_format)
    module = importlib.import_module(f"compozy_mcp.cli.{COMMAND_MODULES[args.command]}")
    context: Context | None = None
    try:
        if args.url and args.socket:
            parser.error("argument --socket: not allowed with argument --url")
        context = Context.resolve(
            env, home=args.home, url=args.url, socket=args.socket, diagnostics=args.verbose
        )
        code: int = module.run(args, context)
        return code
    except CompozyError as error:
        from compozy_mcp.cli._reporting import report

        return report(
            error,
            json_output=getattr(args, "output", "table") == "json",
            yaml_output=getattr(args, "output", "table") == "yaml",
            verbose=args.verbose,
            hint=_hint(error, args, context),
        )
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into a command that closed early (``| head``) is not an error.
        sys.stderr.close()
        return 0
    except BaseException as exc:
        if _interrupted(exc):
            return 130
        raise


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C reaching a command's event loop as the cancellation of its
    main task: asyncio turns it into ``KeyboardInterrupt`` only when nothing else cancelled
    that task meanwhile (a task group cancelling its host task as the interrupt unwinds it
    leaves a ``CancelledError``). Only an interrupt cancels a command's main task."""
    asyncio = sys.modules.get("asyncio")  # never imported for this: a command without a loop
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


def console() -> NoReturn:
    """The ``compozy`` console script (and ``python -m compozy_mcp``): :func:`main`, then the
    process ends without the interpreter's teardown; Ctrl-C ends it at once until the command
    runs an event loop that stops cleanly (:mod:`compozy_mcp.interpreter`)."""
    from compozy_mcp.interpreter import end_on_interrupt, exit_now

    end_on_interrupt()
    exit_now(main())


def _hint(error: CompozyError, args: argparse.Namespace, context: Context | None) -> str | None:
    """What the user probably meant, for an unknown tool or session id."""
    if context is None:
        return None
    from compozy_mcp.cli._suggest import hint

    return hint(error, args, context)


if __name__ == "__main__":
    sys.exit(main())
