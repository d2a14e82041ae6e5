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

A 2026-07-28 request is answered by the SDK in SSE mode: the call runs in a task of its own
beside one that watches for the client's disconnect, and its response is held back until the
call emits something (the stream is then committed) or ends (plain JSON). That costs about a
fifth of the server's CPU per call under load, for calls that can emit nothing: a call of a
tool that answers at once (``ToolDefinition.answers_at_once``) asking neither progress nor log
lines is served the way the SDK serves JSON mode, inline, with the same JSON answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server import Server
from mcp.server._streamable_http_modern import handle_modern_request
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from compozy_mcp.proxy._streaming import JsonUnlessStreamed
from compozy_mcp.proxy._valid_json import DECODED_MESSAGE, RepresentableJson

log = logging.getLogger(__name__)


class ReclaimingSessionManager(StreamableHTTPSessionManager):
    """A session manager that closes the longest-idle session to admit a new one at the cap.

    It reads the SDK transport's in-flight count and idle deadline (``mcp`` is pinned to 2.3.x;
    ``tests/proxy/test_http_sessions.py`` proves the behaviour through real clients).
    """

    #: serve a request for a session another daemon opened statelessly (module docstring)
    serve_unknown = False
    #: whether a 2026-07-28 request (its decoded message) can emit nothing before its answer
    #: (module docstring); ``None``: every request is served in SSE mode
    answers_at_once: Callable[[Mapping[str, Any]], bool] | None = None

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = scope.get(DECODED_MESSAGE)
        if (
            message is not None
            and self.answers_at_once is not None
            and self._task_group is not None
            and _modern_era(scope)
            and self.answers_at_once(message)
        ):
            await handle_modern_request(
                self.app, self.security_settings, True, self._lifespan_state, scope, receive, send
            )
            return
        await super()._handle_request(scope, receive, send)

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


_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")


def _modern_era(scope: Scope) -> bool:
    """Whether the SDK routes this request to its 2026-07-28 entry (as its manager decides:
    a protocol version header naming no handshake-era version)."""
    version = next((value for name, value in scope["headers"] if name == _VERSION_HEADER), None)
    return version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS


def mcp_http_app(
    server: Server[Any],
    *,
    path: str,
    security: TransportSecuritySettings | None,
    max_sessions: int,
    idle_seconds: float,
    max_request_bytes: int,
    serve_unknown: bool = False,
    answers_at_once: Callable[[Mapping[str, Any]], bool] | None = None,
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
    manager.answers_at_once = answers_at_once
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
