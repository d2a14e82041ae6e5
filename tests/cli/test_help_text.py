"""``--help`` reads as plain text on a terminal, and says what the command really does."""

from __future__ import annotations

import re

import pytest
from tests.clirun import run_cli

from compozy_mcp.cli._parsing import plain_text, subparsers
from compozy_mcp.cli.main import build_parser

RST = re.compile(r"``|:(?:mod|class|func|meth|data|attr):`")
PATHS = [path for path, _ in subparsers(build_parser())]


@pytest.mark.parametrize("path", PATHS)
def test_help_holds_no_restructured_text(path: str) -> None:
    done = run_cli(*path.split(), "--help", env={})
    assert done.returncode == 0
    assert not RST.search(done.stdout), done.stdout


def test_session_prompt_help_describes_prompt_in_paragraphs() -> None:
    text = run_cli("session", "prompt", "--help", env={}).stdout
    assert "`session prompt ID TEXT` queues the prompt" in text
    assert "history | approve" not in text  # the module's title line is not this command's
    assert "\n\nWithout a daemon" in text  # paragraphs kept


def test_url_help_says_where_commands_run_without_it() -> None:
    text = " ".join(run_cli("--help", env={}).stdout.split())
    assert "else the daemon listening on $COMPOZY_HOME/compozy.sock, else in-process" in text


def test_plain_text_keeps_the_words_of_roles_and_literals() -> None:
    assert plain_text("``compozy x``: see :mod:`compozy_mcp.proxy` and :class:`~a.B`") == (
        "`compozy x`: see compozy_mcp.proxy and a.B"
    )
