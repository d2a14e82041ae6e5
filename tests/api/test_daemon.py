"""``compozy serve`` as a process: which listeners it opens and how it stops."""

from __future__ import annotations

import signal

import pytest
from tests.api.support import Home, running_daemon, short_dir

pytestmark = pytest.mark.process


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home.make(tmp_path_factory.mktemp("daemon"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_daemon_cleanly_and_removes_the_socket(home: Home, sig: int) -> None:
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
    ):
        assert daemon.socket is not None
        assert daemon.socket.exists()
        code = daemon.stop(sig)
        assert code == 0, daemon.stderr
        assert not daemon.socket.exists()
        assert daemon.stderr.rstrip().endswith("compozy serve: stopped")
        assert "Traceback" not in daemon.stderr


def test_no_tcp_serves_only_the_socket_at_its_default_place(home: Home) -> None:
    default_socket = home.path / "compozy.sock"
    if len(str(default_socket)) > 100:
        pytest.skip("the scratch directory is too deep for a Unix socket path")
    with running_daemon(home, "--no-tcp", listeners=1) as daemon:
        assert daemon.url is None
        assert daemon.socket == default_socket
        with daemon.socket_client() as client:
            assert client.get("/api/sessions").json() == {"sessions": []}
        assert daemon.stop() == 0
    assert not default_socket.exists()


def test_no_uds_serves_only_tcp_and_creates_no_socket(home: Home) -> None:
    with (
        short_dir() as where,
        running_daemon(
            home, "--port", "0", "--no-uds", "--uds", str(where / "d.sock"), listeners=1
        ) as daemon,
    ):
        assert daemon.socket is None
        assert "unix:" not in daemon.stderr
        assert not (where / "d.sock").exists()
        with daemon.client() as client:
            assert client.get("/api/tools").status_code == 200
