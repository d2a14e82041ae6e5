"""The unit tier's run: the order xdist's ``load`` hands its tests out (the scopes slowest per
test in the last run first, the rest in their collected order), and the modules it need not
import (every test in a slow tier); ``make test``'s: the units its ``loadscope`` hands out."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests import runstats
from tests.runstats import SCOPE_SECONDS, _slowest_first, known_seconds, only_slow_tiers

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


def test_a_module_marked_only_with_slow_tiers_is_left_out_of_the_unit_tier() -> None:
    assert only_slow_tiers("import pytest\n\npytestmark = pytest.mark.process\n")
    assert only_slow_tiers("pytestmark = [pytest.mark.anyio, pytest.mark.bench]\n")
    assert only_slow_tiers("pytestmark = pytest.mark.process  # the echo agent runs apart\n")


def test_a_module_that_may_hold_a_unit_test_is_imported() -> None:
    assert not only_slow_tiers("pytestmark = pytest.mark.anyio\n")
    assert not only_slow_tiers("pytestmark = [pytest.mark.anyio, pg.on_both_engines]\n")
    assert not only_slow_tiers("def test_x() -> None: ...\n")
    # a test of its own marked unit, a mark set twice, or a mark that is not a plain name
    assert not only_slow_tiers("pytestmark = pytest.mark.process\n@pytest.mark.unit\n")
    assert not only_slow_tiers("pytestmark = pytest.mark.process\npytestmark = []\n")
    assert not only_slow_tiers("pytestmark = pytest.mark.process if X else pytest.mark.anyio\n")
    assert not only_slow_tiers("pytestmark = pytest.mark.skipif(True, reason='no')\n")


class Cache:
    def __init__(self, figures: dict[str, float] | None) -> None:
        self.figures = figures

    def get(self, key: str, default: Any) -> Any:
        return default if self.figures is None or key != SCOPE_SECONDS else self.figures


def test_a_clean_checkout_orders_by_the_committed_figures_and_a_run_overrides_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = tmp_path / "scope_seconds.json"
    committed.write_text(json.dumps({"tests/a.py": 3.0, "tests/b.py": 9.0, "junk": "x"}))
    monkeypatch.setattr(runstats, "COMMITTED_SECONDS", committed)
    clean: Any = SimpleNamespace(cache=Cache(None))
    assert known_seconds(clean) == {"tests/a.py": 3.0, "tests/b.py": 9.0}
    ran: Any = SimpleNamespace(cache=Cache({"tests/b.py": 1.0, "tests/c.py": 2.0}))
    assert known_seconds(ran) == {"tests/a.py": 3.0, "tests/b.py": 1.0, "tests/c.py": 2.0}
    committed.write_text("not json")
    assert known_seconds(ran) == {"tests/b.py": 1.0, "tests/c.py": 2.0}


def test_the_committed_figures_are_read_as_they_are_written() -> None:
    figures = json.loads(runstats.COMMITTED_SECONDS.read_text(encoding="utf-8"))
    assert figures  # a stale scope is harmless: no test of that name is collected
    assert all(isinstance(seconds, int | float) and seconds >= 0 for seconds in figures.values())
    assert all(runstats._SCOPE.fullmatch(scope) for scope in figures)


def test_a_run_of_some_tests_of_its_modules_records_no_figures() -> None:
    def run(markexpr: str = "", keyword: str = "") -> Any:
        return SimpleNamespace(option=SimpleNamespace(markexpr=markexpr, keyword=keyword))

    assert runstats.records_whole_modules(run())
    assert not runstats.records_whole_modules(run(markexpr="unit"))
    assert not runstats.records_whole_modules(run(keyword="status"))


def test_the_modules_of_a_folder_sharing_a_session_fixture_are_handed_out_as_one_unit() -> None:
    three_workers = SimpleNamespace(getvalue={"tx": ["3*popen"]}.__getitem__)
    scheduler = runstats._longest_first_scheduling(three_workers, None, {})  # type: ignore[arg-type]
    assert scheduler._split_scope("tests/proxy/test_calls.py::test_a[stdio-auto]") == "tests/proxy/"
    assert scheduler._split_scope("tests/proxy/test_relay.py::Group::test_b") == "tests/proxy/"
    assert scheduler._split_scope("tests/api/test_auth.py::test_c") == "tests/api/test_auth.py"
    assert scheduler._split_scope("tests/c.py::Group::test_in_a_class") == "tests/c.py::Group"


def test_a_folders_seconds_are_those_of_its_modules_together() -> None:
    known = {"tests/proxy/test_calls.py": 17.5, "tests/proxy/test_relay.py::Group": 2.5, "x": 1.0}
    assert runstats.unit_seconds("tests/proxy/", known) == 20.0
    assert runstats.unit_seconds("tests/api/test_auth.py", known) == float("inf")
    assert runstats.unit_seconds("tests/api/", known) == float("inf")
    assert runstats.unit_seconds("x", known) == 1.0
