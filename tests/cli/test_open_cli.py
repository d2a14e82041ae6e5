"""``compozy open --print`` as a user types it: the board's URL of the daemon it names (the
page that URL serves is the board), the TCP address a daemon reached on its Unix socket says it
serves (a browser cannot open a socket), and the default address when there is no daemon."""

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


def test_open_print_asks_a_daemon_on_its_socket_for_the_address_it_serves(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    with short_dir() as where:
        sock = str(where / "d.sock")
        with running_daemon(home, "--port", "0", "--uds", sock) as daemon:
            done = compozy(home, "--socket", sock, "open", "--print")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{daemon.url}/\n"  # its own port, not the default one


def test_open_print_says_so_when_the_daemon_serves_no_tcp_address(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    with short_dir() as where:
        sock = str(where / "d.sock")
        with running_daemon(home, "--no-tcp", "--uds", sock, listeners=1):
            done = compozy(home, "--socket", sock, "open", "--print")
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert "serves no TCP address" in done.stderr
    assert "Traceback" not in done.stderr
