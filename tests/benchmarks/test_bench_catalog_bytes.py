"""``benchmarks/catalog_bytes.py``: the four figures come from a live tools/list and make sense."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.catalog_bytes import list_through_wire, model_projection
from benchmarks.catalogs import bench_app
from benchmarks.fixture_server import entries
from benchmarks.fixture_server import tools as fixture_tools
from benchmarks.search_tasks import TASKS
from benchmarks.variants import META_OUTPUT_VIEWS
from benchmarks.wire import response_result
from tests.benchmarks.bench_run import run_json

from compozy_mcp.native import build_registry
from compozy_mcp.validation import compile_validator

pytestmark = [pytest.mark.bench, pytest.mark.anyio]
REGISTRY = build_registry()


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_json("catalog_bytes", "--verify-stdio")


def test_figures_are_positive_and_ordered(result: dict[str, Any]) -> None:
    fig = result["figures"]
    assert all(fig[key] > 0 for key in "abcd")
    assert fig["c"] < fig["a"] < fig["b"]
    assert fig["d"] < fig["c"]  # the projection drops annotations and era metadata


def test_ratios_match_the_figures(result: dict[str, Any]) -> None:
    fig, ratios = result["figures"], result["ratios"]
    assert ratios["c_over_a"] == pytest.approx(fig["c"] / fig["a"], abs=1e-4)
    assert ratios["c_over_d"] == pytest.approx(fig["c"] / fig["d"], abs=1e-4)
    assert set(result["targets"]) == {"c_over_a", "c_over_d"}
    assert all(isinstance(t["met"], bool) for t in result["targets"].values())


def test_catalog_is_the_full_policy_catalog(result: dict[str, Any]) -> None:
    assert result["tools"] == len(REGISTRY)
    assert result["tools_with_views"] == sum(1 for tool in REGISTRY if tool.has_views)
    assert result["headline_era"] == "2026-07-28"
    assert result["eras"]["2026-07-28"]["negotiated"] == "2026-07-28"


def test_heaviest_tools_are_sorted(result: dict[str, Any]) -> None:
    weights = [tool["bytes"] for tool in result["heaviest"]]
    assert len(weights) == 10
    assert weights == sorted(weights, reverse=True)
    assert sum(weights) < result["figures"]["c"]


def test_the_wire_matches_a_stdio_subprocess_byte_for_byte(result: dict[str, Any]) -> None:
    assert result["stdio_identical"] == {
        "baseline": True,
        "views_with_schemas": True,
        "current": True,
    }


async def test_variants_advertise_what_each_stage_did() -> None:
    with bench_app() as app:
        base = await list_through_wire(app, "baseline", "2026-07-28")
        views = await list_through_wire(app, "views_with_schemas", "2026-07-28")
        now = await list_through_wire(app, "current", "2026-07-28")
    names = [tool.id for tool in REGISTRY]
    assert [t["name"] for t in now.tools] == names
    assert all("outputSchema" not in t for t in now.tools)
    assert all("outputSchema" in t for t in base.tools)
    assert all("result_view" not in t["inputSchema"]["properties"] for t in base.tools)
    with_views = {tool.id for tool in REGISTRY if tool.has_views}
    for tool in views.tools:
        assert "outputSchema" in tool
        has_meta = META_OUTPUT_VIEWS in (tool.get("_meta") or {})
        assert has_meta == (tool["name"] in with_views)
    assert len(model_projection(now.tools)) < now.result_bytes


def test_result_bytes_are_sliced_not_reserialized() -> None:
    line = b'{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}'
    assert response_result(line, 7) == b'{"tools":[]}'
    with pytest.raises(ValueError, match="not a result line"):
        response_result(line, 8)


# --- progressive discovery (issue 16, item 4) ------------------------------------------------


def test_search_mode_advertises_three_tools_whatever_the_catalog(result: dict[str, Any]) -> None:
    found = result["discovery"]
    assert found["native"]["full"]["tools"] == len(REGISTRY)
    assert found["with_fixture"]["full"]["tools"] == len(REGISTRY) + len(fixture_tools())
    for catalog in ("native", "with_fixture"):
        row = found[catalog]
        assert row["search"]["tools"] == 3
        assert row["search"]["model_bytes"] < row["full"]["model_bytes"]
        assert row["search"]["model_bytes"] < row["search"]["list_bytes"]
        ratio = row["search"]["model_bytes"] / row["full"]["model_bytes"]
        assert row["search_over_full"] == pytest.approx(ratio, abs=1e-4)
    # the pass-through catalog is larger in full, the same size in search mode
    assert found["with_fixture"]["full"]["model_bytes"] > found["native"]["full"]["model_bytes"]
    assert (
        found["with_fixture"]["search"]["model_bytes"] == found["native"]["search"]["model_bytes"]
    )
    answer = found["with_fixture"]["search_answer"]
    assert 0 < answer["median_bytes"] <= answer["max_bytes"]
    assert answer["queries"] == len(TASKS)


def test_the_search_quality_figure_is_the_share_of_tasks_found_in_the_top_3(
    result: dict[str, Any],
) -> None:
    quality = result["search_quality"]
    assert quality["tasks"] == len(TASKS) >= 60
    assert quality["top3_share"] == pytest.approx(quality["top3_hits"] / quality["tasks"], abs=1e-4)
    assert quality["top1_share"] <= quality["top3_share"]
    assert len(quality["misses"]) == quality["tasks"] - quality["top3_hits"]
    assert quality["catalog_tools"] == len(REGISTRY) + len(fixture_tools())


def test_every_task_names_a_tool_of_the_catalog() -> None:
    served = {f"fixture__{tool.name}" for tool in fixture_tools()} | {t.id for t in REGISTRY}
    for task in TASKS:
        assert task.expected & served, task
    assert len({task.text for task in TASKS}) == len(TASKS)


def test_the_fixture_server_serves_every_upstream_tool_with_a_valid_schema() -> None:
    tools = fixture_tools()
    assert len(tools) == len(entries()) == 269
    assert len({tool.name for tool in tools}) == len(tools)
    for tool in tools:
        compile_validator(tool.input_schema)
        assert tool.description
