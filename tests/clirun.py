"""``compozy`` run in this process: ``main(argv, env=...)`` with its own stdin, stdout and stderr.

What a user types, minus the interpreter start-up: the same parser, commands, output and exit
codes as the console script (a few tests run the real executable to prove that one). Options
travel as arguments and an explicit environment, never through ``os.environ``.
"""

from __future__ import annotations

import functools
import io
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout

from compozy_mcp.cli import main as cli_main
from compozy_mcp.cli.main import main

# The parser, built once per test process instead of once per command (~25 ms each: some 730
# arguments on 64 subcommands, and hundreds of commands per run). Building it reads nothing
# but the code and parsing leaves it as it was, so each command sees the parser the console
# script builds.
cli_main.build_parser = functools.cache(cli_main.build_parser)


@contextmanager
def _stdin(text: str | None) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text or "")
    try:
        yield
    finally:
        sys.stdin = saved


def run_cli(
    *args: str, env: Mapping[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``compozy ARGS`` to its end, as a finished process would report it."""
    out, err = io.StringIO(), io.StringIO()
    with _stdin(stdin), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args), env=dict(env))
        except SystemExit as exit_:  # argparse: --help, --version, usage errors
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return subprocess.CompletedProcess(["compozy", *args], code, out.getvalue(), err.getvalue())
