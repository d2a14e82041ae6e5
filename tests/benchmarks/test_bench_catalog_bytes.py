"""``benchmarks/catalog_bytes.py``: the four figures come from a live tools/list and make sense."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.catalog_bytes import bench_app, list_through_wire, model_projection
from benchmarks.variants import META_OUTPUT_VIEWS
from benchmarks.wire import response_result
from tests.benchmarks.bench_run import run_json

from compozy_mcp.native import build_registry

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
