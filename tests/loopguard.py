"""The unit tier's guard against work that blocks the event loop.

Each callback the asyncio loop runs (a task's step included) is timed in the thread's CPU time
(what the callback itself computed, whatever else the machine is doing: not a wall-clock
measure, so a loaded machine does not fail a test); a unit test fails when any callback took
more than :data:`LIMIT_S` (issue 24, item 6). The garbage collector's passes are left out of
that time: a full pass runs inside whichever callback happens to allocate when it is due, and
costs that one what every test before it left alive. Work that belongs off the loop goes to a worker
thread (:mod:`compozy_mcp.blocking`). Watched are the tasks and callbacks of the product's
code and of the MCP SDK's server (:data:`WATCHED`); the test's own task and the SDK's client
are not. A test whose product tasks compute past the bound on purpose says so with
``loop_blocking``. A wait that
blocks without computing (a ``time.sleep``, a lock) is not seen: it costs no CPU time.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

LIMIT_S = 0.05


@dataclass
class Offence:
    callback: str
    seconds: float


@dataclass
class _Watch:
    offences: list[Offence] = field(default_factory=list)


#: the watch of the test running now (a test runs alone in its worker)
_state: dict[str, _Watch | None] = {"watch": None}
_original_run = asyncio.Handle._run
#: by thread: CPU time the garbage collector spent in it, and when its pass under way began
_collected: dict[int, float] = {}
_began: dict[int, float] = {}


def _on_collection(phase: str, info: dict[str, int]) -> None:
    thread = threading.get_ident()
    if phase == "start":
        _began[thread] = time.thread_time()
    elif thread in _began:
        spent = time.thread_time() - _began.pop(thread)
        _collected[thread] = _collected.get(thread, 0.0) + spent


gc.callbacks.append(_on_collection)


#: where the code a watched task runs is defined: the product's own, and the MCP SDK's server
#: (which runs the product's handlers and serializes their results in its request tasks). The
#: test's own task (what a test body computes) and the SDK's client (which the in-memory tests
#: run in the same loop) are the test's business.
WATCHED = ("/compozy_mcp/", "/mcp/server/")
#: the top of a one-shot CLI command run in-process: its loop serves that one command and
#: nothing else, so the command's own steps block no one
ONE_SHOT = ("Context.call.<locals>.run",)


def _code(handle: asyncio.Handle) -> Any:
    """The code object of the coroutine a task step runs (through anyio's task wrapper), or of
    the function a plain callback calls."""
    callback: Any = handle._callback  # type: ignore[attr-defined]
    task = getattr(callback, "__self__", None)
    if not isinstance(task, asyncio.Task):
        return getattr(callback, "__code__", None)
    coro: Any = task.get_coro()
    code = getattr(coro, "cr_code", None)
    if code is not None and code.co_qualname == "TaskHandle._run_coro" and coro.cr_frame:
        inner = getattr(coro.cr_frame.f_locals.get("self"), "_coro", None)
        code = getattr(inner, "cr_code", code)
    return code


def _watched(code: Any) -> bool:
    if code is None or code.co_qualname in ONE_SHOT:
        return False
    return any(part in code.co_filename for part in WATCHED)


def _describe(handle: asyncio.Handle) -> str:
    code = _code(handle)
    if code is not None:
        return f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno})"
    return repr(handle._callback)  # type: ignore[attr-defined]


def _timed_run(handle: asyncio.Handle) -> None:
    watch = _state["watch"]
    if watch is None:
        _original_run(handle)
        return
    thread = threading.get_ident()
    started, collecting = time.thread_time(), _collected.get(thread, 0.0)
    try:
        _original_run(handle)
    finally:
        collected = _collected.get(thread, 0.0) - collecting
        spent = time.thread_time() - started - collected
        if spent > LIMIT_S and _watched(_code(handle)):
            watch.offences.append(Offence(_describe(handle), spent))


@contextmanager
def guarded() -> Iterator[list[Offence]]:
    """Record the loop's callbacks that compute for longer than :data:`LIMIT_S` while the
    block runs."""
    watch, previous = _Watch(), _state["watch"]
    _state["watch"] = watch
    asyncio.Handle._run = _timed_run  # type: ignore[method-assign,assignment]
    try:
        yield watch.offences
    finally:
        _state["watch"] = previous
        if previous is None:  # an inner guard keeps what it saw: its caller judges it
            asyncio.Handle._run = _original_run  # type: ignore[method-assign]


def verdict(offences: list[Offence]) -> str:
    """Why a test failed: each callback that blocked the loop, with the CPU time it took."""
    lines = [
        f"{len(offences)} callback(s) of the event loop computed past {LIMIT_S * 1000:.0f} ms:"
    ]
    lines += [
        f"  {offence.seconds * 1000:.0f} ms CPU in {offence.callback}" for offence in offences
    ]
    lines.append(
        "move the work to a worker thread (compozy_mcp.blocking), or, when the test itself "
        'does it on purpose, mark it @pytest.mark.loop_blocking("why")'
    )
    return "\n".join(lines)


def warm_up() -> None:
    """Pay once, before any test, what the first use of a module costs (importing every module
    of the product and the MCP SDK's server and client, building the tool registry and its
    validators), so that the guard sees work, not which test happened to come first."""
    import importlib
    import pkgutil

    import compozy_mcp
    from compozy_mcp.native import build_registry

    for found in pkgutil.walk_packages(compozy_mcp.__path__, "compozy_mcp."):
        if not found.name.endswith("__main__"):  # a program: importing it runs it
            importlib.import_module(found.name)
    for name in ("mcp.client.session", "mcp.server.lowlevel", "mcp.shared.memory"):
        try:
            importlib.import_module(name)
        except ImportError:  # a module the SDK moved: its first use is then seen, not hidden
            continue
    build_registry()  # every tool's input check is compiled as it registers
