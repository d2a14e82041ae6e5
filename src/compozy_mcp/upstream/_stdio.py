"""A stdio MCP server as a child process, stopped promptly: the transport compozy's upstream
client speaks to it over.

The MCP SDK's own stdio client gives a server 2 s to exit after its stdin closes, then 2 s
more after SIGTERM. A proxy that an MCP client started is itself given 2 s to exit once its
own stdin closes (the SDK's client, and others, then kill it): a proxy that waited out a stuck
server's grace would be killed first, and its servers left running with no parent. Here every
server runs in a process group of its own; leaving the transport closes its stdin, waits
:data:`EXIT_GRACE` seconds, then signals the whole group (SIGTERM, then SIGKILL after
:data:`KILL_GRACE`), every wait bounded and shielded from cancellation, so that nothing is
left behind and the whole stop stays well inside a second.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

#: how long a server has to exit on its own once its stdin is closed
EXIT_GRACE = 0.3
#: how long its process group has after SIGTERM, before SIGKILL
KILL_GRACE = 0.3
#: how long messages already accepted have to reach the server before its stdin closes
FLUSH_GRACE = 0.2
_POLL = 0.01

Streams = tuple[
    anyio.abc.ObjectReceiveStream[SessionMessage | Exception],
    anyio.abc.ObjectSendStream[SessionMessage],
]


def _parse(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the client sees it as a message it could not read
        return exc


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the server's whole process group is gone within ``seconds``."""
    with anyio.move_on_after(seconds):
        while process.returncode is None or _group_alive(process.pid):
            await anyio.sleep(_POLL)
        return True
    return False


async def stop_process(process: anyio.abc.Process) -> None:
    """Close stdin, then signal the process group until it is gone (bounded)."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if await _exited(process, EXIT_GRACE):
        return
    _signal_group(process.pid, signal.SIGTERM)
    if await _exited(process, KILL_GRACE):
        return
    _signal_group(process.pid, signal.SIGKILL)
    if not await _exited(process, KILL_GRACE):
        log.warning("MCP server process %d survived SIGKILL; abandoning it", process.pid)


@contextlib.asynccontextmanager
async def stdio_server(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    errlog: TextIO,
) -> AsyncIterator[Streams]:
    """Start ``command`` and speak newline-delimited JSON-RPC over its stdin and stdout; its
    stderr goes to ``errlog``. ``env`` is added to the few variables that are safe to inherit
    (as the SDK's stdio client does). Raises ``OSError`` when it cannot start."""
    process = await anyio.open_process(
        [command, *args],
        stdin=-1,
        stdout=-1,
        stderr=errlog,
        env={**get_default_environment(), **(env or {})},
        cwd=cwd,
        start_new_session=True,  # its own process group: stopped whole, and no Ctrl-C of ours
    )
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)
    flushed = anyio.Event()

    async def read() -> None:
        assert process.stdout is not None
        async with incoming_send:
            buffer = ""
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if line.strip():
                            await incoming_send.send(_parse(line))

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with outgoing_receive:
                async for message in outgoing_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming_send.aclose()  # the server is gone: the client hears it now
        finally:
            flushed.set()

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield incoming, outgoing
            finally:
                with anyio.CancelScope(shield=True):
                    await outgoing.aclose()
                    with anyio.move_on_after(FLUSH_GRACE):
                        await flushed.wait()
                    await stop_process(process)
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:  # a failure before the streams were handed out
                await stop_process(process)
            with anyio.move_on_after(KILL_GRACE):  # reaped; a survivor is not waited for
                await process.aclose()
