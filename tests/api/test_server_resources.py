"""Bounded server resources (issue 11, item 3): stateful MCP sessions are capped and reclaimed,
and requests whose head or body stalls are cut off, so new clients are always served."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp.client import Client
from tests.api.support import Daemon, Home, running_daemon
from tests.proxy.support import INITIALIZE

pytestmark = [pytest.mark.process, pytest.mark.anyio]

MAX_SESSIONS = 8
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _open_sessions(daemon: Daemon) -> int:
    with daemon.client() as api:
        count: int = api.get("/healthz").json()["mcp_sessions"]
        return count


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon with small caps and short deadlines for the module: each test opens its own
    connections, and the daemon serving on after what the one before did is part of it."""
    home = Home.make(tmp_path_factory.mktemp("home")).with_env(
        COMPOZY_MCP_MAX_SESSIONS=str(MAX_SESSIONS),
        COMPOZY_HTTP_HEAD_TIMEOUT_SECONDS="1",
        COMPOZY_HTTP_BODY_TIMEOUT_SECONDS="1",
    )
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


async def test_sessions_past_the_cap_reclaim_the_idle_ones_and_new_clients_are_served(
    daemon: Daemon,
) -> None:
    assert daemon.url is not None
    before = _rss_kib(daemon.process.pid)
    with daemon.client() as api:
        for _ in range(300):  # clients that initialize and never close their session
            opened = api.post("/mcp", content=json.dumps(INITIALIZE), headers=HEADERS)
            assert opened.status_code == 200, opened.text
            assert opened.headers.get("mcp-session-id")
    assert _open_sessions(daemon) <= MAX_SESSIONS
    async with Client(daemon.url + "/mcp", mode="legacy", cache=None) as client:
        listed = await client.list_tools()
        assert listed.tools
    after = _rss_kib(daemon.process.pid)
    print(f"daemon RSS: {before} KiB before, {after} KiB after 300 abandoned sessions")
    assert after - before < 64 * 1024  # bounded by the cap, not by the number of clients


def _connect(url: str) -> socket.socket:
    where = urlsplit(url)
    return socket.create_connection((where.hostname or "127.0.0.1", where.port or 80), timeout=10)


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        while sock.recv(4096):
            pass
    except (ConnectionResetError, TimeoutError):
        return False
    return True


def test_requests_whose_head_or_body_stalls_are_cut_off_and_others_still_served(
    daemon: Daemon,
) -> None:
    assert daemon.url is not None
    host = urlsplit(daemon.url).netloc
    heads = [_connect(daemon.url) for _ in range(50)]
    for sock in heads:
        sock.sendall(f"GET /api/tools HTTP/1.1\r\nHost: {host}\r\n".encode())  # no blank line
    body = _connect(daemon.url)
    body.sendall(
        f"POST /api/sessions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        'Content-Length: 100\r\n\r\n{"agent_'.encode()
    )
    started = time.monotonic()
    closed = [_closed_by_server(sock) for sock in [*heads, body]]
    waited = time.monotonic() - started
    for sock in [*heads, body]:
        sock.close()
    print(f"51 stalled connections closed by the daemon within {waited:.1f} s")
    assert all(closed)
    with daemon.client() as api:  # and the daemon serves on
        assert api.get("/api/tools").status_code == 200


def test_a_slow_but_steady_request_within_the_deadline_is_served(daemon: Daemon) -> None:
    assert daemon.url is not None
    host = urlsplit(daemon.url).netloc
    with _connect(daemon.url) as sock:
        for part in (b"GET /api/tools HTTP/1.1\r\n", f"Host: {host}\r\n\r\n".encode()):
            sock.sendall(part)
            time.sleep(0.2)
        head = sock.recv(64)
    assert head.startswith(b"HTTP/1.1 200")
    with httpx2.Client(base_url=daemon.url, trust_env=False) as api:
        assert api.get("/healthz").json()["status"] == "ok"
