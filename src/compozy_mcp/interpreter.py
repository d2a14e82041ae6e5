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
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


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


def _threads_left() -> bool:
    """Whether a non-daemon thread other than this one still runs (a normal exit waits)."""
    current = threading.current_thread()
    return any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate())
