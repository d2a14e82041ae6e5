"""The daemon's MCP endpoint, built by the first request that reaches it.

The MCP SDK is most of what a daemon holds: importing it (its protocol models for two
versions, its server and client, Starlette's and uvicorn's parts it pulls in) costs about 0.7 s
of CPU and 30 MiB of memory. A daemon used through its HTTP API, its board and the CLI never
needs it; one that serves MCP clients pays it once, on the first ``/mcp`` request, in a worker
thread (the event loop serves the API meanwhile). This module imports nothing of the SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, TaskStatus

from compozy_mcp.interpreter import imports_without_collector

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from compozy_mcp.proxy.http_sessions import ReclaimingSessionManager

#: the MCP app (its one route at :data:`MCP_PATH`) and its session manager
Built = tuple["Starlette", "ReclaimingSessionManager"]


def _import_stack() -> None:
    """The modules a build imports: the MCP SDK and the proxy (a worker thread runs this, with
    the collector paused: what it imports lives as long as the daemon)."""
    with imports_without_collector():
        import compozy_mcp.proxy.http_sessions
        import compozy_mcp.proxy.server
        import compozy_mcp.proxy.transports  # noqa: F401


class McpOnDemand:
    """An ASGI endpoint that builds the MCP app with ``build`` when first called, starts its
    session manager in the task group given to :meth:`serve_in` (the daemon's lifespan: it
    stops with the daemon) and hands every request to it."""

    def __init__(self, build: Callable[[], Built]) -> None:
        self._build = build
        self._endpoint: ASGIApp | None = None
        self._sessions: ReclaimingSessionManager | None = None
        self._tasks: TaskGroup | None = None
        self._lock: anyio.Lock | None = None

    def serve_in(self, tasks: TaskGroup) -> None:
        """Run the MCP app's lifespan, once built, in ``tasks``."""
        self._tasks = tasks

    @property
    def open_sessions(self) -> int:
        """The MCP sessions open now (none before the first request)."""
        return 0 if self._sessions is None else self._sessions.open_sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self._endpoint or await self._start()
        await endpoint(scope, receive, send)

    async def _start(self) -> ASGIApp:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # the first requests at once wait for one build
            if self._endpoint is not None:
                return self._endpoint
            if self._tasks is None:
                raise RuntimeError("the MCP endpoint is served outside its daemon's lifespan")
            await anyio.to_thread.run_sync(_import_stack)
            from compozy_mcp.proxy.transports import QuietDisconnects

            mcp_app, sessions = self._build()
            await self._tasks.start(_serve_lifespan, mcp_app)
            self._sessions = sessions
            (route,) = mcp_app.routes
            endpoint: ASGIApp = QuietDisconnects(route.app)  # type: ignore[attr-defined]
            self._endpoint = endpoint
            return endpoint


async def _serve_lifespan(mcp_app: Starlette, *, task_status: TaskStatus[None]) -> None:
    """The MCP app's lifespan (its session manager) until the task group is cancelled."""
    async with mcp_app.router.lifespan_context(mcp_app):
        task_status.started()
        await anyio.sleep_forever()
