"""Several ``compozy serve`` processes on one store: each daemon has a home of its own (its
socket, pid files, logs, daemon id) and one store: a PostgreSQL database (``COMPOZY_STORE``),
or else the first home's SQLite file (every other home's ``compozy.db`` a symbolic link to it:
SQLite opens the file it points at, and keeps its WAL beside it)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from tests.api.support import Daemon, Home, children, running_daemon

__all__ = ["children", "one_store_daemons", "turns", "wait_for"]

T = TypeVar("T")
DEADLINE = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def one_store_daemons(
    root: Path, count: int, store_url: str | None = None, *, at_once: bool = False, **env: str
) -> Iterator[list[Daemon]]:
    """``count`` daemons on one store (the PostgreSQL database at ``store_url``, else SQLite),
    each ``--advertise``\\ d (one of several behind a balancer); all stopped (SIGTERM, or
    killed past the deadline) when the block ends. One after the other (each serving before
    the next starts), or ``at_once``: all started together (they race to migrate the store)."""
    if store_url is not None:
        env = {**env, "COMPOZY_STORE": store_url}
    homes = [Home.make(root / f"d{index + 1}").with_env(**env) for index in range(count)]
    starts: list[contextlib.AbstractContextManager[Daemon]] = []
    for index, home in enumerate(homes):
        home.path.mkdir(parents=True, exist_ok=True)
        if index and store_url is None:
            (home.path / "compozy.db").symlink_to(homes[0].path / "compozy.db")
        starts.append(advertised_daemon(home))
    with contextlib.ExitStack() as stack:
        if not at_once:
            yield [stack.enter_context(start) for start in starts]
            return
        with ThreadPoolExecutor(len(starts)) as pool:
            entered = [pool.submit(start.__enter__) for start in starts]
        # every daemon that came up is stopped at the end, even when another did not
        for start, future in zip(starts, entered, strict=True):
            if future.exception() is None:
                stack.push(start.__exit__)
        yield [future.result() for future in entered]


#: a daemon whose port another process took between the probe and its bind starts again on
#: another port, this many times in all (any outgoing connection may take an ephemeral port)
PORT_TRIES = 3


@contextlib.contextmanager
def advertised_daemon(home: Home) -> Iterator[Daemon]:
    """``compozy serve`` on a free TCP port only, ``--advertise``\\ d at it."""
    for attempt in range(1, PORT_TRIES + 1):
        port = free_port()
        address = f"http://127.0.0.1:{port}"
        args = ("--port", str(port), "--no-uds", "--advertise", address)
        with contextlib.ExitStack() as stack:
            try:
                daemon = stack.enter_context(running_daemon(home, *args, listeners=1))
            except AssertionError as exc:
                if attempt < PORT_TRIES and "Address already in use" in str(exc):
                    continue
                raise
            yield daemon
            return


def wait_for(probe: Callable[[], T | None], what: str, deadline: float = DEADLINE) -> T:
    ends = time.monotonic() + deadline
    while True:
        found = probe()
        if found is not None and found is not False:
            return found
        if time.monotonic() > ends:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def turns(daemon: Daemon, session_id: str) -> list[dict[str, Any]]:
    with daemon.client() as http:
        body = http.get(f"/api/sessions/{session_id}/history").json()
    found: list[dict[str, Any]] = body["turns"]
    return found
