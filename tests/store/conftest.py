"""The store the contract tests run on: each engine in turn (PostgreSQL in the postgres tier),
seeded with the rows a session's foreign keys point at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests import pg
from tests.store.rows import seed

from compozy_mcp.store import Store


@pytest.fixture(params=pg.ENGINES)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    with pg.stores_on(request.param, request) as (opened,):
        with opened.write() as writer:
            seed(writer)
        yield opened
