"""Shared fixtures (an app on an in-memory store with a clock that only moves when told) and
the test tiers.

Tiers: a test marked ``process`` starts programs, ``node`` drives JavaScript MCP clients,
``bench`` runs a benchmark; every other test is ``unit`` (``make unit``) and may not start a
process at all: one that tries fails, so the tier stays fast and honest.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests import gcpause, leftovers, loopguard, pg, runstats, tiers

from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings

if TYPE_CHECKING:
    # imported where a fixture first needs them: xdist's controller loads this module too, and
    # runs no test (the product's assembly and the in-process agents' ACP schema: ~0.7 s of
    # CPU before any worker starts)
    from tests.api.support import Daemon, Home
    from tests.runtime.inprocess import InProcessLauncher

    from compozy_mcp.assembly import App
    from compozy_mcp.dispatch import ToolResult
    from compozy_mcp.store import Store

START = datetime(2026, 11, 10, 14, 2, 11, tzinfo=UTC)
SLOW_TIERS = runstats.SLOW_TIERS
_STARTED = pytest.StashKey[float]()
#: scratch files (``tmp_path``, the stores and homes tests make) go to this tmpfs when it is
#: there: on this machine's disk an unlink costs ~3 ms and an SQLite commit an fsync.
#: ``COMPOZY_TEST_SCRATCH=disk`` (or ``--basetemp``) keeps them on the disk.
SCRATCH_TMPFS = "/dev/shm"


def _scratch_in_memory(config: pytest.Config) -> None:
    """Point ``tempfile`` (and so pytest's ``tmp_path``, and the processes tests start) at
    the tmpfs. Decided once, in the main process: xdist hands its workers its base temp."""
    if config.getoption("basetemp") or hasattr(config, "workerinput"):
        return
    if os.environ.get("COMPOZY_TEST_SCRATCH") == "disk":
        return
    if not (os.path.isdir(SCRATCH_TMPFS) and os.access(SCRATCH_TMPFS, os.W_OK | os.X_OK)):
        return
    os.environ["TMPDIR"] = SCRATCH_TMPFS
    tempfile.tempdir = SCRATCH_TMPFS


def _interrupts_as_on_a_terminal() -> None:
    """Ctrl-C tests send SIGINT to the programs they start, which inherit an ignored SIGINT (and
    rightly keep it: a job a shell put in the background is not interrupted). A run started
    that way, as a non-interactive shell starts a background job, gets the default back."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    _interrupts_as_on_a_terminal()
    if config.getoption("markexpr", "") == "unit":
        tiers.scale = 0.1
    config.stash[_STARTED] = time.time()
    _scratch_in_memory(config)
    config.pluginmanager.register(runstats, "compozy-phase-cpu")
    config.pluginmanager.register(pg, "compozy-postgres")
    if not hasattr(config, "workerinput"):
        runstats.register(config)
        if getattr(config.option, "dist", "no") != "no":
            gcpause.resume()  # xdist's controller: its workers collect, it never does


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No agent process outlives the test run (checked once, by the run's main process)."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the main process checks after every worker is done
    left = leftovers.wait_for_none(session.config.stash[_STARTED])
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("agent processes left running after the tests:", red=True)
            for line in left:
                reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``make unit`` does not import a test module whose tests are all in slow tiers (the
    browser's, the benchmarks' and PostgreSQL's modules import Playwright, the benchmark
    scripts, psycopg: ~0.3 s of CPU in each worker, for tests it would deselect)."""
    if config.getoption("markexpr", "") != "unit" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return True if runstats.only_slow_tiers(collection_path.read_text()) else None


def pytest_collection_finish(session: pytest.Session) -> None:
    gcpause.resume()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the soak runs only when asked for by name (``make soak``: ``-m soak``)
    if "soak" not in config.getoption("markexpr", ""):
        kept = [item for item in items if item.get_closest_marker("soak") is None]
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[i for i in items if i not in kept])
            items[:] = kept
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in SLOW_TIERS):
            item.add_marker(pytest.mark.unit)
    runstats.slow_modules_first(items)


class _NoProcesses(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(
            "a unit test started a process; mark it (or its module) pytest.mark.process"
        )


async def _no_async_process(*args: Any, **kwargs: Any) -> Any:
    _NoProcesses()


@contextmanager
def _no_processes_for(item: pytest.Item) -> Iterator[None]:
    """While a unit test sets up (fixtures of any scope included) and runs, no process starts."""
    if item.get_closest_marker("unit") is None:
        yield
        return
    saved = subprocess.Popen
    saved_exec = asyncio.create_subprocess_exec
    subprocess.Popen = _NoProcesses  # type: ignore[misc]
    asyncio.create_subprocess_exec = _no_async_process
    try:
        yield
    finally:
        subprocess.Popen = saved  # type: ignore[misc]
        asyncio.create_subprocess_exec = saved_exec


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _no_processes_for(item):
        return (yield)


#: whether this worker has paid the first-use costs the loop guard must not see
_WARM = [False]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("unit") is None:
        return (yield)
    if not _WARM[0]:
        loopguard.warm_up()
        gcpause.freeze()  # what the warm-up imported lives to the end, like collection's
        _WARM[0] = True
    with _no_processes_for(item), loopguard.guarded() as offences:
        outcome = yield
    if offences and item.get_closest_marker("loop_blocking") is None:
        pytest.fail(loopguard.verdict(offences), pytrace=False)
    return outcome


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """A data directory a module's tests share, with :func:`shared_daemon`. A module that
    needs other settings (``COMPOZY_PERMISSION_MODE``, a token) overrides this fixture."""
    from tests.api.support import Home

    return Home.make(tmp_path_factory.mktemp("shared"))


@pytest.fixture(scope="module")
def shared_daemon(shared_home: Home) -> Iterator[Daemon]:
    """``compozy serve`` on ``shared_home``, on loopback TCP and a Unix socket, started once for
    all of a module's tests (a daemon costs ~1.5 s of CPU to start and stop): for a test that
    needs a daemon but not a fresh one. Such a test makes its own sessions and asserts on
    them only, never on what the whole store holds; a test that stops, restarts or
    reconfigures its daemon starts its own (:func:`tests.api.support.running_daemon`)."""
    from tests.api.support import running_daemon, short_dir

    with (
        short_dir() as where,
        running_daemon(shared_home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
    ):
        yield daemon


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port held by a bound socket that does not listen, as an outgoing connection
    holds its own: a daemon told to listen there fails with "Address already in use"."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def settings(tmp_path: Path, workspace: Path, request: pytest.FixtureRequest) -> Settings:
    # Sessions run in permission mode "bypass" here: the tests of every other feature make
    # managed-session calls that approvals would hold for the operator. The approval tests
    # (tests/approvals) set the mode they test on their sessions.
    made = Settings(
        home=tmp_path / "home", default_workspace_path=workspace, permission_mode="bypass"
    )
    marker = request.node.get_closest_marker("settings")
    return dataclasses.replace(made, **marker.kwargs) if marker is not None else made


@pytest.fixture
def launcher() -> InProcessLauncher:
    from tests.runtime.inprocess import InProcessLauncher

    return InProcessLauncher()


@pytest.fixture
def app_store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """The store of :func:`app`: SQLite in memory (PostgreSQL with ``COMPOZY_TEST_STORE``), or
    either engine for a test marked :data:`tests.pg.on_both_engines`."""
    with pg.stores_on(getattr(request, "param", pg.default_engine()), request) as (store,):
        yield store


@pytest.fixture
def app(
    settings: Settings, clock: FixedClock, launcher: InProcessLauncher, app_store: Store
) -> Iterator[App]:
    """An app whose agents run in this process (:mod:`tests.runtime.inprocess`)."""
    from compozy_mcp.assembly import open_app

    with open_app(settings, store=app_store, clock=clock, launcher=launcher) as opened:
        yield opened


class Caller:
    """Calls tools through the dispatcher, the way every surface does."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(
        self, tool_id: str, tool_input: Any = None, *, scope: CallScope = OPERATOR
    ) -> ToolResult:
        return await self.app.dispatcher.call(tool_id, tool_input or {}, scope=scope)

    async def structured(self, tool_id: str, tool_input: Any = None, **kw: Any) -> dict[str, Any]:
        return (await self(tool_id, tool_input, **kw)).structured

    async def session(self, tool_id: str, tool_input: Any = None, **kw: Any) -> dict[str, Any]:
        session: dict[str, Any] = (await self.structured(tool_id, tool_input, **kw))["session"]
        return session

    async def create(self, **fields: Any) -> dict[str, Any]:
        fields.setdefault("agent_name", "general")
        return await self.session("compozy__session_create", fields)

    async def full(self, session_id: str) -> dict[str, Any]:
        return await self.session(
            "compozy__session_status", {"session_id": session_id, "result_view": "full"}
        )


@pytest.fixture
async def call(app: App) -> AsyncIterator[Caller]:
    yield Caller(app)
    await app.shutdown()  # agents started by the test end with it, on its event loop
