"""Ending a compozy process without the interpreter's teardown.

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
import os
import sys
import threading
from typing import NoReturn


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
