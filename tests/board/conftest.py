"""The board's HTTP tests: a client of the module's ``daemon`` (each module starts its own)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from tests.api.support import Daemon


@pytest.fixture(scope="module")
def client(daemon: Daemon) -> Iterator[httpx2.Client]:
    with daemon.client() as opened:
        yield opened
