"""The cluster tests' own start of several daemons: a port another process took between the
probe and the daemon's bind is no failure of the product (CI once failed on it)."""

from __future__ import annotations

import itertools
import socket
from pathlib import Path

import pytest
from tests.cluster import support

pytestmark = pytest.mark.process


def test_a_daemon_whose_port_was_taken_starts_again_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))  # bound, as an outgoing connection holds its port
        taken = held.getsockname()[1]
        probes = itertools.count()
        free = support.free_port
        monkeypatch.setattr(support, "free_port", lambda: taken if next(probes) == 0 else free())
        with support.one_store_daemons(tmp_path, 1) as (daemon,):
            assert daemon.url is not None
            assert not daemon.url.endswith(f":{taken}")
            with daemon.client() as http:
                assert http.get("/healthz").status_code == 200


def test_a_port_taken_every_time_is_the_daemons_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))  # bound, as an outgoing connection holds its port
        taken = held.getsockname()[1]
        monkeypatch.setattr(support, "free_port", lambda: taken)
        with (
            pytest.raises(AssertionError, match="Address already in use"),
            support.one_store_daemons(tmp_path, 1),
        ):
            pass
