"""The store the daemons of a cluster test share: each engine in turn (PostgreSQL in the
postgres tier, a new empty database the first daemon migrates)."""

from __future__ import annotations

import pytest
from tests import pg


@pytest.fixture(params=pg.ENGINES)
def store_url(request: pytest.FixtureRequest) -> str | None:
    """``None``: one SQLite file; else the URL of a new PostgreSQL database."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url
