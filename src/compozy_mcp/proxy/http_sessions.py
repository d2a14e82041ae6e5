"""The Streamable HTTP app of MCP, with stateful sessions that stay bounded.

The SDK keeps every session a 2025-11-25 client opens until it is deleted or has been idle
for its timeout, and past ``max_sessions`` refuses every new client with 503. A client that
initializes and goes away without closing (most do, when they crash or are killed) holds its
slot for the whole timeout: enough of them lock every new client out. Here the cap is a
budget, not a wall: a new session at the cap closes the longest-idle open session instead, and
only when every session is busy is a new client refused.

Several daemons behind a round-robin balancer (``docs/deployment.md``): a client's session was
opened on one daemon and its next request may reach another. With ``serve_unknown`` a request
that names a session this daemon does not hold is served in the SDK's stateless mode (a
transport for that one request, its protocol version from the header): every tool call is
complete in itself here (the managed session travels in ``X-Compozy-Session`` on each request).
What such a request cannot do is ask its client something mid-call (no way back to it), and a
GET (the client's stream for server-initiated messages) is refused with 405, which clients take
as "no such stream". A daemon alone keeps the spec's 404 for an unknown session.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from compozy_mcp.proxy._streaming import JsonUnlessStreamed
from compozy_mcp.proxy._valid_json import RepresentableJson

log = logging.getLogger(__name__)


class ReclaimingSessionManager(StreamableHTTPSessionManager):
    """A session manager that closes the longest-idle session to admit a new one at the cap.

    It reads the SDK transport's in-flight count and idle deadline (``mcp`` is pinned to 2.3.x;
    ``tests/proxy/test_http_sessions.py`` proves the behaviour through real clients).
    """

    #: serve a request for a session another daemon opened statelessly (module docstring)
    serve_unknown = False

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        named = headers.get(MCP_SESSION_ID_HEADER)
        if not self.serve_unknown or named is None or named in self._server_instances:
            await super()._handle_stateful_request(scope, receive, send)
            return
        method = scope["method"]
        if method == "POST":
            version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
            await self._handle_stateless_request(version, scope, receive, send)
        elif method == "DELETE":  # its daemon closes it when idle: nothing to end here
            await Response(status_code=204)(scope, receive, send)
        else:
            await Response(status_code=405, headers={"Allow": "POST, DELETE"})(scope, receive, send)

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            self._close_longest_idle()
        admitted: StreamableHTTPServerTransport | None = super()._admit_session(requestor)
        return admitted

    def _close_longest_idle(self) -> None:
        idle = [
            (transport.idle_scope.deadline, session_id, transport)
            for session_id, transport in self._server_instances.items()
            if transport.idle_scope is not None and not transport._requests_in_flight
        ]
        if not idle:
            return
        _, session_id, transport = min(idle, key=lambda item: item[0])
        # forgotten at once (its id answers 404 from now); its server task ends and cleans up
        self._server_instances.pop(session_id, None)
        self._session_owners.pop(session_id, None)
        assert transport.idle_scope is not None
        transport.idle_scope.cancel()
        log.info("closed idle MCP session %s to admit a new one", session_id)

    @property
    def open_sessions(self) -> int:
        return len(self._server_instances)


def mcp_http_app(
    server: Server[Any],
    *,
    path: str,
    security: TransportSecuritySettings | None,
    max_sessions: int,
    idle_seconds: float,
    max_request_bytes: int,
    serve_unknown: bool = False,
) -> tuple[Starlette, ReclaimingSessionManager]:
    """The app serving ``server`` at ``path``, and its session manager (the app's lifespan
    runs it). A request that streams (progress, log messages, elicitation...) is answered with
    an event stream, any other with JSON (:mod:`.streaming`); valid JSON the SDK cannot read
    is answered as invalid input, never as a parse error (:mod:`.valid_json`)."""
    manager = ReclaimingSessionManager(
        app=server,
        json_response=False,
        security_settings=security,
        max_request_body_size=max_request_bytes,
        session_idle_timeout=idle_seconds,
        max_sessions=max_sessions,
    )
    manager.serve_unknown = serve_unknown
    app = Starlette(
        routes=[
            Route(
                path,
                endpoint=RepresentableJson(
                    JsonUnlessStreamed(StreamableHTTPASGIApp(manager)), max_request_bytes
                ),
            )
        ],
        lifespan=lambda _: manager.run(),
    )
    return app, manager
