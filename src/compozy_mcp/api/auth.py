"""Who may talk to the daemon: checked on every request, before any route (``/api`` and ``/mcp``).

- **Host and Origin** (DNS-rebinding and cross-site protection) on a loopback daemon: the
  ``Host`` header must name a loopback address (with any port, or none: over the Unix socket it
  is a bare ``localhost``), and an ``Origin``, when a browser sends one, must be a loopback one.
  A non-loopback daemon answers to any host name, so it always has a token.
- **Bearer token**, when one is configured: ``Authorization: Bearer <token>``, compared in
  constant time. A missing or wrong token is a ``401`` JSON error with ``WWW-Authenticate``.
- **Session credentials** (:mod:`compozy_mcp.credentials`) stand in for the token for an
  agent's own ``compozy proxy --session``: one is accepted only on the tool surfaces that act
  as the session a request names (``/mcp``, ``/api/tools``, but not minting approvals), and
  only when that session (``X-Compozy-Session``) is its own; anything else is a ``403``.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from compozy_mcp.api.responses import error_response
from compozy_mcp.credentials import credential_session, is_session_credential
from compozy_mcp.errors import ApiError, Forbidden, HostNotAllowed, Unauthorized
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.net import is_loopback
from compozy_mcp.reasons import Reason

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="compozy"'}
# A name (a DNS name, an IPv4 address or a bracketed IPv6 address) and an optional port: all a
# Host header may hold. Anything else (userinfo, a path, a second colon) is not a match.
_NAME = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)"
_HOST = re.compile(_NAME + r"(?::[0-9]{1,5})?")
_ORIGIN = re.compile(r"https?://" + _NAME + r"(?::[0-9]{1,5})?/?")
#: where a session credential is accepted: the surfaces whose calls act as the session the
#: request names (the MCP endpoint, the tool routes); minting approvals is the operator's
_SESSION_PATHS = re.compile(r"/mcp(/.*)?|/api/tools(/(?!.*/approvals$).*)?")


def host_name(value: str) -> str | None:
    """The name a ``Host`` header value names (any port), lowercase; ``None`` if malformed."""
    found = _HOST.fullmatch(value)
    return found.group(1).lower() if found else None


def origin_name(value: str) -> str | None:
    """The host name of an ``Origin`` (``http(s)://NAME[:PORT]``); ``None`` if malformed."""
    found = _ORIGIN.fullmatch(value)
    return found.group(1).lower() if found else None


@dataclass(frozen=True, slots=True)
class Access:
    """What a request must satisfy: a ``Host`` (and ``Origin``) naming one of ``names``, with
    any port, and the bearer ``token``. ``names`` ``None`` accepts any host."""

    token: str | None = None
    names: frozenset[str] | None = None

    @classmethod
    def for_host(cls, host: str, token: str | None) -> Access:
        """The policy of a daemon bound to ``host`` (and its Unix socket)."""
        if not is_loopback(host):
            return cls(token=token)
        shown = f"[{host}]" if ":" in host else host
        return cls(token=token, names=frozenset({*LOOPBACK_NAMES, shown.lower()}))

    def check(self, headers: Mapping[str, str], path: str = "/") -> ApiError | None:
        """The error a request to ``path`` with these headers gets, or ``None`` if it may go
        on."""
        if self.names is not None:
            host = headers.get("host", "")
            if host_name(host) not in self.names:
                return HostNotAllowed(f'the Host header "{host}" is not one this daemon serves')
            origin = headers.get("origin")
            if origin is not None and origin_name(origin) not in self.names:
                return Forbidden(f'requests from origin "{origin}" are not allowed')
        if self.token is not None:
            return self._check_token(headers, path)
        return None

    def _check_token(self, headers: Mapping[str, str], path: str) -> ApiError | None:
        assert self.token is not None
        authorization = headers.get("authorization")
        if not authorization:
            return Unauthorized("this daemon requires a bearer token (Authorization: Bearer ...)")
        scheme, _, sent = authorization.partition(" ")
        sent = sent.strip()
        if scheme.lower() == "bearer" and is_session_credential(sent):
            return _check_session_credential(sent, headers.get(SESSION_HEADER.lower()), path)
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            sent.encode(), self.token.encode()
        ):
            return Unauthorized("the bearer token is not valid", reason=Reason.TOKEN_INVALID)
        return None


def _check_session_credential(sent: str, claimed: str | None, path: str) -> ApiError | None:
    session = credential_session(sent)
    if session is None:
        return Unauthorized("the session credential is not valid", reason=Reason.TOKEN_INVALID)
    if claimed != session:
        return Forbidden(
            f'a session credential acts only as its session "{session}": send it with '
            f"{SESSION_HEADER}: {session}",
            reason=Reason.CREDENTIAL_OUT_OF_SCOPE,
        )
    if _SESSION_PATHS.fullmatch(path) is None:
        return Forbidden(
            f"a session credential is good for the session's tool calls (/mcp, /api/tools), "
            f"not for {path}",
            reason=Reason.CREDENTIAL_OUT_OF_SCOPE,
        )
    return None


class Guard:
    """ASGI middleware applying an :class:`Access` policy to every HTTP request; the token is
    not asked of ``open_paths`` (a liveness probe)."""

    def __init__(self, app: ASGIApp, access: Access, open_paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.access = access
        self.open_access = replace(access, token=None)
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            access = self.open_access if scope["path"] in self.open_paths else self.access
            error = access.check(Headers(scope=scope), scope["path"])
            if error is not None:
                headers = CHALLENGE if isinstance(error, Unauthorized) else None
                await error_response(error, headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)
