"""``benchmarks/call_cpu.py``: every layer of the status path is measured, and the SDK's floor
beside it (figures printed, never asserted on)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_benchmark_reports_each_layer_and_the_floor() -> None:
    result: dict[str, Any] = run_json("call_cpu")
    rows = {row["row"]: row for row in result["rows"]}
    assert {"sessions.status", "mcp (a) SDK echo", "mcp (c) status compact"} <= set(rows)
    assert {"sdk constant, compact record", "sdk constant, full record"} <= set(rows)
    assert all(row["cpu_us_min"] > 0 for row in rows.values())
