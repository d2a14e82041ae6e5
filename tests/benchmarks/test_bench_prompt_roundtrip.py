"""``benchmarks/prompt_roundtrip.py`` in its tiny mode: every row runs real turns on the echo
agent and is reported as a ratio to the direct ACP client. Wall-clock figures are printed,
never asserted. The time to first token the script also reports is test_bench_first_token's:
its own benchmark measures it, so this run skips it rather than measure it twice."""

from __future__ import annotations

import pytest
from benchmarks.prompt_roundtrip import ROWS
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


def test_every_row_is_measured_as_a_ratio_to_the_direct_acp_client() -> None:
    result = run_json("prompt_roundtrip", "--no-first-token")
    rows = result["results"]
    assert [r["row"] for r in rows] == list(ROWS)
    assert rows[0]["ratio_to_acp"] == 1
    for row in rows:
        assert row["prompts"] == 5
        assert row["prompts_per_s"] > 0
        assert 0 < row["latency_median_ms"] <= row["latency_p95_ms"]
    assert result["first_token"] == []
