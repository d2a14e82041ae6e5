"""``benchmarks/call_overhead.py`` in its tiny mode (no FastMCP): every row of every transport
is measured and reported. Wall-clock figures are printed by the benchmark, never asserted."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.call_overhead import TRANSPORTS
from benchmarks.common import percentile, table
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench

ROWS = ["a", "b", "c", "d", "e", "g", "h"]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_json("call_overhead", "--no-fastmcp")


def test_every_transport_has_every_row(result: dict[str, Any]) -> None:
    assert list(result["results"]) == list(TRANSPORTS)
    for transport, rows in result["results"].items():
        assert [r["row"] for r in rows] == ROWS, transport


def test_rows_are_sane(result: dict[str, Any]) -> None:
    for rows in result["results"].values():
        for row in rows:
            assert row["sets"] == 2
            assert row["calls_per_s"] > 0
            assert row["calls_per_s_min"] <= row["calls_per_s"] <= row["calls_per_s_max"]
            assert 0 < row["latency_median_us"] <= row["latency_p95_us"]
            assert row["ratio_to_a"] > 0
        assert next(r for r in rows if r["row"] == "a")["ratio_to_a"] == 1


def test_protocols_are_the_ones_each_transport_negotiates(result: dict[str, Any]) -> None:
    protocols = {t: {r["protocol"] for r in rows} for t, rows in result["results"].items()}
    assert protocols["inproc"] == {"2026-07-28"}
    assert protocols["inproc-legacy"] == {"2025-11-25"}


def test_issue_29_targets_are_reported_with_the_floors_of_the_status_rows(
    result: dict[str, Any],
) -> None:
    assert result["fastmcp"] is None
    wanted = {f"{t}_{row}_over_a" for t in ("inproc", "stdio", "http") for row in "bcd"}
    assert set(result["targets"]) == wanted
    for name, target in result["targets"].items():
        assert isinstance(target["met"], bool)
        # a status row is shown beside its floor: the SDK alone carrying the same record
        assert ("floor" in target) == (name.split("_")[-3] in "cd"), name
    status = result["session"]["status_bytes"]
    assert 0 < status["compact"] < status["full"]


def test_percentile_and_table() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == pytest.approx(2.5)
    assert percentile([5.0], 0.95) == 5.0
    text = table(["name", "n"], [["x", 1_000], ["yy", 2]])
    assert text.splitlines()[2] == "x     1,000"
