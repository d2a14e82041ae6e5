"""The echo agent started by hand on something other than pipes: a clear refusal (exit 2)
instead of the ACP SDK's traceback (a file) or a wait without end (``/dev/null``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from compozy_mcp.echo_agent import unusable_stdio


@pytest.fixture
def pipe() -> Iterator[tuple[IO[str], IO[str]]]:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as reader, os.fdopen(write_end, "w") as writer:
        yield reader, writer


def test_pipes_carry_acp(monkeypatch: pytest.MonkeyPatch, pipe: tuple[IO[str], IO[str]]) -> None:
    reader, writer = pipe
    monkeypatch.setattr(sys, "stdin", reader)
    monkeypatch.setattr(sys, "stdout", writer)
    assert unusable_stdio() is None


def test_a_file_or_dev_null_is_named_with_its_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipe: tuple[IO[str], IO[str]]
) -> None:
    reader, _ = pipe
    with open(tmp_path / "out.txt", "w") as file, open(os.devnull) as null:
        monkeypatch.setattr(sys, "stdin", reader)
        monkeypatch.setattr(sys, "stdout", file)
        assert unusable_stdio() == "stdout is a file"
        monkeypatch.setattr(sys, "stdin", null)
        assert unusable_stdio() == "stdin is neither a pipe nor a terminal"
    monkeypatch.setattr(sys, "stdin", reader)
    monkeypatch.setattr(sys, "stdout", file)  # closed now
    assert unusable_stdio() == "stdout is closed"


@pytest.mark.process
def test_started_with_stdout_on_a_file_it_exits_2_saying_why(tmp_path: Path) -> None:
    with open(tmp_path / "out.txt", "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "compozy_mcp.echo_agent"],
            input="",
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr == (
        "python -m compozy_mcp.echo_agent: stdout is a file: the agent speaks ACP (JSON-RPC "
        "lines) with its client over pipes; start it from an ACP client (compozy does, for a "
        "session of provider echo)\n"
    )
    assert (tmp_path / "out.txt").read_text() == ""
