"""The order xdist's ``load`` hands the unit tier's tests out: the tests of the scopes slowest
per test in the last run first, the rest in their collected order."""

from __future__ import annotations

from tests.runstats import _slowest_first

COLLECTED = [
    "tests/a.py::test_one",
    "tests/a.py::test_two",
    "tests/b.py::test_slow[x]",
    "tests/b.py::test_slow[y]",
    "tests/c.py::Group::test_in_a_class",
    "tests/d.py::test_new",
    "tests/e.py::test_quick",
]


def test_the_scopes_slowest_per_test_go_first_and_each_keeps_its_order() -> None:
    # per test: c.py's class 2 s, a.py 1.5 s, b.py 1 s, e.py 0.1 s (a.py before b.py, though
    # both have two tests; c.py first, though a.py took longer in all)
    known = {"tests/a.py": 3.0, "tests/b.py": 2.0, "tests/c.py::Group": 2.0, "tests/e.py": 0.1}
    ordered = [COLLECTED[index] for index in _slowest_first(COLLECTED, known)]
    assert ordered == [
        "tests/d.py::test_new",  # no figure: a new module, the likeliest to be slow
        "tests/c.py::Group::test_in_a_class",
        "tests/a.py::test_one",
        "tests/a.py::test_two",
        "tests/b.py::test_slow[x]",
        "tests/b.py::test_slow[y]",
        "tests/e.py::test_quick",
    ]


def test_without_figures_the_collected_order_stays() -> None:
    assert _slowest_first(COLLECTED, {}) == list(range(len(COLLECTED)))
