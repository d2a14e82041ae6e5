"""Deadlines for HTTP requests that never finish arriving (slow or stalled clients).

uvicorn times out an idle kept-alive connection, but not a request whose head (request line
and headers) or body stops arriving half-way: each such connection would be held forever. The
protocol here closes a connection whose request head has not arrived within
``head_timeout`` seconds of the connection (or of the previous response), and one whose body
has not arrived whole within ``body_timeout`` seconds of its head. The application sees the
client disconnect; nothing else changes.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HttpDeadlines:
    head_timeout: float = 15.0
    body_timeout: float = 60.0


def guarded_protocol(deadlines: HttpDeadlines) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the two deadlines (a class per setting, as uvicorn wants)."""

    class GuardedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None
        _seen_cycle: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_timers()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_head()  # the next request's head has the same deadline

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and self.cycle is not self._seen_cycle:
                self._seen_cycle = self.cycle  # a request's head arrived
                _cancel(self._head_timer)
                self._head_timer = None
                if self.conn.their_state is h11.SEND_BODY:
                    self._body_timer = self.loop.call_later(
                        deadlines.body_timeout, self._stalled, "body", deadlines.body_timeout
                    )
            if self._body_timer is not None and self.conn.their_state is not h11.SEND_BODY:
                _cancel(self._body_timer)
                self._body_timer = None

        def _arm_head(self) -> None:
            _cancel(self._head_timer)
            self._head_timer = self.loop.call_later(
                deadlines.head_timeout, self._stalled, "head", deadlines.head_timeout
            )

        def _cancel_timers(self) -> None:
            for timer in (self._head_timer, self._body_timer):
                _cancel(timer)
            self._head_timer = self._body_timer = None

        def _stalled(self, part: str, seconds: float) -> None:
            self._cancel_timers()
            if self.transport.is_closing():
                return
            log.info(
                "closed a connection: its request %s did not arrive within %s s", part, seconds
            )
            if self.cycle is not None and not self.cycle.response_complete:
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.close()

    return GuardedH11Protocol


def _cancel(timer: asyncio.TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()
