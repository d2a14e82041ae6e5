"""The daemon: one ASGI app with the HTTP API at ``/api``, the hosted MCP endpoint at ``/mcp`` and
the operator's board at ``/`` (:mod:`compozy_mcp.board`),
served on any number of bound sockets (TCP and a Unix socket) by :func:`compozy_mcp.net.serve`.

The MCP endpoint serves every caller: a request that names a managed session in
``X-Compozy-Session`` (as ``compozy proxy --session`` does against a daemon) lists and calls
what that session's policy allows, one that names none gets the full-policy catalog. Its
stateful sessions are bounded (``COMPOZY_MCP_MAX_SESSIONS``, idle ones closed after
``COMPOZY_MCP_SESSION_IDLE_SECONDS``: :mod:`compozy_mcp.proxy.http_sessions`).

While it serves, upkeep (:mod:`compozy_mcp.upkeep`) runs every ``COMPOZY_UPKEEP_SECONDS``:
expired sessions are stopped, expired artifacts deleted, the write-ahead log folded back.

Host/Origin checks and the token are :class:`~compozy_mcp.api.auth.Guard`'s, for both
endpoints, so the SDK's own DNS-rebinding check (which cannot serve TCP and a socket with one
allow-list) is off. ``GET /healthz`` answers whether the daemon is alive, without a token.

Upstream MCP servers (``$COMPOZY_HOME/mcp.yaml``, the workspace's ``.compozy/mcp.yaml``) are
connected once, for every session: each session sees those its policy allows.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compozy_mcp import __version__, jsonutil
from compozy_mcp.api import openapi
from compozy_mcp.api.auth import Access, Guard
from compozy_mcp.api.responses import error_response
from compozy_mcp.api.routes import EXCEPTION_HANDLERS, api_app
from compozy_mcp.blocking import Offload
from compozy_mcp.board import OPEN_PATHS as BOARD_OPEN_PATHS
from compozy_mcp.board import board_routes
from compozy_mcp.cluster import ClusterNode, DaemonIdentity, daemon_identity
from compozy_mcp.cluster.wakeup import wakeup_for
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.wire import API_PREFIX, MCP_PATH
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.proxy.on_demand import McpOnDemand

if TYPE_CHECKING:
    from compozy_mcp.assembly import App
    from compozy_mcp.proxy.on_demand import Built
    from compozy_mcp.upstream.supervisor import Upstreams

log = logging.getLogger(__name__)

HEALTHZ = "/healthz"
#: readiness: the store answers a read (the Guard's token applies, like the rest of /api)
HEALTH = API_PREFIX + "/health"
access_log = logging.getLogger("compozy_mcp.access")


async def store_health(app: App) -> dict[str, Any]:
    """``{"status": "ok", "store": {"reachable": true, "schema_version": N}}``; the status
    ``degraded`` when the store reads but its last write failed (busy), or ``unavailable``
    with the reason the store could not be read."""

    def probe() -> int | None:
        with app.store.read() as reader:
            reader.workspaces()
        version = getattr(app.store, "schema_version", None)
        return int(version()) if callable(version) else None

    try:
        schema_version = await anyio.to_thread.run_sync(probe)
    except (CompozyError, sqlite3.Error) as error:
        reason = error.reason if isinstance(error, CompozyError) else "store_unavailable"
        return {"status": "unavailable", "store": {"reachable": False, "reason": str(reason)}}
    store: dict[str, Any] = {"reachable": True}
    if schema_version is not None:
        store["schema_version"] = schema_version
    failure = getattr(app.store, "write_failure", None)
    if failure is not None:  # readable, but the last write failed: say so, with why
        store.update(writable=False, reason="store_busy", message=failure)
        return {"status": "degraded", "store": store}
    return {"status": "ok", "store": store}


class RequestLog:
    """ASGI middleware: one log line per HTTP request at info level (``--log-level info``),
    once its response has started: method, path, status, duration and the peer (``unix`` on
    the socket). The query string is left out: it may hold a cursor or a search."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not access_log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            client = scope.get("client")
            peer = f"{client[0]}:{client[1]}" if client else "unix"
            duration_ms = round((time.perf_counter() - started) * 1000, 1)
            access_log.info(
                "%s %s %s %.1fms %s",
                scope["method"],
                scope["path"],
                status or "-",
                duration_ms,
                peer,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status or None,
                    "duration_ms": duration_ms,
                    "peer": peer,
                },
            )


async def _upkeep_every(app: App, seconds: float) -> None:
    """Run upkeep every ``seconds`` until cancelled; a failed round is logged, not fatal."""
    while True:
        await anyio.sleep(seconds)
        try:
            report = await anyio.to_thread.run_sync(app.upkeep.run)
        except CompozyError as error:  # a busy store: the next round tries again
            log.warning("upkeep skipped: %s", error.message)
            continue
        if report.sessions_stopped or report.artifacts_deleted:
            log.info("upkeep: %s", report.payload())
        await app.runtime.reconcile()  # sessions the sweep stopped lose their agents
        try:
            await app.services.heartbeats.wake_due()
        except CompozyError as error:
            log.warning("heartbeats skipped: %s", error.message)


