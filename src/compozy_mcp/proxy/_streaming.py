"""Streamable HTTP answers that stream only when there is something to stream.

The MCP endpoints (the daemon's ``/mcp``, ``compozy proxy --http``/``--uds``) serve in the
SDK's SSE mode: a request may be answered with a Server-Sent Events stream that carries its
progress notifications, log messages and server-to-client requests (elicitation, sampling,
roots) before the response. For the 2026-07-28 era the SDK already answers with plain JSON
unless the request emits something first; for the 2025-11-25 era it opens a stream for every
request. :class:`JsonUnlessStreamed` makes both eras alike: a POST's event stream is held
back until its first event; when that event is the response itself (nothing was streamed),
the client gets it as ``application/json``; anything else (a notification, a request, a
keep-alive ping on a long call) commits the stream and everything flows as it comes.

Why it matters: JSON responses have no size limit in any client, while SSE events do: the MCP
Python SDK's client refuses an event over 1 MiB (``SSE_EVENT_CAP``). A result can only
arrive in an event after something was streamed, and native results are held to a budget
that keeps their message inside the cap (:data:`MCP_RESULT_CEILING`, applied by the proxy).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the smallest limit on one SSE event among common MCP clients: the Python SDK client's
#: ``DEFAULT_MAX_SSE_EVENT_SIZE`` (1 MiB, counted in UTF-8 bytes of the event's lines); the
#: TypeScript SDK client (1.32) and the MCP Inspector (0.15, on that SDK) set none
SSE_EVENT_CAP = 1024 * 1024
#: what a result message holds besides the record: the JSON-RPC envelope, ``_meta``, a title
MESSAGE_OVERHEAD = 8 * 1024
#: the largest record whose message fits one SSE event: a tool result carries the record twice
#: (``structuredContent``, and its JSON text in the one text block, where escaping can double
#: it), so three times the record plus the envelope stays within :data:`SSE_EVENT_CAP`
MCP_RESULT_CEILING = (SSE_EVENT_CAP - MESSAGE_OVERHEAD) // 3

_DROPPED_HEADERS = {b"content-type", b"content-length", b"cache-control", b"x-accel-buffering"}


def _first_event(buffer: bytes) -> tuple[list[bytes], bytes] | None:
    """The lines of the first whole event in ``buffer`` (comments included) and its raw bytes,
    or ``None`` while it has not arrived whole."""
    normalized = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    end = normalized.find(b"\n\n")
    if end < 0:
        return None
    return normalized[:end].split(b"\n"), normalized[: end + 2]


def _response_body(lines: list[bytes]) -> bytes | None:
    """The JSON of an event that carries a JSON-RPC response; ``None`` for anything else (a
    comment such as a ping, a notification, a request)."""
    data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
    if not data:
        return None
    body = b"\n".join(data)
    try:
        message = orjson.loads(body)  # every answer passes here: the fast parser first
    except orjson.JSONDecodeError:
        try:
            message = json.loads(body)  # what orjson refuses (an integer past 64 bits)
        except ValueError:
            return None
    if not isinstance(message, dict) or "method" in message:
        return None
    if "id" in message and ("result" in message or "error" in message):
        return body
    return None


class JsonUnlessStreamed:
    """ASGI middleware over an MCP Streamable HTTP app (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {"start": None, "buffer": b"", "mode": "deciding"}

        async def watched(message: Message) -> None:
            mode = held["mode"]
            if mode == "stream":
                await send(message)
                return
            if mode == "json":
                return  # the stream after its response: nothing the client waits for
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if not headers.get(b"content-type", b"").startswith(b"text/event-stream"):
                    held["mode"] = "stream"  # not an event stream: nothing to decide
                    await send(message)
                    return
                held["start"] = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            held["buffer"] += message.get("body", b"")
            done = not message.get("more_body", False)
            first = _first_event(held["buffer"])
            if first is None and not done:
                return
            body = _response_body(first[0]) if first is not None else None
            if body is not None:
                held["mode"] = "json"
                await send(_json_start(held["start"], body))
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            held["mode"] = "stream"  # something came first: the client gets the stream
            await send(held["start"])
            await send(
                {"type": "http.response.body", "body": held["buffer"], "more_body": not done}
            )

        await self.app(scope, receive, watched)


def _json_start(start: Message, body: bytes) -> Message:
    headers = [
        (name, value)
        for name, value in start.get("headers") or []
        if name.lower() not in _DROPPED_HEADERS
    ]
    headers += [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    return {"type": "http.response.start", "status": start["status"], "headers": headers}
