"""``benchmarks/first_token.py`` in its tiny mode: echo's warm time to first token through the
daemon and bare, printed (never asserted on time)."""

from __future__ import annotations

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_first_token_rows_are_measured() -> None:
    result = run_json("first_token")
    (echo,) = result["results"]
    assert echo["agent"] == "echo"
    assert echo["prompts"] == 3
    assert echo["acp"]["median_ms"] > 0
    assert echo["daemon"]["median_ms"] > 0
    assert echo["daemon_with_compozy_tools"]["median_ms"] > 0
    assert isinstance(echo["target_met"], bool)
