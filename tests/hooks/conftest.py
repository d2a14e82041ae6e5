"""Fixtures of the hook tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.hooks.support import Webhook, webhook


@pytest.fixture
def server() -> Iterator[Webhook]:
    """A webhook on 127.0.0.1 that answers every POST with 200 and no patch, until a test
    sets ``server.respond``."""
    with webhook() as served:
        yield served
