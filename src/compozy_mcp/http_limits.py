"""Deadlines for HTTP requests that never finish arriving (slow or stalled clients).

uvicorn times out an idle kept-alive connection, but not a request whose head (request line
and headers) or body stops arriving half-way: each such connection would be held forever. The
protocol here closes a connection whose request head has not arrived within ``head_timeout``
seconds of the connection (or of the head's first byte, on a kept-alive connection), and one
whose body has not arrived whole within ``body_timeout`` seconds of its head. The application
sees the client disconnect; nothing else changes.

It wraps uvicorn's own HTTP protocol rather than extending it: it passes every call through
and watches the bytes that arrive (simple requests by itself, any other with an h11 parser of
its own), so it depends on nothing but the ``asyncio.Protocol`` interface and h11's
documented events.
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


class _H11Watch:
    """The general follower: an h11 server connection that reads what the client sends (and
    pretends to answer each request, so that it moves on to the next one). It follows every
    request h11 can read; it gives up (``dead``) on a protocol upgrade, ``Connection: close``
    or bytes that are not HTTP, which uvicorn deals with."""

    #: a response that is never sent; it lets the watcher's own connection start its next cycle
    _ANSWER = h11.Response(status_code=204, headers=[])

    def __init__(self) -> None:
        self._conn: h11.Connection | None = h11.Connection(h11.SERVER)
        self.head_started = False
        self.in_body = False

    @property
    def dead(self) -> bool:
        return self._conn is None

    def feed(self, data: bytes, happened: list[str]) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            conn.receive_data(data)
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    # bytes of the next head are waiting when h11 holds some unread
                    self.head_started = not self.in_body and bool(conn.trailing_data[0])
                    return
                if event is h11.PAUSED:
                    if conn.their_state is h11.DONE and conn.our_state is h11.SEND_RESPONSE:
                        conn.send(self._ANSWER)
                        conn.send(h11.EndOfMessage())
                        conn.start_next_cycle()
                        continue
                    self._conn = None  # an upgrade, or the connection is closing
                    return
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
                    return
        except h11.ProtocolError:
            self._conn = None  # not HTTP/1.1 we can follow: uvicorn answers it


#: where a request head ends
_HEAD_END = b"\r\n\r\n"
#: a head that has not ended within this many bytes is left to h11, which refuses it as
#: uvicorn's own h11 parser does
_LONGEST_SIMPLE_HEAD = 16 * 1024
#: headers that make a request one for h11 to follow
_NOT_SIMPLE = frozenset((b"transfer-encoding", b"upgrade"))


def _simple_body_length(head: bytes) -> int | None:
    """The length of the body that follows ``head`` (without its blank line), when the request
    is a simple one: HTTP/1.1, CRLF line ends, no ``Transfer-Encoding``, no ``Upgrade``, no
    ``Connection`` other than ``keep-alive``, at most one ``Content-Length`` of digits. ``None``
    for any other request, which the general follower reads."""
    lines = head.split(b"\r\n")
    request_line = lines[0]
    if not request_line.endswith(b" HTTP/1.1") or request_line.count(b" ") != 2:
        return None
    length: int | None = None
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or b"\n" in line or b"\r" in line:
            return None
        if name[0] in b" \t" or name[-1] in b" \t":  # a folded line, or space before the colon
            return None
        name = name.lower()
        if name == b"content-length":
            value = value.strip(b" \t")
            if length is not None or not value.isdigit():
                return None
            length = int(value)
        elif name in _NOT_SIMPLE or (
            name == b"connection" and value.strip(b" \t").lower() != b"keep-alive"
        ):
            return None
    return length or 0


class RequestWatch:
    """Where a connection's client is in sending its requests, from the bytes it sent.

    The requests MCP and API clients send (HTTP/1.1 with a ``Content-Length`` or no body) are
    followed here by finding the end of each head and counting its body's bytes: h11 reads
    every byte again inside uvicorn, and a second full h11 cycle per request cost about a tenth
    of the server's CPU under load. From the first request that is not that simple on (a
    chunked body, an upgrade, ``Connection: close``, anything unusual), the connection is
    followed by an h11 connection of the watch's own, which gives up where h11 does (uvicorn
    deals with those). :meth:`feed` returns what happened, in order: ``"head"`` (a request
    head arrived whole) and ``"body"`` (its body did)."""

    def __init__(self) -> None:
        #: bytes of a head that has not arrived whole
        self._pending = bytearray()
        #: bytes of the current body still to arrive
        self._body_left = 0
        #: the general follower, once a request was not simple
        self._general: _H11Watch | None = None
        #: a head has started to arrive (some bytes of it, not all)
        self.head_started = False
        #: a head arrived and its body has not arrived whole
        self.in_body = False

    def feed(self, data: bytes) -> list[str]:
        happened: list[str] = []
        if self._general is not None:
            self._follow_generally(data, happened)
            return happened
        while data:
            if self._body_left:
                if len(data) < self._body_left:
                    self._body_left -= len(data)
                    return happened
                data = data[self._body_left :]
                self._body_left = 0
                self.in_body = False
                happened.append("body")
                continue
            # a head arriving in pieces is searched only where the new bytes could end it: a
            # client sending its head a byte at a time costs no more than one sending it whole
            searched = len(self._pending)
            if searched:
                self._pending += data
                buffered: bytes | bytearray = self._pending
            else:
                buffered = data
            end = buffered.find(_HEAD_END, max(0, searched - 3))
            if end < 0:
                if (
                    len(buffered) > _LONGEST_SIMPLE_HEAD
                    or buffered.find(b"\n\n", max(0, searched - 1)) >= 0
                ):
                    self._hand_over(bytes(buffered), happened)  # too long, or bare LF line ends
                    return happened
                if not searched:
                    self._pending = bytearray(data)
                self.head_started = True
                return happened
            length = _simple_body_length(bytes(buffered[:end]))
            if length is None:
                self._hand_over(bytes(buffered), happened)
                return happened
            self._pending = bytearray()
            self.head_started = False
            happened.append("head")
            data = bytes(buffered[end + len(_HEAD_END) :])
            if length:
                self._body_left = length
                self.in_body = True
            else:
                happened.append("body")
        return happened

    def _hand_over(self, buffered: bytes, happened: list[str]) -> None:
        """Follow the connection with h11 from here on; ``buffered`` starts at a request."""
        self._pending = bytearray()
        self._general = _H11Watch()
        self._follow_generally(buffered, happened)

    def _follow_generally(self, data: bytes, happened: list[str]) -> None:
        general = self._general
        assert general is not None
        general.feed(data, happened)
        self.head_started = general.head_started
        self.in_body = general.in_body


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
