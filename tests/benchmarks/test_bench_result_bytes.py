"""``benchmarks/result_bytes.py``: compact is smaller than full for every tool with views, and a
seed gives the same byte counts every time."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from benchmarks.result_bytes import TARGET_TOOL, measure
from tests.benchmarks.bench_run import run_json

from compozy_mcp import jsonutil
from compozy_mcp.native import build_registry

pytestmark = pytest.mark.bench

WITH_VIEWS = [tool.id for tool in build_registry() if tool.has_views]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_json("result_bytes", "--seed", "7")


def test_every_tool_with_views_is_measured(result: dict[str, Any]) -> None:
    assert [t["tool_id"] for t in result["tools"]] == WITH_VIEWS
    assert all(t["calls"] > 0 for t in result["tools"])


def test_compact_is_smaller_than_full_for_every_tool(result: dict[str, Any]) -> None:
    for tool in result["tools"]:
        assert 0 < tool["compact_bytes"] < tool["full_bytes"], tool["tool_id"]
        assert 0 < tool["ratio"] < 1
        assert tool["max_call_ratio"] <= 1


def test_the_target_is_reported(result: dict[str, Any]) -> None:
    target = result["targets"][TARGET_TOOL]
    status = next(t for t in result["tools"] if t["tool_id"] == TARGET_TOOL)
    assert target["value"] == status["ratio"]
    assert isinstance(target["met"], bool)


def test_field_breakdown_covers_the_records(result: dict[str, Any]) -> None:
    full = {f["field"]: f["bytes"] for f in result["session_status_fields"]["full"]}
    compact = {f["field"]: f["bytes"] for f in result["session_status_fields"]["compact"]}
    assert "available_commands" in full
    assert "available_commands" not in compact
    assert set(compact) <= set(full)


def test_a_seed_gives_the_same_bytes(result: dict[str, Any]) -> None:
    # the script's run (another process) and this one, on the script's seed
    again = jsonutil.loads(jsonutil.dumps(anyio.run(measure, 7, True)))
    assert again["seed"] == result["seed"] == 7
    assert again["tools"] == result["tools"]
    assert again["world"] == result["world"]
