"""Where a test run's time goes, and the order in which its modules are handed out.

At the end of a run the terminal summary shows, per tier (unit, process, node, bench), how many
tests ran, the wall seconds they took (setup to teardown, summed over the tests; with two
workers the run takes about half of the sum) and the CPU seconds they used: the test process's
own and that of the processes it started and waited for (a daemon stopped at the end of a module
counts in that module's last teardown). ``COMPOZY_TEST_TIMES=FILE`` also writes one JSON line
per test to FILE (``nodeid``, ``tier``, ``wall``, ``cpu``): wall seconds well above CPU seconds
are a test waiting (a sleep, a timeout, a process starting).

Under ``--dist loadscope`` (``make test``) xdist hands out whole modules, and the modules of a
folder sharing a session-scoped fixture as one unit (:data:`SHARED_FIXTURE_FOLDERS`). The run
goes fastest when the longest modules start first and the many short unit modules fill in at
the end, so: each worker collects modules with a slow-tier test before the others
(:func:`slow_modules_first`, the same order in every worker, as xdist requires), and the
controller hands them out longest first by the seconds each took in the last run (kept in
pytest's cache; a module it has no figure for goes first, a new module being the likeliest to
be slow). A clean checkout (CI) has no cache: there the figures come from
``tests/scope_seconds.json``, the cache's figures of a whole run on this 2-core machine,
committed (``python -m tests.runstats`` writes it after a ``make test``).
"""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
from collections import OrderedDict, defaultdict
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: every tier, in the order they are shown; a test without a slow-tier marker is ``unit``
TIERS = ("unit", "postgres", "process", "node", "agents", "browser", "bench", "soak")
SLOW_TIERS = TIERS[1:]
#: pytest cache key of the seconds each module (xdist scope) took, summed over its tests
SCOPE_SECONDS = "compozy/scope-seconds"
#: the figures a clean checkout starts from (module docstring)
COMMITTED_SECONDS = Path(__file__).with_name("scope_seconds.json")
_CPU_MARK = pytest.StashKey[float]()


def cpu_seconds() -> float:
    """User and system CPU of this process and of the children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


#: a module's own marks, when its one ``pytestmark`` line gives them: ``pytest.mark.process`` or
#: ``[pytest.mark.process, pytest.mark.anyio]`` (a trailing comment allowed)
_MODULE_MARKS = re.compile(
    r"^pytestmark = (?:pytest\.mark\.(\w+)|\[((?:pytest\.mark\.\w+, )*pytest\.mark\.\w+)\])"
    r"[ \t]*(?:#[^\n]*)?$",
    re.MULTILINE,
)


def only_slow_tiers(source: str) -> bool:
    """Whether every test of a test module (its source) is in a slow tier, as its one
    ``pytestmark`` line says, so that the unit tier need not import it. A module that names the
    ``unit`` mark anywhere, or sets ``pytestmark`` otherwise, is imported and its tests judged
    one by one."""
    if source.count("pytestmark") != 1 or "mark.unit" in source:
        return False
    found = _MODULE_MARKS.search(source)
    if found is None:
        return False
    marks = (
        [found[1]] if found[1] else [mark[len("pytest.mark.") :] for mark in found[2].split(", ")]
    )
    return any(mark in SLOW_TIERS for mark in marks)


def tier_of(keywords: Any) -> str:
    return next((tier for tier in SLOW_TIERS if tier in keywords), "unit")


def scope_of(nodeid: str) -> str:
    """The unit xdist's ``loadscope`` hands out: a module, or a class in one."""
    return nodeid.rsplit("::", 1)[0]


#: folders whose modules share what a session-scoped fixture starts: ``tests/proxy``'s pool of
#: proxies and daemons, one per set of flags, and its stdio clients kept open. Handed out as one
#: unit, they run on one worker, which starts that pool once; spread over three workers, each
#: started its own (process accounting over one run: 65 proxies, 48.5 s of CPU, against 56 and
#: 39.9 s as one unit).
SHARED_FIXTURE_FOLDERS = ("tests/proxy/",)


def unit_of(nodeid: str) -> str:
    """What this run's ``loadscope`` hands out: a folder of :data:`SHARED_FIXTURE_FOLDERS`
    whole, else the test's scope."""
    for folder in SHARED_FIXTURE_FOLDERS:
        if nodeid.startswith(folder):
            return folder
    return scope_of(nodeid)


