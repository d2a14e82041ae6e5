"""Issue 22: ``logs/`` and ``run/`` were 0755 and upstream servers' logs 0644. Everything compozy
writes under its home is the owner's only: directories 0700, files 0600, and what an earlier
version left wider is tightened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from compozy_mcp.agents._announced import Announcements
from compozy_mcp.runtime import _orphans as orphans
from compozy_mcp.upstream.connection import _log_file
from compozy_mcp.upstream.status import Report, StatusBoard


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    old = os.umask(0o022)  # the usual umask, under which mkdir and open gave 0755 and 0644
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    try:
        yield home
    finally:
        os.umask(old)


def test_an_upstream_servers_log_is_0600_in_0700_logs_directories(home: Path) -> None:
    with _log_file(home, "everything") as out:
        out.write("started\n")
    assert mode(home / "logs") == mode(home / "logs" / "mcp") == 0o700
    assert mode(home / "logs" / "mcp" / "everything.log") == 0o600


def test_logs_an_earlier_version_left_0755_and_0644_are_tightened(home: Path) -> None:
    (home / "logs" / "mcp").mkdir(parents=True, mode=0o755)
    (home / "logs").chmod(0o755)
    (home / "logs" / "mcp").chmod(0o755)
    log = home / "logs" / "mcp" / "everything.log"
    log.write_text("old\n")
    log.chmod(0o644)
    with _log_file(home, "everything") as out:
        out.write("new\n")
    assert mode(home / "logs") == mode(home / "logs" / "mcp") == 0o700
    assert mode(log) == 0o600
    assert log.read_text() == "old\nnew\n"


def test_run_and_what_is_written_in_it_are_the_owners_only(home: Path) -> None:
    StatusBoard(home).publish(Report(os.getpid(), "proxy", ()))
    assert mode(home / "run") == mode(home / "run" / "mcp") == 0o700
    assert {mode(path) for path in (home / "run" / "mcp").iterdir()} == {0o600}
    Announcements(home).record("general", ["m"], [])
    assert mode(home / "run" / "agents.json") == 0o600
    noted = orphans.note(home / "run", os.getpgid(0))
    if noted is not None:  # without /proc nothing is noted
        assert mode(home / "run" / "agents") == 0o700
        assert mode(noted) == 0o600
        orphans.forget(noted)
