"""Waiting for a condition instead of sleeping for a guess: poll ``check`` every ``every``
seconds until it returns something true (returned), failing with ``what`` after ``timeout``.

A sleep long enough for a loaded machine is far too long on an idle one, and still too short on
a busier one; a wait on the condition costs what the condition takes. The deadline only bounds
a failure: no test asserts on how long the wait took.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")

#: generous: only a failing test waits this long
TIMEOUT = 30.0
EVERY = 0.02


def wait_until(
    check: Callable[[], T | None], what: str, *, timeout: float = TIMEOUT, every: float = EVERY
) -> T:
    """``check()``'s first true result; ``AssertionError`` naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(every)


async def wait_until_async(
    check: Callable[[], T | Awaitable[T | None] | None],
    what: str,
    *,
    timeout: float = TIMEOUT,
    every: float = EVERY,
) -> T:
    """:func:`wait_until` on the event loop; ``check`` may be sync or async."""
    deadline = anyio.current_time() + timeout
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if anyio.current_time() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        await anyio.sleep(every)
