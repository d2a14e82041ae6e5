"""The store benchmarks in their tiny mode: the PostgreSQL drivers side by side on one server,
and the HTTP load harness against a daemon on each store engine. Figures are printed, never
asserted on their size."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = [pytest.mark.bench, pytest.mark.postgres]


def test_the_driver_benchmark_times_both_statements_on_each_driver() -> None:
    result: dict[str, Any] = run_json("pg_driver")
    measured = {(row["driver"], row["statement"]) for row in result["rows"]}
    assert measured == {
        (driver, statement)
        for driver in ("psycopg", "psycopg_async", "asyncpg")
        for statement in ("read", "cas_update")
    }
    assert all(row["p50_us"] > 0 for row in result["rows"])
    assert set(result["reads_per_s_8_concurrent"]) == {"psycopg_pool_threads", "asyncpg_pool"}


def test_the_load_harness_drives_a_daemon_on_each_engine_without_a_failure() -> None:
    result: dict[str, Any] = run_json("store_load")
    summary = {(row["engine"], row["operation"]): row for row in result["summary"]}
    assert set(summary) == {
        (engine, operation)
        for engine in ("sqlite", "postgresql", "postgresql-async-commit")
        for operation in ("session_status", "session_create")
    }
    assert all(row["calls_per_s"] > 0 and row["failures"] == 0 for row in summary.values())
    assert all("postgres" in run["cpu_s"] for run in result["runs"] if run["engine"] != "sqlite")
