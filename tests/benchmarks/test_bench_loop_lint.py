"""``benchmarks/loop_lint.py``: the generated 500-node Loop lints clean and the figure is
printed (never asserted on: tests do not assert on wall-clock time)."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.loop_lint import generate
from tests.benchmarks.bench_run import run_json

from compozy_mcp.loops._lint import lint
from compozy_mcp.loops._source import load
from compozy_mcp.native import build_registry

pytestmark = pytest.mark.bench


def test_the_generated_loop_has_the_nodes_asked_for_and_lints_clean() -> None:
    definition, items = lint(load(generate(500)), build_registry())
    assert len(definition.nodes) == 500
    assert items == []
    kinds = {node.kind for node in definition.nodes.values()}
    assert {"compozy__session_status", "transform", "fan-out", "collect"} <= kinds


def test_the_benchmark_reports_its_figure() -> None:
    result: dict[str, Any] = run_json("loop_lint")
    assert result["nodes"] == 500
    assert result["errors"] == []
    assert result["lint_ms"]["median"] > 0
