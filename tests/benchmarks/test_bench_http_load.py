"""``benchmarks/http_load.py``: every row answers under concurrent clients, and the figures
(calls/s, latency, the servers' CPU per call) are printed, never asserted on."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_benchmark_loads_every_row_and_reports_it_against_the_sdk() -> None:
    result: dict[str, Any] = run_json("http_load")
    rows = {row["row"]: row for row in result["results"]}
    assert set(rows) == {"a", "b", "c", "d", "g", "h"}
    assert all(row["calls_per_s"] > 0 for row in rows.values())
    assert rows["a"]["ratio_to_a"] == 1.0
    assert set(result["targets"]) == {"b_over_a", "c_over_a"}
    # (c) is shown beside its floor: the SDK alone carrying the same record (row g)
    assert result["targets"]["c_over_a"]["floor"]["value"] == rows["g"]["ratio_to_a"]
    assert "floor" not in result["targets"]["b_over_a"]
