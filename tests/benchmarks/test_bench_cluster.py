"""``benchmarks/cluster.py`` in its tiny mode: session_status and session_create served by 1
and 3 daemons on one store (SQLite, and PostgreSQL with ``--store postgresql``), and a failover
after kill -9. Figures are printed, never asserted on their size."""

from __future__ import annotations

from typing import Any

import pytest
from tests import pg
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_the_cluster_benchmark_reports_calls_per_daemon_count_and_a_failover(store: str) -> None:
    if store == "postgresql" and pg.binaries() is None:
        pytest.skip("no PostgreSQL server to start (pgserver, or initdb and pg_ctl)")
    result: dict[str, Any] = run_json("cluster", "--store", store)["cluster"]
    assert result["store"] == store
    calls = result["calls"]
    assert [(r["operation"], r["daemons"]) for r in calls] == [
        ("session_status", 1),
        ("session_create", 1),
        ("session_status", 3),
        ("session_create", 3),
    ]
    for row in calls:
        assert row["calls"] > 0
        assert len(row["daemon_cpu_s"]) == row["daemons"]
        # SQLite runs inside the daemons: no server CPU to count
        assert (row["postgres_cpu_s"] > 0) == (store == "postgresql")
    assert [r["daemons"] for r in result["reads"]] == [1, 3]
    failover = result["failover"]
    assert failover["next_turn"] == "completed"
    assert failover["cut_off_turn"] == ["cancelled", "daemon_restarted"]
    print(f"\n{result}")
