"""``compozy open --print`` as a user types it: the board's URL of the daemon it names (the
page that URL serves is the board), the default address when none is named, and a Unix socket
refused (a browser cannot open one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.api.support import Home, compozy, running_daemon, short_dir

from compozy_mcp.cli._reporting import EXIT_USAGE

pytestmark = pytest.mark.process


def test_open_print_prints_the_board_of_the_daemon_named_and_that_page_is_the_board(
    tmp_path: Path,
) -> None:
    home = Home.make(tmp_path)
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon:
        assert daemon.url is not None
        for named, args in (
            (home, ("--url", daemon.url)),  # on the command line
            (home.with_env(COMPOZY_URL=daemon.url), ()),  # or in the environment
        ):
            done = compozy(named, *args, "open", "--print")
            assert done.returncode == 0, done.stderr
            assert done.stdout == daemon.url + "/\n"
            assert done.stderr == ""
        with daemon.client() as client:
            page = client.get(done.stdout.strip())
        assert page.status_code == 200
        assert "<title>compozy board</title>" in page.text
        assert 'src="/static/board.js"' in page.text


def test_open_print_without_a_daemon_prints_the_default_address(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    for env in (home, home.with_env(COMPOZY_URL="none")):
        done = compozy(env, "open", "--print")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "http://127.0.0.1:8765/\n"  # compozy serve's default listener


def test_open_print_refuses_a_unix_socket(tmp_path: Path) -> None:
    with short_dir() as where:
        done = compozy(Home.make(tmp_path), "--socket", str(where / "d.sock"), "open", "--print")
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert "the board is served over TCP" in done.stderr
    assert "Traceback" not in done.stderr
