"""The cluster tests' own start of several daemons: a port another process took between the
probe and the daemon's bind is no failure of the product (CI once failed on it)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from tests.cluster import support

pytestmark = pytest.mark.process


def test_a_daemon_whose_port_was_taken_starts_again_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken_port: int
) -> None:
    probes = itertools.count()
    free = support.free_port
    monkeypatch.setattr(support, "free_port", lambda: taken_port if next(probes) == 0 else free())
    with support.one_store_daemons(tmp_path, 1) as (daemon,):
        assert daemon.url is not None
        assert not daemon.url.endswith(f":{taken_port}")
        with daemon.client() as http:
            assert http.get("/healthz").status_code == 200


def test_a_port_taken_every_time_is_the_daemons_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken_port: int
) -> None:
    monkeypatch.setattr(support, "free_port", lambda: taken_port)
    with (
        pytest.raises(AssertionError, match="Address already in use"),
        support.one_store_daemons(tmp_path, 1),
    ):
        pass
