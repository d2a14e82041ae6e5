"""``benchmarks/cluster.py`` in its tiny mode: session_status and session_create served by 1
and 3 daemons on one store (SQLite, and PostgreSQL with ``--store postgresql``), and a failover
after kill -9. Figures are printed, never asserted on their size."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from tests import pg
from tests.benchmarks.bench_run import run_json

from benchmarks import cluster

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


def test_a_daemon_whose_port_was_taken_starts_again_on_another_and_three_taken_is_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken_port: int
) -> None:
    """Another process may take the probed port before the daemon binds it (CI once failed on
    'did not start', the daemon's stderr thrown away)."""
    probes = itertools.count()
    free = cluster._free_port
    # the first daemon's first probe, and the second daemon's, find the held port
    monkeypatch.setattr(
        cluster, "_free_port", lambda: taken_port if next(probes) in (0, 2) else free()
    )
    with cluster.daemons(tmp_path / "retried", 2) as running:
        urls = [url for _, url in running]
    assert len(urls) == 2
    assert all(not url.endswith(f":{taken_port}") for url in urls)
    monkeypatch.setattr(cluster, "_free_port", lambda: taken_port)
    with pytest.raises(SystemExit) as refused, cluster.daemons(tmp_path / "refused", 1):
        pass
    assert f"compozy serve at http://127.0.0.1:{taken_port} did not start" in str(refused.value)
    assert "Address already in use" in str(refused.value)
