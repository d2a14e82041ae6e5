"""The Loop tests run in a home whose agents.yaml defines ``general`` (the agent the spec's
example names), the one line a default install needs (:data:`tests.loops.support.GENERAL_AGENT`)."""

from __future__ import annotations

import pytest
from tests.loops.support import define_general

from compozy_mcp.config import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    define_general(settings.home)
    return settings
