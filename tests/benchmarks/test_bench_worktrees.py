"""``benchmarks/worktrees.py``: worktree creation and the two views of a large diff, measured
(figures printed, never asserted on time)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_the_benchmark_creates_worktrees_and_weighs_both_views_of_a_diff() -> None:
    result: dict[str, Any] = run_json("worktrees")
    assert result["files"] == 200
    assert result["create_ms"]["median"] > 0
    diff = result["diff"]
    assert diff["changed_files"] == diff["totals"]["files"] == 50
    assert 0 < diff["compact"]["record_bytes"] < diff["full"]["record_bytes"]
    assert result["diff_compact_to_full"] < 1
