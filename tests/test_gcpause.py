"""The collector paused while a test process collects (tests/gcpause.py) is back on for the
tests: a cycle a test leaves behind is collected."""

from __future__ import annotations

import gc
import weakref


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_the_collector_is_on_and_collects_a_cycle_a_test_made() -> None:
    assert gc.isenabled()
    cycle = _Node()
    gone = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert gone() is None
