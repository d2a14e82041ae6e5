"""``benchmarks/cluster.py`` in its tiny mode: reads served by 1 and 3 daemons on one store, and
a failover after kill -9. Figures are printed, never asserted on their size."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_cluster_benchmark_reports_reads_per_daemon_count_and_a_failover() -> None:
    result: dict[str, Any] = run_json("cluster")["cluster"]
    reads = result["reads"]
    assert [r["daemons"] for r in reads] == [1, 3]
    for row in reads:
        assert row["calls"] > 0
        assert len(row["daemon_cpu_s"]) == row["daemons"]
    failover = result["failover"]
    assert failover["next_turn"] == "completed"
    assert failover["cut_off_turn"] == ["cancelled", "daemon_restarted"]
    print(f"\n{result}")
