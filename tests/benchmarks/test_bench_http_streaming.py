"""``benchmarks/http_streaming.py``: both HTTP answer modes serve the same calls in both eras,
and the figures are printed (never asserted on: tests do not assert on wall-clock time)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_benchmark_reports_both_modes_in_both_eras() -> None:
    result: dict[str, Any] = run_json("http_streaming")
    seen = {(row["era"], row["variant"]) for row in result["rows"]}
    assert seen == {
        (era, variant) for era in ("2025-11-25", "2026-07-28") for variant in ("json", "streaming")
    }
    assert all(row["calls_per_s"] > 0 for row in result["rows"])
