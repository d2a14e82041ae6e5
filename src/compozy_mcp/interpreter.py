"""Starting and ending a compozy process for less: imports without the cyclic collector, and an
exit without the interpreter's teardown.

Importing what a daemon or a proxy serves with (the MCP SDK, pydantic's models, the HTTP stack)
makes about a million objects that live as long as the process; the cyclic collector runs many
times over them while they are made, and finds nothing to free (~0.15 s of CPU per start).
:func:`imports_without_collector` pauses it for such a block of imports and moves what the block
made out of its reach (``gc.freeze``), so that no later collection walks them again either. A
daemon imports the MCP SDK on its first ``/mcp`` request and the ACP SDK on its first agent
bind, in a worker thread, the same way; what is frozen then also holds whatever cyclic garbage
awaited a collection at that moment, kept once (a pass over the fresh imports would cost more).

At exit CPython tears every module down and frees every object one by one: for a process that
imported the MCP SDK, pydantic's models and the ACP schema (a daemon, a proxy, the echo agent)
that is 0.1 to 0.35 s of CPU spent on memory the kernel frees at once anyway, paid at each
daemon stop, each proxy's end, each agent's. :func:`exit_now` does what a normal exit does that
can be seen (the ``atexit`` handlers, flushing stdout and stderr), then ends the process; where
ending it at once would change what is seen (a non-daemon thread still runs, output that cannot
be flushed, an exit status ``os._exit`` cannot carry), it exits the normal way.

Ctrl-C while a command starts (:func:`end_on_interrupt`, from the console script on) ends the
process at once with status 130, printing nothing. Start-up holds nothing to clean up, and a
``KeyboardInterrupt`` raised there lands inside whatever code runs: pydantic-core turns one
raised while it builds an SDK's schema into a ``SchemaError`` (a traceback, exit status 1), and
importlib prints one raised in its module-lock callback as ignored and goes on (the proxy then
served on, Ctrl-C lost). A command that must clean up when interrupted (serving, running an
agent) calls :func:`raise_on_interrupt` first: its event loop then stops it cleanly on Ctrl-C.
A command that waits for another program runs it with :func:`run_program`, which kills the
program with this process on Ctrl-C, even one that comes while the program starts.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import subprocess


@contextmanager
def imports_without_collector() -> Iterator[None]:
    """Run the block (imports, whose objects live on) with the cyclic collector paused, then
    freeze what exists and let the collector run again as it did before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def start_serving() -> None:
    """Start-up is over and serving begins: Ctrl-C raises again, so that the server's event
    loop stops it cleanly (:func:`raise_on_interrupt`), and what start-up made is frozen."""
    raise_on_interrupt()
    freeze_start_up()


def freeze_start_up() -> None:
    """Start-up is over: what it made (the app, the tool catalog, compiled validators) lives
    as long as the process, so it leaves the cyclic collector's reach as the imports did, and
    a full collection while serving walks only what serving made."""
    gc.freeze()


def exit_now(status: int) -> NoReturn:
    """Exit with ``status`` as ``sys.exit`` would, minus freeing the heap object by object."""
    if not 0 <= status <= 255 or _threads_left():
        sys.exit(status)
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(status)  # the normal exit reports (or ignores) what could not be written
    os._exit(status)


def end_on_interrupt() -> None:
    """From now on, Ctrl-C (SIGINT) ends the process at once with status 130 (see above); not
    where SIGINT is ignored (a job a shell started in the background) or handled otherwise."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _end_at_once)


def raise_on_interrupt() -> None:
    """Ctrl-C raises ``KeyboardInterrupt`` again, the handler ``asyncio.run`` and ``anyio.run``
    replace with one that cancels their main task; only where :func:`end_on_interrupt` set
    its own (a handler someone else chose stays)."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is _end_at_once
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def run_program(
    command: list[str], *, timeout: float | None = None, **popen: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(command, timeout=timeout, **popen)``, where Ctrl-C (SIGINT) kills the
    program and raises ``KeyboardInterrupt`` at any moment, even while the program starts.

    ``subprocess.run`` kills its program on ``KeyboardInterrupt`` only once ``Popen`` has
    returned; one raised while ``Popen`` waits to learn that the program started (the program
    may already run, on a busy machine for long) leaves the program running on without us. So
    SIGINT is only noted while the program starts, and acted on once it has.
    """
    import subprocess

    raise_on_interrupt()
    interrupted: list[int] = []
    held = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if held:
        signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
    try:
        program = subprocess.Popen(command, **popen)
    finally:
        if held:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    with program:  # its exit closes the pipes and waits for the program
        try:
            if interrupted:
                raise KeyboardInterrupt
            out, err = program.communicate(timeout=timeout)
        except BaseException:
            program.kill()
            raise
    return subprocess.CompletedProcess(command, program.returncode, out, err)


def _end_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(130)


def _threads_left() -> bool:
    """Whether a non-daemon thread other than this one still runs (a normal exit waits)."""
    current = threading.current_thread()
    return any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate())
