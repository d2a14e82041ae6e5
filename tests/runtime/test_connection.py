"""The ACP client side of an agent: how long a bind waits for a loaded conversation's replay."""

from __future__ import annotations

import pytest

from compozy_mcp.runtime._connection import REPLAY_BOUND_SECONDS, REPLAY_QUIET_SECONDS
from compozy_mcp.runtime._connection import replay_wait as product_replay_wait

LOADED = 100.0  # when the agent answered load_session, on the monotonic clock


def replay_wait(loaded_at: float, last_update: float, *, now: float) -> float:
    """The seconds left, with the product's quiet time and bound."""
    return product_replay_wait(
        loaded_at, last_update, now, REPLAY_QUIET_SECONDS, REPLAY_BOUND_SECONDS
    )


def test_an_agent_that_did_not_load_is_not_waited_for() -> None:
    assert replay_wait(0.0, 0.0, now=5.0) == 0.0


def test_an_agent_silent_since_its_load_answer_is_waited_for_the_quiet_time_only() -> None:
    assert replay_wait(LOADED, LOADED - 1, now=LOADED) == pytest.approx(REPLAY_QUIET_SECONDS)
    assert replay_wait(LOADED, LOADED - 1, now=LOADED + REPLAY_QUIET_SECONDS) == 0.0


def test_each_update_of_the_replay_starts_the_quiet_time_again() -> None:
    assert replay_wait(LOADED, LOADED + 0.15, now=LOADED + 0.2) == pytest.approx(
        REPLAY_QUIET_SECONDS - 0.05
    )
    assert replay_wait(LOADED, LOADED + 0.15, now=LOADED + 0.15 + REPLAY_QUIET_SECONDS) == 0.0


def test_an_agent_that_never_goes_quiet_is_waited_for_no_longer_than_the_bound() -> None:
    talking = LOADED + REPLAY_BOUND_SECONDS - 0.01
    assert replay_wait(LOADED, talking, now=talking) == pytest.approx(0.01)
    assert replay_wait(LOADED, talking, now=LOADED + REPLAY_BOUND_SECONDS) == 0.0
