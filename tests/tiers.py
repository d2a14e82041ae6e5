"""How much a test does depends on the tier it runs in: ``make unit`` (``-m unit``) is what a
developer runs while working, so property tests draw a tenth of their examples there; ``make
test`` draws them all."""

from __future__ import annotations

#: set by ``pytest_configure`` (tests/conftest.py) before any test module is imported
scale = 1.0


def examples(full: int) -> int:
    """The number of examples a property test draws in this run (at least 10)."""
    return max(10, int(full * scale))
