"""The request watcher behind the HTTP deadlines: it follows heads and bodies from the bytes a
client sends, across kept-alive requests, without any part of uvicorn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.tiers import examples

from compozy_mcp.http_limits import DeadlineProtocol, HttpDeadlines, RequestWatch, _H11Watch

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


GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
CHUNKED = (
    b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n"
)
CLOSING = b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
EMPTY_BODY = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
BARE_LF = b"GET / HTTP/1.1\nHost: x\n\n"
HTTP_1_0 = b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"


def feed_all(watch: RequestWatch, pieces: list[bytes]) -> list[str]:
    return [happened for piece in pieces for happened in watch.feed(piece)]


def test_a_head_sent_a_byte_at_a_time_is_seen_when_its_last_byte_arrives() -> None:
    watch = RequestWatch()
    request = HEAD + b"abcd"
    happened = []
    for index in range(len(request)):
        happened.append(watch.feed(request[index : index + 1]))
        if index < len(HEAD) - 1:
            assert watch.head_started
            assert not watch.in_body
    assert happened[len(HEAD) - 1] == ["head"]
    assert happened[-1] == ["body"]
    assert [event for events in happened for event in events] == ["head", "body"]
    assert not watch.head_started
    assert not watch.in_body


def test_a_request_without_a_body_is_whole_with_its_head() -> None:
    watch = RequestWatch()
    assert watch.feed(EMPTY_BODY) == ["head", "body"]
    assert watch.feed(GET[:7]) == []
    assert watch.head_started


def test_a_chunked_body_hands_the_connection_to_h11_which_follows_what_comes_next() -> None:
    watch = RequestWatch()
    assert watch.feed(GET + CHUNKED[:60]) == ["head", "body", "head"]
    assert watch.in_body  # h11 is reading the chunks
    assert watch.feed(CHUNKED[60:] + HEAD) == ["body", "head"]
    assert watch.feed(b"abcd") == ["body"]


def test_connection_close_ends_the_watch_after_that_request() -> None:
    watch = RequestWatch()
    assert watch.feed(CLOSING) == ["head", "body"]
    assert watch.feed(GET) == []


@pytest.mark.parametrize("request_bytes", [BARE_LF, HTTP_1_0], ids=["bare-lf", "http-1.0"])
def test_requests_that_are_not_simple_are_followed_as_h11_follows_them(
    request_bytes: bytes,
) -> None:
    general: list[str] = []
    _H11Watch().feed(request_bytes, general)
    assert general  # h11 reads these requests
    assert RequestWatch().feed(request_bytes) == general


@pytest.mark.parametrize(
    "head",
    [
        b"POST / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: -4\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length : 4\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
        b"POST / HTTP/1.1\r\nno colon\r\n\r\n",
        b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    ],
    ids=["two-lengths", "negative-length", "space-before-colon", "folded", "no-colon", "upgrade"],
)
def test_unusual_heads_are_left_to_h11(head: bytes) -> None:
    general: list[str] = []
    _H11Watch().feed(head + b"abcd" + GET, general)
    assert RequestWatch().feed(head + b"abcd" + GET) == general


def test_a_head_that_never_ends_is_left_to_h11_which_refuses_it() -> None:
    watch = RequestWatch()
    assert watch.feed(b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 20_000) == []
    assert watch.feed(b"\r\n\r\n" + GET) == []  # the watch gave up with h11


REQUESTS = [HEAD + b"abcd", GET, EMPTY_BODY, CHUNKED, CLOSING, BARE_LF, HTTP_1_0]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(REQUESTS), min_size=1, max_size=6),
    st.lists(st.integers(min_value=1, max_value=40), max_size=30),
)
def test_the_watch_sees_what_h11_sees_however_the_bytes_are_cut(
    requests: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(requests)
    pieces, at = [], 0
    for cut in cuts:
        pieces.append(stream[at : at + cut])
        at += cut
    pieces.append(stream[at:])
    pieces = [piece for piece in pieces if piece]
    general: list[str] = []
    h11_watch = _H11Watch()
    for piece in pieces:
        h11_watch.feed(piece, general)
    assert feed_all(RequestWatch(), pieces) == general


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
