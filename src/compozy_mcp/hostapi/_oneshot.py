"""One HTTP/1.1 request to a daemon with the standard library, for a CLI command that sends
one request and prints the answer.

httpx2 and its stack (httpcore2, h11, h2, idna, truststore: some 170 modules) cost a command
about as much to import as the request itself takes; ``http.client`` is a third of that. A
plain ``http://`` daemon or its Unix socket is all this speaks: ``https://`` (certificates,
the system trust store) stays with :func:`compozy_mcp.hostapi.remote.daemon_http_client`.
The blocking request runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import http.client
import socket
from collections.abc import Mapping
from urllib.parse import urlencode, urlsplit

from compozy_mcp.hostapi.target import Target


class RequestTimeout(Exception):
    """The daemon accepted the connection but did not answer in time."""


class _UnixConnection(http.client.HTTPConnection):
    """An HTTP connection over a Unix socket (the ``Host`` header stays the base URL's)."""

    def __init__(self, path: str, host: str, timeout: float) -> None:
        super().__init__(host, timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def speaks(target: Target) -> bool:
    """Whether this module can reach ``target`` (its socket, or plain HTTP)."""
    return target.plain


def _send(
    target: Target,
    method: str,
    path: str,
    query: Mapping[str, str],
    content: bytes | None,
    headers: Mapping[str, str],
    connect_timeout: float,
    read_timeout: float,
) -> tuple[int, bytes]:
    base = urlsplit(target.base_url)
    host = base.hostname or "localhost"
    connection: http.client.HTTPConnection
    if target.socket is not None:
        connection = _UnixConnection(str(target.socket), host, connect_timeout)
    else:
        connection = http.client.HTTPConnection(host, base.port, timeout=connect_timeout)
    url = base.path.rstrip("/") + path + ("?" + urlencode(query) if query else "")
    try:
        connection.connect()
        if connection.sock is not None:
            connection.sock.settimeout(read_timeout)
        connection.request(method, url, body=content, headers=dict(headers))
        response = connection.getresponse()
        return response.status, response.read()
    except TimeoutError:  # connecting or answering, as httpx2 counts a timeout
        raise RequestTimeout from None
    finally:
        connection.close()


async def send(
    target: Target,
    method: str,
    path: str,
    *,
    query: Mapping[str, str],
    content: bytes | None,
    headers: Mapping[str, str],
    connect_timeout: float,
    read_timeout: float,
) -> tuple[int, bytes]:
    """The status and body of one request to ``target``; a connection that fails raises
    :class:`OSError` or :class:`http.client.HTTPException`, an answer that does not come in
    ``read_timeout`` :class:`RequestTimeout`."""
    return await asyncio.to_thread(
        _send, target, method, path, query, content, headers, connect_timeout, read_timeout
    )
