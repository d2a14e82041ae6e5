"""Who may talk to the daemon: checked on every request, before any route (``/api`` and ``/mcp``).

- **Host and Origin** (DNS-rebinding and cross-site protection) on a loopback daemon: the
  ``Host`` header must name a loopback address (with any port, or none: over the Unix socket it
  is a bare ``localhost``), and an ``Origin``, when a browser sends one, must be a loopback one.
  A non-loopback daemon answers to any host name, so it always has a token.
- **Bearer token**, when one is configured: ``Authorization: Bearer <token>``, compared in
  constant time. A missing or wrong token is a ``401`` JSON error with ``WWW-Authenticate``.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from compozy_mcp.api.responses import error_response
from compozy_mcp.errors import ApiError, Forbidden, HostNotAllowed, Unauthorized
from compozy_mcp.net import is_loopback
from compozy_mcp.reasons import Reason

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="compozy"'}


def _matches(value: str, allowed: tuple[str, ...]) -> bool:
    """``allowed`` holds exact values and ``name:*`` patterns (any port)."""
    for pattern in allowed:
        if value == pattern:
            return True
        if pattern.endswith(":*") and value.startswith(pattern[:-1]):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Access:
    """What a request must satisfy. ``None`` allow-lists accept anything."""

    token: str | None = None
    hosts: tuple[str, ...] | None = None
    origins: tuple[str, ...] | None = None

    @classmethod
    def for_host(cls, host: str, token: str | None) -> Access:
        """The policy of a daemon bound to ``host`` (and its Unix socket)."""
        if not is_loopback(host):
            return cls(token=token)
        names = list(LOOPBACK_NAMES)
        shown = f"[{host}]" if ":" in host else host
        if shown not in names:
            names.append(shown)
        hosts = tuple(h for name in names for h in (name, f"{name}:*"))
        origins = tuple(
            o
            for name in names
            for scheme in ("http", "https")
            for o in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        )
        return cls(token=token, hosts=hosts, origins=origins)

    def check(self, headers: Mapping[str, str]) -> ApiError | None:
        """The error a request with these headers gets, or ``None`` if it may go on."""
        if self.hosts is not None:
            host = headers.get("host", "")
            if not _matches(host, self.hosts):
                return HostNotAllowed(f'the Host header "{host}" is not one this daemon serves')
        origin = headers.get("origin")
        if self.origins is not None and origin is not None and not _matches(origin, self.origins):
            return Forbidden(f'requests from origin "{origin}" are not allowed')
        if self.token is not None:
            return self._check_token(headers.get("authorization"))
        return None

    def _check_token(self, authorization: str | None) -> ApiError | None:
        assert self.token is not None
        if not authorization:
            return Unauthorized("this daemon requires a bearer token (Authorization: Bearer ...)")
        scheme, _, sent = authorization.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            sent.strip().encode(), self.token.encode()
        ):
            return Unauthorized("the bearer token is not valid", reason=Reason.TOKEN_INVALID)
        return None


class Guard:
    """ASGI middleware applying an :class:`Access` policy to every HTTP request."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            error = self.access.check(Headers(scope=scope))
            if error is not None:
                headers = CHALLENGE if isinstance(error, Unauthorized) else None
                await error_response(error, headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)
