"""Connecting to an MCP server over HTTP computes nothing long on the event loop: the HTTP
transport's TLS context reads the system's CA bundle (20-40 ms of CPU a connection, which the
loop guard caught in ``compozy mcp list --check`` on a loaded machine), so it is made in a
worker thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from compozy_mcp.upstream.config import Scope, parse_server
from compozy_mcp.upstream.probe import probe_all


def test_the_http_transport_of_a_connection_is_made_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made_in: list[str] = []
    make = httpx2.AsyncHTTPTransport

    def transport(*args: Any, **kwargs: Any) -> httpx2.AsyncHTTPTransport:
        made_in.append(threading.current_thread().name)
        return make(*args, **kwargs)

    monkeypatch.setattr(httpx2, "AsyncHTTPTransport", transport)  # as connection.py reads it
    down = parse_server("down", {"url": "http://127.0.0.1:9/mcp"}, Scope.USER)
    found = probe_all([down], {}, home=tmp_path)
    assert found["down"].last_error == 'cannot reach MCP server "down" at http://127.0.0.1:9/mcp'
    assert len(made_in) == 1
    assert made_in[0] != threading.main_thread().name
