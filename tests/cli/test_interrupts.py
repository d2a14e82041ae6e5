"""Ctrl-C ends a command with status 130 and no traceback, however it reaches the command:
as ``KeyboardInterrupt``, or as the cancellation of its event loop's main task (what asyncio
leaves when a task group cancelled that task too as the interrupt unwound it: seen as a
``compozy proxy`` relaying a daemon that exited 1 with a CancelledError traceback)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from compozy_mcp.cli import _proxy
from compozy_mcp.cli._context import Context
from compozy_mcp.cli.main import main


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "COMPOZY_HOME": str(tmp_path / "home"),
        "COMPOZY_WORKSPACE": str(tmp_path),
        "COMPOZY_URL": "none",
    }


@pytest.mark.parametrize("raised", [KeyboardInterrupt, asyncio.CancelledError])
def test_an_interrupted_command_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: type[BaseException]
) -> None:
    def interrupted(args: argparse.Namespace, context: Context) -> int:
        async def serving() -> None:
            raise raised()

        asyncio.run(serving())
        return 0

    monkeypatch.setattr(_proxy, "run", interrupted)
    assert main(["proxy"], env=_env(tmp_path)) == 130


def test_another_error_is_not_taken_for_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(args: argparse.Namespace, context: Context) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(_proxy, "run", failing)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["proxy"], env=_env(tmp_path))
