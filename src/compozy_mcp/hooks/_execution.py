"""Running a hook once: what every kind of hook (command, webhook, in-process) gives back, before
its output is read as a patch. Running never raises: a hook that cannot start, crashes, times
out or answers with an error is an :class:`Execution` with a ``failure``."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from compozy_mcp.hooks._events import ToolHook

log = logging.getLogger(__name__)

#: bytes of stderr a run keeps (its end: where the reason for a failure usually is)
STDERR_TAIL_BYTES = 4096
#: the most a hook may print as its patch
MAX_OUTPUT_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Execution:
    #: the patch as printed (bytes: stdout, a response body) or returned (an in-process hook)
    output: bytes | dict[str, Any] | None = None
    stderr_tail: str = ""
    exit_code: int | None = None
    #: why the run failed ("exited with code 1", "timed out after 5 s"), if it did
    failure: str | None = None
    timed_out: bool = False
    #: the hook asked to deny with its exit code (commands only)
    denied: bool = False
    #: why the output cannot be read as a patch, when that is known before reading it
    unreadable: str | None = None


@dataclass(frozen=True, slots=True)
class RunContext:
    """Where a run happens: its working directory and the names it is run under."""

    hook_id: str
    event: str
    cwd: str | None = None


class Runner(Protocol):
    """Runs one kind of hook; never raises except when cancelled."""

    async def __call__(
        self, payload: dict[str, Any], timeout: float, where: RunContext
    ) -> Execution: ...


def tail(data: bytes, limit: int = STDERR_TAIL_BYTES) -> str:
    """The last ``limit`` bytes of ``data`` as text (a split character is replaced)."""
    return data[-limit:].decode("utf-8", errors="replace")


class InProcessRunner:
    """A hook registered by code: an async callable given the payload.

    The payload holds the call's own input and result, not copies (copying them on every call
    would cost more than the hook): an in-process hook reads them and returns a patch, it
    never changes them in place."""

    def __init__(self, hook: ToolHook) -> None:
        self.hook = hook

    async def __call__(
        self, payload: dict[str, Any], timeout: float, where: RunContext
    ) -> Execution:
        try:
            # asyncio's own timeout: a tenth of the cost of a cancel scope, on the hot path of
            # every call an in-process hook sees (the daemon and the CLI run on asyncio)
            async with asyncio.timeout(timeout):
                patch = await self.hook(payload)
        except TimeoutError:
            return Execution(failure=f"timed out after {timeout:g} s", timed_out=True)
        except Exception:
            log.exception("in-process hook %s failed on %s", where.hook_id, where.event)
            return Execution(failure="raised an exception (the server log has it)")
        return Execution(output=patch)
