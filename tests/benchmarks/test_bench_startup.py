"""``benchmarks/startup.py`` in its tiny mode: each command, in-process and against a daemon
the script starts and stops, runs and is counted. Times are printed, never asserted."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.startup import AGENT_COMMANDS, COMMANDS, DAEMON_COMMANDS
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_every_command_is_timed_with_its_module_count() -> None:
    result: dict[str, Any] = run_json("startup")
    figures = result["startup"]
    assert list(figures) == [*COMMANDS, *AGENT_COMMANDS, *DAEMON_COMMANDS]
    for label, row in figures.items():
        assert row["runs"] == 1, label
        assert 0 < row["min_ms"] <= row["median_ms"] <= row["p90_ms"], label
        assert row["modules"] > 0, label
    # a command against a daemon imports less than the same command in-process
    assert figures["daemon: compozy tool list"]["modules"] < figures["compozy tool list"]["modules"]
