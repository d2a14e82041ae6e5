"""Command hooks, by Claude Code's conventions: the payload as JSON on stdin, a patch as JSON on
stdout (empty stdout: no patch), exit code 2 denies the call with stderr as the reason, any
other non-zero exit is a failure.

Each run is its own process group (``start_new_session``). When the run ends (it exited, timed
out, or the call was cancelled) the whole group is killed, so neither the hook nor anything it
started in the background is left behind; a hook that hangs, or leaves a child holding its
stdout open, costs the call its timeout and no more.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from compozy_mcp import jsonutil
from compozy_mcp.childenv import child_environment
from compozy_mcp.hooks._execution import (
    MAX_OUTPUT_BYTES,
    STDERR_TAIL_BYTES,
    Execution,
    RunContext,
    tail,
)
from compozy_mcp.native.hook_schema import DENY_EXIT_CODE

#: seconds to wait for a killed process to be reaped
REAP_SECONDS = 5.0
SHELL = "/bin/sh"


def argv_of(command: str | Sequence[str]) -> list[str]:
    """A shell string runs under ``/bin/sh -c``; an argv list runs as it is."""
    return [SHELL, "-c", command] if isinstance(command, str) else list(command)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pid, signal.SIGKILL)


async def _feed(stream: ByteSendStream | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # a hook need not read its payload
    finally:
        await stream.aclose()


class _Collected:
    def __init__(self, keep_head: int | None, keep_tail: int | None = None) -> None:
        self.data = bytearray()
        self.overflowed = False
        self._head = keep_head
        self._tail = keep_tail

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if self._head is not None and len(self.data) > self._head:
            del self.data[self._head :]
            self.overflowed = True
        if self._tail is not None and len(self.data) > self._tail:
            del self.data[: len(self.data) - self._tail]


async def _drain(stream: ByteReceiveStream | None, into: _Collected) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            into.add(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass


def _environment(where: RunContext, base: Mapping[str, str] | None) -> dict[str, str]:
    # never the daemon's token: a hook holding it could act as the operator
    env = child_environment(base)
    env["COMPOZY_HOOK_ID"] = where.hook_id
    env["COMPOZY_HOOK_EVENT"] = where.event
    return env


class CommandRunner:
    """Runs ``command`` (argv list or shell string) once per event."""

    def __init__(self, command: str | Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.argv = argv_of(command)
        self._env = env

    async def __call__(
        self, payload: dict[str, Any], timeout: float, where: RunContext
    ) -> Execution:
        cwd = where.cwd if where.cwd and os.path.isdir(where.cwd) else None
        try:
            process = await anyio.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=_environment(where, self._env),
                start_new_session=True,
            )
        except OSError as exc:
            return Execution(failure=f"could not start ({exc.strerror or type(exc).__name__})")
        out = _Collected(keep_head=MAX_OUTPUT_BYTES)
        err = _Collected(keep_head=None, keep_tail=STDERR_TAIL_BYTES)
        timed_out = False
        try:
            with anyio.fail_after(timeout):
                async with anyio.create_task_group() as group:
                    group.start_soon(_feed, process.stdin, jsonutil.dumps(payload))
                    group.start_soon(_drain, process.stdout, out)
                    group.start_soon(_drain, process.stderr, err)
                await process.wait()
        except TimeoutError:
            timed_out = True
        finally:
            # Whatever happened (an exit, the timeout, a cancelled call), nothing of the run
            # stays: the group is killed and the process reaped.
            _kill_group(process.pid)
            with anyio.move_on_after(REAP_SECONDS, shield=True):
                await process.aclose()
        return _execution(
            process.returncode, bytes(out.data), out.overflowed, err, timeout, timed_out
        )


def _execution(
    code: int | None,
    stdout: bytes,
    overflowed: bool,
    err: _Collected,
    timeout: float,
    timed_out: bool,
) -> Execution:
    stderr = tail(bytes(err.data))
    if timed_out:
        return Execution(
            stderr_tail=stderr,
            exit_code=code,
            failure=f"timed out after {timeout:g} s",
            timed_out=True,
        )
    if code is not None and code < 0:
        return Execution(
            stderr_tail=stderr, exit_code=code, failure=f"was killed by signal {-code}"
        )
    if code == DENY_EXIT_CODE:
        return Execution(stderr_tail=stderr, exit_code=code, denied=True)
    if code != 0:
        return Execution(stderr_tail=stderr, exit_code=code, failure=f"exited with code {code}")
    if overflowed:
        return Execution(
            stderr_tail=stderr,
            exit_code=code,
            unreadable=f"printed more than {MAX_OUTPUT_BYTES} bytes",
        )
    return Execution(output=stdout, stderr_tail=stderr, exit_code=code)