def unit_seconds(unit: str, known: dict[str, float]) -> float:
    """The seconds a unit took in the last run: a folder's, those of its scopes together;
    infinite (it goes first) when there is no figure."""
    if unit in known:
        return known[unit]
    if unit.endswith("/"):
        parts = [seconds for scope, seconds in known.items() if scope.startswith(unit)]
        if parts:
            return sum(parts)
    return float("inf")


def slow_modules_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: modules with a process, node or bench test first, each
    module's tests kept together and in their order."""
    modules: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        modules[item.nodeid.split("::", 1)[0]].append(item)

    def is_slow(module: list[pytest.Item]) -> bool:
        return any(item.get_closest_marker(tier) for item in module for tier in SLOW_TIERS)

    ordered = sorted(modules.values(), key=lambda module: not is_slow(module))
    items[:] = [item for module in ordered for item in module]


# --- on the worker (or the only process): each phase's CPU seconds travel with its report ---


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _Marks.last = cpu_seconds()


class _Marks:
    last = 0.0


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: Any
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    now = cpu_seconds()
    report.user_properties.append(("cpu_seconds", now - _Marks.last))
    _Marks.last = now
    return report


# --- on the controller (or the only process): the sums, the summary, the cache -------------


@dataclass
class TierTotals:
    tests: int = 0
    wall: float = 0.0
    cpu: float = 0.0


class RunStats:
    """Registered by ``tests/conftest.py`` in the process that reports (never in a worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.tiers: dict[str, TierTotals] = {tier: TierTotals() for tier in TIERS}
        self.scopes: dict[str, float] = defaultdict(float)
        self.tests: dict[str, TierTotals] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tier = tier_of(report.keywords)
        test = self.tests.get(report.nodeid)
        if test is None:
            test = self.tests[report.nodeid] = TierTotals(tests=1)
            self.tiers[tier].tests += 1
        cpu = sum(
            v for k, v in report.user_properties if k == "cpu_seconds" and isinstance(v, float)
        )
        for totals in (self.tiers[tier], test):
            totals.wall += report.duration
            totals.cpu += cpu
        self.scopes[scope_of(report.nodeid)] += report.duration
        if report.when == "teardown" and (path := os.environ.get("COMPOZY_TEST_TIMES")):
            row = {"nodeid": report.nodeid, "tier": tier, "wall": test.wall, "cpu": test.cpu}
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.scopes or not records_whole_modules(self.config):
            return
        known: dict[str, float] = cache.get(SCOPE_SECONDS, {})
        known.update({scope: round(seconds, 2) for scope, seconds in self.scopes.items()})
        cache.set(SCOPE_SECONDS, known)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        shown = [(tier, t) for tier, t in self.tiers.items() if t.tests]
        if not shown:
            return
        workers = getattr(self.config.option, "numprocesses", None) or 1
        write = terminalreporter.write_line
        terminalreporter.section("tier times")
        write(
            f"{'tier':<8} {'tests':>6} {'wall s':>8} {'cpu s':>8}   "
            f"(summed over tests, setup to teardown; {workers} worker(s))"
        )
        for tier, t in shown:
            write(f"{tier:<8} {t.tests:>6} {t.wall:>8.1f} {t.cpu:>8.1f}")
        all_wall = sum(t.wall for _, t in shown)
        all_cpu = sum(t.cpu for _, t in shown)
        tests = sum(t.tests for _, t in shown)
        write(f"{'all':<8} {tests:>6} {all_wall:>8.1f} {all_cpu:>8.1f}")
        write(f"the run: {time.monotonic() - self.started:.1f} s wall")


def register(config: pytest.Config) -> None:
    """Add the controller's part (the sums) and, under xdist, the module order."""
    config.pluginmanager.register(RunStats(config), "compozy-runstats")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(SchedulerPlugin(), "compozy-scheduler")


# --- the order xdist hands modules out ------------------------------------------------------


class SchedulerPlugin:
    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        dist = config.getvalue("dist")
        if dist not in ("loadscope", "load"):
            return None
        known = known_seconds(config)
        if dist == "load":
            return _slowest_tests_first_scheduling(config, log, known)
        return _longest_first_scheduling(config, log, known)


