"""Fixtures: ``proxy`` (in-process, stdio, HTTP over TCP, HTTP over a Unix socket, and stdio
relaying a daemon) and ``mode`` (``auto``: 2026-07-28, ``legacy``: 2025-11-25). See
``support.py`` for how each is reached."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.proxy.shared import SharedClients
from tests.proxy.support import (
    MODES,
    Home,
    Http,
    InProcess,
    Mode,
    Proxy,
    ProxyPool,
    Relayed,
    Stdio,
    Uds,
    make_home,
)

from compozy_mcp.assembly import App
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings


@pytest.fixture(scope="session")
def proxy_home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    # short: a Unix socket path must stay under ~104 bytes
    return make_home(tmp_path_factory.mktemp("px"))


@pytest.fixture(scope="session")
def pool(proxy_home: Home) -> Iterator[ProxyPool]:
    started = ProxyPool(proxy_home)
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="session")
def shared_clients(pool: ProxyPool) -> Iterator[SharedClients]:
    """The stdio clients kept open across tests; closed before the pool's daemons stop (the
    relays among them relay those daemons)."""
    shared = SharedClients()
    try:
        yield shared
    finally:
        shared.close()


PROCESS = pytest.mark.process


@pytest.fixture(
    params=[
        "inproc",
        pytest.param("stdio", marks=PROCESS),
        pytest.param("http", marks=PROCESS),
        pytest.param("uds", marks=PROCESS),
        pytest.param("relay", marks=PROCESS),
    ]
)
def proxy(
    request: pytest.FixtureRequest,
    app: App,
    settings: Settings,
    clock: FixedClock,
    proxy_home: Home,
    pool: ProxyPool,
    shared_clients: SharedClients,
) -> Proxy:
    kind = request.param
    if kind == "inproc":
        return InProcess(app, settings, clock)
    if kind == "stdio":
        return Stdio(proxy_home, shared_clients)
    if kind == "http":
        return Http(pool)
    if kind == "relay":
        return Relayed(pool, shared_clients)
    return Uds(pool)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value
