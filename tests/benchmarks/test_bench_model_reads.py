"""``benchmarks/model_reads.py`` in its quick mode: one workflow through Claude Code against the
fake Anthropic API, compact then full, measured from the fake's request log (sizes printed, the
relations between them asserted; never a time)."""

from __future__ import annotations

import pytest
from tests.benchmarks.bench_run import run_json
from tests.fakes.agents import not_installed

pytestmark = [pytest.mark.bench, pytest.mark.agents]


def test_what_the_model_reads_is_measured_from_the_fakes_log() -> None:
    missing = not_installed()
    if missing:
        pytest.skip(missing)
    result = run_json("model_reads", timeout=600)
    (claude,) = result["results"]
    compact, full, search = claude["compact"], claude["full"], claude["search"]
    # one result per workflow step reached the model in each run
    assert compact["tool_results"] == full["tool_results"] == 8
    # compozy's tools are part of what every request carries; search mode offers few
    assert (
        0
        < compact["compozy_definitions_bytes_per_request"]
        < (compact["tool_definitions_bytes_per_request"])
    )
    assert (
        0
        < search["compozy_definitions_bytes_per_request"]
        < (compact["compozy_definitions_bytes_per_request"] / 5)
    )
    # session_status (the third step): the compact record is the smaller one
    assert compact["each_result_bytes"][2] < full["each_result_bytes"][2]
    # the full catalog is over the HTTP ceiling: compozy stored it and sent a pointer
    assert full["cut_by_compozy"] == 1
    assert full["recorded_result_bytes"] > full["tool_result_bytes"]
    assert claude["records_compact_to_full"] < 1
