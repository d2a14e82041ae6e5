"""MCP over stdin/stdout, newline-delimited JSON-RPC, that answers every request it is sent.

The SDK's own stdio transport drops a line it cannot parse or validate, so a client that sent
a request with an id waits forever. Here:

- a line that is not JSON is answered with a JSON-RPC parse error (``-32700``, id null);
- JSON that is not a valid JSON-RPC message is answered with ``-32600`` (Invalid Request),
  carrying the request's id when it has one; a message whose id no reply can carry (``null``,
  ``true``, ``1.5``, ``[]``, ``{}``, a lone surrogate such as ``"\\ud800"``) gets it with id null;
- JSON is parsed by :func:`compozy_mcp.jsonutil.loads_request`, so that a value the tools
  cannot take (a lone surrogate, an integer past 64 bits) reaches the input check and gets a
  typed tool error naming its field, instead of failing the parse;
- a response that cannot be encoded is replaced by an internal error (``-32603``) with its id;
- when stdin ends, requests still running are answered before the server stops (bounded by
  :data:`DRAIN_SECONDS`), so ``printf '...' | compozy proxy`` gets its replies.

While serving, fd 1 points at stderr and fd 0 at the null device, so stray output of anything
in this process never corrupts the wire; both are restored on exit. Reading stdin never blocks
a thread, so Ctrl-C stops the proxy at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from compozy_mcp import jsonutil
from compozy_mcp.blocking import watchable

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
#: how long requests still running when stdin ends may take to be answered
DRAIN_SECONDS = 30.0
#: the longest line read (a request over it is answered as not JSON, never buffered whole)
MAX_LINE_BYTES = 8 * 1024 * 1024

Incoming = MemoryObjectSendStream[SessionMessage | Exception]


def _error_line(ident: Any, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
    return jsonutil.dumps(body) + b"\n"


def usable_id(ident: Any) -> bool:
    """An id MCP allows and the reply can carry back: an integer, or a string that is valid
    UTF-8 (``"\\ud800"`` parses but could never be written in a reply)."""
    if isinstance(ident, int):
        return not isinstance(ident, bool)
    if isinstance(ident, str):
        try:
            ident.encode()
        except UnicodeEncodeError:
            return False
        return True
    return False


def _request_id(value: Any) -> str | int | None:
    """The id of a JSON-RPC request, if the value has a usable one."""
    if isinstance(value, dict):
        ident = value.get("id")
        if usable_id(ident):
            return ident
    return None


def _has_unusable_id(value: Any) -> bool:
    """A message that has an id no reply can carry (null, true, 1.5, [], {}, a lone
    surrogate): it is answered as an invalid request with id null, never passed on and never
    left unanswered."""
    if not isinstance(value, dict) or "id" not in value or usable_id(value["id"]):
        return False
    # a client's response (to a question of ours) is never answered, whatever its id
    return "result" not in value and "error" not in value


class _Wire:
    """The client's end: lines in, lines out, on private duplicates of fds 0 and 1."""

    def __init__(self) -> None:
        self.in_fd = os.dup(0)
        self.out_fd = os.dup(1)
        self._saved = (os.dup(0), os.dup(1))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        self._write_lock = anyio.Lock()

    def restore(self) -> None:
        for fd, saved in zip((0, 1), self._saved, strict=True):
            with contextlib.suppress(OSError):
                os.dup2(saved, fd)
            os.close(saved)
        for fd in (self.in_fd, self.out_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    async def lines(self) -> AsyncIterator[bytes]:
        """stdin's lines. A pipe, socket or terminal is read by the event loop (no thread, so
        a stop is immediate); anything the loop cannot poll (a regular file, ``/dev/null`` and
        other devices: epoll refuses them) is read in a worker thread."""
        if not watchable(self.in_fd):
            async with await anyio.open_file(self.in_fd, "rb", closefd=False) as source:
                async for line in source:
                    yield line
            return
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        pipe = os.fdopen(self.in_fd, "rb", buffering=0, closefd=False)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # over the limit: asyncio drops it; answered as not JSON
                    yield b"\x00"
                    continue
                if not line:
                    return
                yield line
        finally:
            transport.close()

    async def write(self, data: bytes) -> None:
        async with self._write_lock:
            await anyio.to_thread.run_sync(_write_all, self.out_fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _Pending:
    """Ids of requests received and not answered yet; :meth:`drained` waits for none."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, ident: str | int) -> None:
        self._ids.add(ident)
        if self._empty.is_set():
            self._empty = anyio.Event()

    def discard(self, ident: Any) -> None:
        self._ids.discard(ident)
        if not self._ids:
            self._empty.set()

    async def drained(self) -> None:
        await self._empty.wait()


async def _read(wire: _Wire, incoming: Incoming, pending: _Pending) -> None:
    async with incoming:
        async for raw in wire.lines():
            line = raw.strip()
            if not line:
                continue
            try:
                value = jsonutil.loads_request(line)
            except ValueError:
                await wire.write(_error_line(None, PARSE_ERROR, "Parse error"))
                continue
            if _has_unusable_id(value):
                await wire.write(_error_line(None, INVALID_REQUEST, "Invalid Request"))
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
            except ValidationError:
                ident = _request_id(value)
                if ident is not None or not (isinstance(value, dict) and "method" in value):
                    await wire.write(_error_line(ident, INVALID_REQUEST, "Invalid Request"))
                continue  # an invalid notification is not answered (JSON-RPC 2.0)
            if isinstance(message, types.JSONRPCRequest):
                pending.add(message.id)
            await incoming.send(SessionMessage(message))
        with anyio.move_on_after(DRAIN_SECONDS):
            await pending.drained()


async def _write(
    wire: _Wire, outgoing: MemoryObjectReceiveStream[SessionMessage], pending: _Pending
) -> None:
    async with outgoing:
        async for session_message in outgoing:
            message = session_message.message
            ident = getattr(message, "id", None)
            try:
                line = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            except (ValueError, UnicodeEncodeError):
                log.exception("a response could not be encoded")
                if ident is None:
                    continue
                line = _error_line(ident, INTERNAL_ERROR, "the response could not be encoded")
            await wire.write(line)
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                pending.discard(ident)


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The read and write streams a low-level ``Server.run`` serves over stdin/stdout."""
    wire = _Wire()
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    pending = _Pending()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read, wire, incoming, pending)
            group.start_soon(_write, wire, outgoing, pending)
            try:
                yield read_stream, write_stream
            finally:
                group.cancel_scope.cancel()
    finally:
        wire.restore()
