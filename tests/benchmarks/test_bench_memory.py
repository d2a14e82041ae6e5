"""``benchmarks/memory.py`` in its tiny mode: a daemon started, sessions stored and one bound,
every figure read from the daemon's ``/proc`` entry. Figures are printed, never asserted on
their size."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_memory_benchmark_reports_each_figure_of_a_daemon_it_stopped() -> None:
    result: dict[str, Any] = run_json("memory")
    figures = result["memory"]
    assert (figures["sessions"], figures["bound"]) == (20, 1)
    assert figures["agent_processes"] == 1  # the bound echo session's agent
    assert 0 < figures["idle_mib"] <= figures["mcp_mib"] <= figures["after_mib"]
    assert figures["agent_process_mib"] > 0
