"""The request watcher behind the HTTP deadlines: it follows heads and bodies from the bytes a
client sends, across kept-alive requests, without any part of uvicorn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compozy_mcp.http_limits import DeadlineProtocol, HttpDeadlines, RequestWatch

HEAD = b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n"


def test_a_head_then_its_body_are_seen_as_they_arrive() -> None:
    watch = RequestWatch()
    assert watch.feed(HEAD[:10]) == []
    assert watch.head_started
    assert watch.feed(HEAD[10:]) == ["head"]
    assert watch.in_body
    assert not watch.head_started
    assert watch.feed(b"ab") == []
    assert watch.feed(b"cd") == ["body"]
    assert not watch.in_body


def test_kept_alive_requests_are_followed_one_after_another() -> None:
    watch = RequestWatch()
    get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    assert watch.feed(get + HEAD + b"abcd" + get[:5]) == ["head", "body", "head", "body"]
    assert watch.head_started  # the third request's head has begun


def test_bytes_that_are_not_http_end_the_watch_quietly() -> None:
    watch = RequestWatch()
    assert watch.feed(b"\x16\x03\x01 not http\r\n\r\n") == []
    assert watch.feed(HEAD) == []  # uvicorn answers such a client; the watch gave up


class Recorder(asyncio.Protocol):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.calls.append(("made", transport))

    def data_received(self, data: bytes) -> None:
        self.calls.append(("data", data))

    def connection_lost(self, exc: Exception | None) -> None:
        self.calls.append(("lost", exc))


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


@pytest.mark.anyio
async def test_a_stalled_head_closes_the_connection_and_everything_is_passed_through() -> None:
    inner = Recorder()
    protocol = DeadlineProtocol(inner, HttpDeadlines(head_timeout=0.05, body_timeout=10))
    transport = Transport()
    protocol.connection_made(transport)
    protocol.data_received(HEAD[:8])
    for _ in range(100):
        if transport.closed:
            break
        await asyncio.sleep(0.01)
    assert transport.closed
    protocol.connection_lost(None)
    assert [name for name, _ in inner.calls] == ["made", "data", "lost"]


@pytest.mark.anyio
async def test_a_whole_request_disarms_the_deadlines() -> None:
    protocol = DeadlineProtocol(Recorder(), HttpDeadlines(head_timeout=0.05, body_timeout=0.05))
    transport = Transport()
    protocol.connection_made(transport)
    protocol.data_received(HEAD + b"abcd")
    await asyncio.sleep(0.2)
    assert not transport.closed
