"""The daemon: one ASGI app with the HTTP API at ``/api`` and the hosted MCP endpoint at ``/mcp``,
served on any number of bound sockets (TCP and a Unix socket) by :func:`compozy_mcp.net.serve`.

The MCP endpoint is the proxy's Streamable HTTP app; its session manager runs inside this
app's lifespan. It serves every caller: a request that names a managed session in
``X-Compozy-Session`` (as ``compozy proxy --session`` does against a daemon) lists and calls
what that session's policy allows, one that names none gets the full-policy catalog.

Host/Origin checks and the token are :class:`~compozy_mcp.api.auth.Guard`'s, for both
endpoints, so the SDK's own DNS-rebinding check (which cannot serve TCP and a socket with one
allow-list) is off.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from compozy_mcp.api import openapi
from compozy_mcp.api.auth import Access, Guard
from compozy_mcp.api.routes import EXCEPTION_HANDLERS, api_app
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.wire import API_PREFIX

if TYPE_CHECKING:
    from compozy_mcp.assembly import App


def daemon_app(app: App, access: Access) -> Starlette:
    from mcp.server.transport_security import TransportSecuritySettings

    from compozy_mcp.proxy.server import ProxyServer
    from compozy_mcp.proxy.transports import MAX_REQUEST_BYTES, MCP_PATH, QuietDisconnects

    mcp_app = ProxyServer(app, scope_per_request=True).server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=MAX_REQUEST_BYTES,
    )
    mcp_app.add_middleware(QuietDisconnects)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            async with mcp_app.router.lifespan_context(mcp_app):
                yield
        finally:
            await app.hooks.drain()  # async hooks and run records finish before the exit

    combined = Starlette(
        routes=[Mount(API_PREFIX, app=api_app(LocalHost(app), openapi.document)), *mcp_app.routes],
        middleware=[Middleware(Guard, access=access)],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    combined.router.redirect_slashes = False
    return combined
