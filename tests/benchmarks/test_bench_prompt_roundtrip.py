"""``benchmarks/prompt_roundtrip.py`` in its tiny mode: every row runs real turns on the echo
agent and is reported as a ratio to the direct ACP client, and the (mcp) row's fresh daemon
reports how long its event loop was held during its first bind. Wall-clock figures are printed,
never asserted. The time to first token the script also reports is test_bench_first_token's:
its own benchmark measures it, so this run skips it rather than measure it twice."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.prompt_roundtrip import ROWS
from tests.benchmarks.bench_run import run_json

pytestmark = pytest.mark.bench


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_json("prompt_roundtrip", "--no-first-token")


def test_every_row_is_measured_as_a_ratio_to_the_direct_acp_client(result: dict[str, Any]) -> None:
    rows = result["results"]
    assert [r["row"] for r in rows] == list(ROWS)
    assert rows[0]["ratio_to_acp"] == 1
    for row in rows:
        assert row["prompts"] == 5
        assert row["prompts_per_s"] > 0
        assert 0 < row["latency_median_ms"] <= row["latency_p95_ms"]
    assert result["first_token"] == []


def test_the_daemons_first_bind_reports_the_longest_health_answer_meanwhile(
    result: dict[str, Any],
) -> None:
    first_bind = result["first_bind"]
    assert first_bind["healthz_answers"] >= 1
    assert first_bind["longest_healthz_ms"] > 0
    print(f"\nfirst bind: {first_bind}")