def daemon_app(
    app: App,
    access: Access,
    *,
    address: str | None = None,
    upstreams: Upstreams | None = None,
    discovery: Discovery = Discovery.FULL,
    identity: DaemonIdentity | None = None,
    balanced: bool = False,
) -> Starlette:
    """The daemon's app over ``app``; ``address`` (``http://HOST:PORT``) is where its OpenAPI
    document says it is served; ``upstreams`` are connected for as long as it serves (its
    lifespan) and their tools served at ``/mcp`` to the sessions whose policy allows them.
    ``identity``: the daemon's among the daemons of its store (default: the one kept in its
    home, at ``address``). ``balanced``: one of several daemons behind a balancer, so that an
    MCP request naming a session another daemon opened is served (statelessly) here."""
    settings = app.settings
    identity = identity or daemon_identity(settings.home, {}, address)
    node = ClusterNode(
        app.sessions,
        app.runtime,
        app.loops,
        identity,
        Offload(),
        settings.lease_seconds,
        wakeup=wakeup_for(app.store),
    )

    def build_mcp() -> Built:
        from mcp.server.transport_security import TransportSecuritySettings

        from compozy_mcp.proxy.http_sessions import mcp_http_app
        from compozy_mcp.proxy.server import ProxyServer
        from compozy_mcp.proxy.transports import MAX_REQUEST_BYTES

        proxy = ProxyServer(app, scope_per_request=True, upstreams=upstreams, discovery=discovery)
        return mcp_http_app(
            proxy.server,
            path=MCP_PATH,
            security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_sessions=settings.mcp_max_sessions,
            idle_seconds=settings.mcp_session_idle_seconds,
            max_request_bytes=MAX_REQUEST_BYTES,
            serve_unknown=balanced,
            answers_at_once=proxy.answers_at_once,
        )

    # built by the first /mcp request: a daemon nobody asks MCP of never imports the SDK
    mcp = McpOnDemand(build_mcp)

    started = time.monotonic()

    async def healthz(_: Request) -> Response:
        body: dict[str, Any] = {"status": "ok", "mcp_sessions": mcp.open_sessions}
        return Response(jsonutil.dumps(body), media_type="application/json")

    async def health(_: Request) -> Response:
        body, status = await store_health(app), 200
        body.update(
            version=__version__,
            uptime_seconds=round(time.monotonic() - started, 3),
            mcp_sessions=mcp.open_sessions,
            # which of the store's daemons answered (several may serve one store)
            daemon={"id": identity.daemon_id, "address": identity.address},
        )
        if body["status"] != "ok":
            status = 503
        return Response(jsonutil.dumps(body), status_code=status, media_type="application/json")

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # the app's tasks (agents' turns, Loop runs) run while it serves; on the way out its
        # Loop runs stop where they are, its agents end, async hooks and run records finish
        async with app.running(), contextlib.AsyncExitStack() as stack:
            if upstreams is not None:
                # /mcp waits for their first attempts when it lists, not the start-up:
                # a stop (SIGTERM) is heard at once
                await stack.enter_async_context(upstreams.running(settle=False))
            tasks = await stack.enter_async_context(anyio.create_task_group())
            mcp.serve_in(tasks)  # its session manager runs there once it is built
            # agents of an earlier daemon died with it: their sessions are unbound
            # and what they left running in the background (kill -9 of a daemon) ends
            reaped = await anyio.to_thread.run_sync(app.runtime.reap_orphans)
            if reaped:
                log.info("ended %d agent process group(s) a killed daemon left", len(reaped))
            # those whose agents another daemon of the store runs are left to it
            stale = await anyio.to_thread.run_sync(node.reset_stale)
            if stale:
                log.info("unbound %d session(s) whose agents ended with a daemon", len(stale))
            app.runtime.placement = node
            app.loops.placement = node  # before recover: a run is resumed by one daemon
            tasks.start_soon(node.run)
            missing = await app.sessions.recover_worktrees()
            if missing:
                log.info("%d session worktree(s) vanished; marked missing", missing)
            tasks.start_soon(_upkeep_every, app, settings.upkeep_seconds)
            recovered = await app.loops.recover()
            if any(recovered.values()):
                log.info("loop runs after restart: %s", recovered)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    host = LocalHost(app, mcp_servers=upstreams)
    combined = Starlette(
        routes=[
            Route(HEALTHZ, healthz, methods=["GET"]),
            Route(HEALTH, health, methods=["GET"]),
            Mount(API_PREFIX, app=api_app(host, openapi.for_address(address))),
            *board_routes(host, error_response),
            Route(MCP_PATH, endpoint=mcp),
        ],
        middleware=[
            Middleware(RequestLog),
            Middleware(Guard, access=access, open_paths=(HEALTHZ, *BOARD_OPEN_PATHS)),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    combined.router.redirect_slashes = False
    return combined
