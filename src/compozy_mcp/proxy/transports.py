"""Serving a proxy server: stdio, Streamable HTTP on TCP, Streamable HTTP on a Unix socket."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from compozy_mcp.config import Settings
from compozy_mcp.hostapi.wire import MCP_PATH
from compozy_mcp.net import is_loopback
from compozy_mcp.proxy.http_sessions import mcp_http_app

log = logging.getLogger(__name__)

#: requests larger than this are refused by the transport before they reach a tool
MAX_REQUEST_BYTES = 4 * 1024 * 1024


async def serve_stdio(
    server: Server[Any], around: Callable[[], AbstractAsyncContextManager[None]] | None = None
) -> None:
    """Serve until stdin ends (and requests in flight are answered: :mod:`.stdio`), holding
    ``around`` open (upstream servers, a daemon connection). A client that goes away while
    calls are in flight (its end of stdout closed) ends the proxy cleanly too: nobody is left
    to answer. SIGTERM is heard from the start, ``around``'s own start-up included."""
    from compozy_mcp.proxy._stdio import stdio_streams

    try:
        async with anyio.create_task_group() as group:
            if threading.current_thread() is threading.main_thread():
                group.start_soon(_stop_on_sigterm, group.cancel_scope)
            try:
                async with (
                    around() if around is not None else contextlib.nullcontext(),
                    stdio_streams() as (read_stream, write_stream),
                ):
                    options = server.create_initialization_options()
                    await server.run(read_stream, write_stream, options)
            finally:
                group.cancel_scope.cancel()
    except* (BrokenPipeError, ConnectionResetError):
        log.debug("the stdio client went away mid-call")


async def _stop_on_sigterm(scope: anyio.CancelScope) -> None:
    """SIGTERM stops the server the way the end of stdin does: the serving code's clean-up
    (upstream servers, hooks draining) runs, and the process exits 0. (Python's default is to
    die at once, leaving upstream servers' processes behind.)"""
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            log.info("SIGTERM: stopping")
            scope.cancel()
            return


def uds_security() -> TransportSecuritySettings:
    """Over a Unix socket the Host header is a bare ``localhost`` (no port)."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*"],
        allowed_origins=["http://localhost", "http://localhost:*", "http://127.0.0.1:*"],
    )


class QuietDisconnects:
    """ASGI middleware: a client that disconnects before its request body has arrived leaves
    nobody to answer, so the request just ends. (The SDK lets Starlette's ``ClientDisconnect``
    escape, and uvicorn logs each one as an application error with a traceback.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            log.debug("an HTTP client disconnected before its request was read")


def loopback_security() -> TransportSecuritySettings:
    """On a loopback TCP address: DNS-rebinding protection, as the SDK arms it."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def http_app(
    server: Server[Any],
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    uds: bool = False,
    around: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    answers_at_once: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Starlette:
    """The Streamable HTTP app at ``/mcp`` (an event stream for a request that streams, JSON
    for any other: :mod:`.streaming`), with the session limits of ``settings``. ``around`` is
    held open for as long as the app serves (the relay's daemon connection).
    ``answers_at_once`` (:meth:`ProxyServer.answers_at_once`) picks the requests served
    without an event stream (:mod:`.http_sessions`)."""
    security = uds_security() if uds else (loopback_security() if is_loopback(host) else None)
    app, _ = mcp_http_app(
        server,
        path=MCP_PATH,
        security=security,
        max_sessions=settings.mcp_max_sessions,
        idle_seconds=settings.mcp_session_idle_seconds,
        max_request_bytes=MAX_REQUEST_BYTES,
        answers_at_once=answers_at_once,
    )
    app.add_middleware(QuietDisconnects)
    if around is not None:
        inner = app.router.lifespan_context
        hold = around

        @contextlib.asynccontextmanager
        async def lifespan(started: Starlette) -> AsyncIterator[None]:
            async with hold(), inner(started):
                yield

        app.router.lifespan_context = lifespan
    return app
