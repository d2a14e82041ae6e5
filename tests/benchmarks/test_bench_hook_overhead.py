"""``benchmarks/hook_overhead.py`` in its tiny mode: every row of both levels is measured and
reported as a ratio to the call with no hooks. Wall-clock figures are printed, never asserted."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.hook_overhead import LEVELS, ROWS
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_json("hook_overhead")


def test_every_level_has_every_row(result: dict[str, Any]) -> None:
    assert list(result["results"]) == list(LEVELS)
    for level, rows in result["results"].items():
        assert [r["row"] for r in rows] == list(ROWS), level


def test_rows_are_ratios_to_the_call_without_hooks(result: dict[str, Any]) -> None:
    for rows in result["results"].values():
        by_row = {r["row"]: r for r in rows}
        assert by_row["n"]["ratio_to_none"] == 1
        for row in rows:
            assert row["sets"] == 2
            assert row["calls_per_s"] > 0
            assert 0 < row["latency_median_us"] <= row["latency_p95_us"]
            assert row["ratio_min"] <= row["ratio_to_none"] <= row["ratio_max"]
