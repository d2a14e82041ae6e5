"""Fixtures of the approval tests: sessions in the default permission mode (the shared fixture
runs every other feature's sessions in ``bypass``)."""

from __future__ import annotations

import dataclasses

import pytest

from compozy_mcp.config import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, permission_mode="default")
