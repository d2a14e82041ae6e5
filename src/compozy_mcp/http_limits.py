"""Deadlines for HTTP requests that never finish arriving (slow or stalled clients).

uvicorn times out an idle kept-alive connection, but not a request whose head (request line
and headers) or body stops arriving half-way: each such connection would be held forever. The
protocol here closes a connection whose request head has not arrived within ``head_timeout``
seconds of the connection (or of the head's first byte, on a kept-alive connection), and one
whose body has not arrived whole within ``body_timeout`` seconds of its head. The application
sees the client disconnect; nothing else changes.

It wraps uvicorn's own HTTP protocol rather than extending it: it passes every call through
and watches the bytes that arrive with an h11 parser of its own, so it depends on nothing but
the ``asyncio.Protocol`` interface and h11's documented events.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import h11

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HttpDeadlines:
    head_timeout: float = 15.0
    body_timeout: float = 60.0


class RequestWatch:
    """Where a connection's client is in sending its requests, from the bytes it sent: an h11
    server connection that reads them (and pretends to answer each request, so that it moves
    on to the next one). ``None`` from :meth:`feed` once it cannot follow any more (a protocol
    upgrade, ``Connection: close``, bytes that are not HTTP): uvicorn deals with those."""

    #: a response that is never sent; it lets the watcher's own connection start its next cycle
    _ANSWER = h11.Response(status_code=204, headers=[])

    def __init__(self) -> None:
        self._conn: h11.Connection | None = h11.Connection(h11.SERVER)
        #: a head has started to arrive (some bytes of it, not all)
        self.head_started = False
        #: a head arrived and its body has not arrived whole
        self.in_body = False

    def feed(self, data: bytes) -> list[str]:
        """Read ``data``; returns what happened, in order: ``"head"`` (a request head arrived
        whole) and ``"body"`` (its body did)."""
        conn = self._conn
        if conn is None:
            return []
        happened: list[str] = []
        try:
            conn.receive_data(data)
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    # bytes of the next head are waiting when h11 holds some unread
                    self.head_started = not self.in_body and bool(conn.trailing_data[0])
                    return happened
                if event is h11.PAUSED:
                    if conn.their_state is h11.DONE and conn.our_state is h11.SEND_RESPONSE:
                        conn.send(self._ANSWER)
                        conn.send(h11.EndOfMessage())
                        conn.start_next_cycle()
                        continue
                    self._conn = None  # an upgrade, or the connection is closing
                    return happened
                if isinstance(event, h11.Request):
                    self.head_started = False
                    self.in_body = conn.their_state is h11.SEND_BODY
                    happened.append("head")
                elif isinstance(event, h11.EndOfMessage):
                    if self.in_body:
                        happened.append("body")
                    self.in_body = False
                elif isinstance(event, h11.ConnectionClosed):
                    self._conn = None
                    return happened
        except h11.ProtocolError:
            self._conn = None  # not HTTP/1.1 we can follow: uvicorn answers it
            return happened


class DeadlineProtocol(asyncio.Protocol):
    """An HTTP protocol (``inner``) with the two deadlines; every call is passed through."""

    def __init__(self, inner: asyncio.Protocol, deadlines: HttpDeadlines) -> None:
        self._inner = inner
        self._deadlines = deadlines
        self._watch = RequestWatch()
        self._transport: asyncio.BaseTransport | None = None
        self._timer: asyncio.TimerHandle | None = None

    # --- the deadlines ---------------------------------------------------------------------

    def _arm(self, part: str, seconds: float) -> None:
        self._cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(seconds, self._stalled, part, seconds)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _stalled(self, part: str, seconds: float) -> None:
        self._timer = None
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        log.info("closed a connection: its request %s did not arrive within %s s", part, seconds)
        transport.close()  # uvicorn hears connection_lost: the application sees a disconnect

    # --- asyncio.Protocol, passed through ----------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        self._inner.connection_made(transport)
        self._arm("head", self._deadlines.head_timeout)

    def data_received(self, data: bytes) -> None:
        for happened in self._watch.feed(data):
            self._cancel()
            if happened == "head" and self._watch.in_body:
                self._arm("body", self._deadlines.body_timeout)
        if self._watch.head_started and self._timer is None:
            # the next head of a kept-alive connection started to arrive
            self._arm("head", self._deadlines.head_timeout)
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


def guarded_protocol(deadlines: HttpDeadlines, inner: type[asyncio.Protocol]) -> type[Any]:
    """A protocol class for uvicorn's ``Config(http=...)``: ``inner`` (uvicorn's HTTP protocol,
    built with whatever uvicorn passes) inside a :class:`DeadlineProtocol`."""

    class GuardedProtocol(DeadlineProtocol):
        def __init__(self, **uvicorn_kwargs: Any) -> None:
            super().__init__(inner(**uvicorn_kwargs), deadlines)

    return GuardedProtocol
