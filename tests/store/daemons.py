"""A daemon served from a PostgreSQL store, for the tests that start one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
from tests.api.support import Daemon, Home, running_daemon, short_dir


@contextmanager
def daemon_on_store(home: Home, url: str) -> Iterator[tuple[Daemon, httpx2.Client]]:
    """``compozy serve --store URL`` on loopback TCP and a socket of its own, and an HTTP
    client of it; stopped at the end."""
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock"), "--store", url)
        as daemon,
        daemon.client() as http,
    ):  # fmt: skip
        yield daemon, http
