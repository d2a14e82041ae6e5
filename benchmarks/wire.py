"""A client transport with a real byte boundary, to capture what a server puts on the wire.

The SDK's in-process client hands result objects across without serializing them, so there is
nothing to count. This transport runs the server over memory streams and, in both directions,
serializes each JSON-RPC message exactly as the stdio transport does
(``model_dump_json(by_alias=True, exclude_unset=True)``, one line per message), records the
line, and parses it back for the other side. What the client receives is therefore what it
would have read from a stdio pipe, and the recorded lines are those bytes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.server import Server
from mcp.shared.message import SessionMessage

Messages = MemoryObjectReceiveStream[SessionMessage | Exception]
Sink = MemoryObjectSendStream[SessionMessage | Exception]


@dataclass(slots=True)
class WireLog:
    """Every line each side wrote, in order."""

    server_lines: list[bytes] = field(default_factory=list)
    client_lines: list[bytes] = field(default_factory=list)


def encode(message: SessionMessage) -> bytes:
    """One message as the stdio transport writes it (without the newline)."""
    return message.message.model_dump_json(by_alias=True, exclude_unset=True).encode()


async def _relay(source: Messages, sink: Sink, lines: list[bytes]) -> None:
    async with source, sink:
        async for item in source:
            if isinstance(item, Exception):
                await sink.send(item)
                continue
            line = encode(item)
            lines.append(line)
            parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            await sink.send(SessionMessage(parsed))


@asynccontextmanager
async def wire_transport(server: Server[Any], log: WireLog) -> AsyncIterator[TransportStreams]:
    """A ``Transport`` for ``mcp.client.Client`` that serves ``server`` through ``log``."""
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    client_writes, client_out = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    client_in, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_relay, client_out, to_server, log.client_lines)
        tg.start_soon(_relay, from_server, client_in, log.server_lines)
        tg.start_soon(
            server.run, server_reads, server_writes, server.create_initialization_options()
        )
        try:
            yield client_reads, client_writes
        finally:
            tg.cancel_scope.cancel()


def response_result(line: bytes, request_id: int | str) -> bytes:
    """The exact bytes of the ``result`` member of a JSON-RPC response line.

    Sliced from the line, not re-serialized: the SDK writes ``jsonrpc``, ``id``, ``result`` in
    that order, which is checked.
    """
    head = b'{"jsonrpc":"2.0","id":' + _json_id(request_id) + b',"result":'
    if not line.startswith(head) or not line.endswith(b"}"):
        raise ValueError(f"not a result line for request {request_id!r}: {line[:80]!r}")
    return line[len(head) : -1]


def _json_id(request_id: int | str) -> bytes:
    return str(request_id).encode() if isinstance(request_id, int) else f'"{request_id}"'.encode()


def exchanges(log: WireLog, method: str) -> list[tuple[Any, bytes]]:
    """``(request id, response line)`` for every request of ``method``, in order."""
    from compozy_mcp import jsonutil

    ids = []
    for line in log.client_lines:
        message = jsonutil.loads(line)
        if message.get("method") == method and "id" in message:
            ids.append(message["id"])
    by_id: dict[Any, bytes] = {}
    for line in log.server_lines:
        message = jsonutil.loads(line)
        if "id" in message and ("result" in message or "error" in message):
            by_id[message["id"]] = line
    return [(request_id, by_id[request_id]) for request_id in ids]