def records_whole_modules(config: pytest.Config) -> bool:
    """Whether this run's sums are whole modules' times: not when a marker or a keyword chose
    some of their tests (``make unit``: ``-m unit``). Such a run keeps the figures it found:
    ordered by the whole suite's figures, ``make unit`` on two workers took 25 s; by the unit
    tier's own, 32 s (its waits on timeouts then ended up together at the end)."""
    option = config.option
    return not (getattr(option, "markexpr", "") or getattr(option, "keyword", ""))


def known_seconds(config: pytest.Config) -> dict[str, float]:
    """The seconds each scope took: the last run's (pytest's cache) over the committed ones."""
    known: dict[str, float] = {}
    try:
        committed = json.loads(COMMITTED_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        committed = None
    if isinstance(committed, dict):
        known.update(
            (scope, float(seconds))
            for scope, seconds in committed.items()
            if isinstance(seconds, int | float)
        )
    cache = getattr(config, "cache", None)
    if cache is not None:
        known.update(cache.get(SCOPE_SECONDS, {}))
    return known


def _slowest_tests_first_scheduling(
    config: pytest.Config, log: Any, known: dict[str, float]
) -> Any:
    """xdist's ``load`` (``pytest -n N``: test by test), with the tests of the modules whose tests
    took longest on average handed out first: a property test of a second or two collected
    last would otherwise finish alone on one worker while the other waits."""
    from xdist.scheduler import LoadScheduling

    class SlowestFirst(LoadScheduling):
        ordered = False

        def _send_tests(self, node: Any, num: int) -> None:
            if not self.ordered and self.collection is not None:
                self.ordered = True  # before the first test goes out, all of them pending
                rank = _slowest_first(self.collection, known)
                position = {index: place for place, index in enumerate(rank)}
                self.pending.sort(key=position.__getitem__)
            super()._send_tests(node, num)

    return SlowestFirst(config, log)


def _slowest_first(nodeids: list[str], known: dict[str, float]) -> list[int]:
    """Indices of ``nodeids``, by the mean seconds of a test of their scope in the last run,
    slowest first; stable, so a scope without a figure keeps its collected place among those
    without one, and all of them go first (a new module is the likeliest to be slow)."""
    counts: dict[str, int] = defaultdict(int)
    for nodeid in nodeids:
        counts[scope_of(nodeid)] += 1

    def mean(index: int) -> float:
        scope = scope_of(nodeids[index])
        seconds = known.get(scope)
        return float("inf") if seconds is None else seconds / counts[scope]

    return sorted(range(len(nodeids)), key=lambda index: -mean(index))


def _longest_first_scheduling(config: pytest.Config, log: Any, known: dict[str, float]) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        """xdist's ``loadscope``, with its queue ordered longest unit first before the first
        unit is handed out (xdist's own order is by number of tests), and the modules of each
        folder of :data:`SHARED_FIXTURE_FOLDERS` one unit."""

        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:
                self.ordered = True
                queue = self.workqueue
                # stable: a unit without a figure keeps its collected place among those
                # without one, and all of them go first
                order = sorted(queue, key=lambda unit: -unit_seconds(unit, known))
                self.workqueue = OrderedDict((scope, queue[scope]) for scope in order)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


#: a module, or a class in one (a parametrised id holding "::" makes scopes that are neither)
_SCOPE = re.compile(r"[\w/.-]+\.py(?:::\w+)?")


def write_committed(cache_dir: Path = Path(".pytest_cache")) -> int:
    """Write :data:`COMMITTED_SECONDS` from the cache of the last run (``make test``)."""
    entry = cache_dir / "v" / SCOPE_SECONDS
    try:
        known = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"no figures in {entry} ({exc}): run make test first", file=sys.stderr)
        return 1
    existing = {
        scope
        for scope in known
        if _SCOPE.fullmatch(scope) and Path(scope.split("::", 1)[0]).exists()
    }
    figures = {scope: round(float(known[scope]), 1) for scope in sorted(existing)}
    COMMITTED_SECONDS.write_text(json.dumps(figures, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {len(figures)} scopes to {COMMITTED_SECONDS}")
    return 0


if __name__ == "__main__":
    sys.exit(write_committed())
