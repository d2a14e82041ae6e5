"""The Host API of a daemon, over its HTTP API (TCP or Unix socket), with httpx2.

Each operation is one request; a success returns the response payload as it came, an error
raises :class:`RemoteError` carrying the daemon's (already redacted) error payload, so that the
CLI prints the same JSON and exits with the same code as it would in-process. A daemon that
cannot be reached is a :class:`DaemonUnreachable`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Self, cast
from urllib.parse import quote

from compozy_mcp import jsonutil
from compozy_mcp.errors import DaemonUnauthorized, DaemonUnreachable, RemoteError
from compozy_mcp.hostapi import _oneshot as oneshot
from compozy_mcp.hostapi._client import Payload
from compozy_mcp.hostapi._oneshot import speaks
from compozy_mcp.hostapi.operation import Body, Operation, R
from compozy_mcp.hostapi.target import Target
from compozy_mcp.hostapi.wire import API_PREFIX, DIAGNOSTIC_HEADER, SESSION_HEADER
from compozy_mcp.reasons import Reason, named

if TYPE_CHECKING:
    import ssl

    import httpx2

CONNECT_TIMEOUT = 5.0
#: a tool call may take long; the daemon has its own limits
READ_TIMEOUT = 300.0
START_HINT = "is `compozy serve` running?"


def _segment(value: str) -> str:
    return quote(value, safe="")


def _query(values: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            continue
        out[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


@functools.cache
def _no_tls() -> ssl.SSLContext:
    """The TLS context of a client that never speaks TLS (a daemon's socket, or plain HTTP):
    it trusts no certificate, so a TLS connection made with it would fail, never go unchecked.
    The default context reads the system's CA bundle, 20-40 ms of CPU per client (a ``compozy
    proxy`` relay makes one, each agent's relay too) for certificates nobody sends."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def daemon_http_client(
    target: Target,
    token: str | None,
    *,
    headers: Mapping[str, str] | None = None,
    wrap: Callable[[httpx2.AsyncBaseTransport], httpx2.AsyncBaseTransport] | None = None,
) -> httpx2.AsyncClient:
    """An HTTP client on a daemon's listener (TCP or its socket), sending the bearer token;
    ``wrap`` may put a transport of its own around the network one."""
    import httpx2

    socket = str(target.socket) if target.socket is not None else None
    transport: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport(
        uds=socket, verify=_no_tls() if target.plain else True
    )
    all_headers = dict(headers or {})
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    return httpx2.AsyncClient(
        base_url=target.base_url,
        transport=wrap(transport) if wrap is not None else transport,
        headers=all_headers,
        timeout=httpx2.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
        trust_env=False,  # a local daemon is never reached through a proxy
    )


class RemoteHost:
    """A daemon's Host API. The HTTP client is made on first use, in the caller's event loop.

    ``oneshot``: the caller sends a request or two and exits (a CLI command): requests to a
    plain-HTTP or socket daemon then go through :mod:`compozy_mcp.hostapi._oneshot`, which
    imports a third of what httpx2 does; an event stream still takes httpx2."""

    def __init__(
        self,
        target: Target,
        *,
        token: str | None = None,
        diagnostics: bool = False,
        oneshot: bool = False,
    ) -> None:
        self.target = target
        self._token = token
        self._diagnostics = diagnostics
        self._client: httpx2.AsyncClient | None = None
        self._oneshot = oneshot and speaks(target)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._diagnostics:
            headers[DIAGNOSTIC_HEADER] = "1"
        return headers

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = daemon_http_client(self.target, self._token, headers=self._headers())
        return self._client

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        session: str | None = None,
    ) -> Payload:
        headers = {SESSION_HEADER: session} if session else {}
        content = None
        if body is not None:
            content = jsonutil.dumps(body)
            headers["Content-Type"] = "application/json"
        if self._oneshot:
            status, answer = await self._send_oneshot(method, path, params, content, headers)
            return self._answer(status, answer)
        import httpx2

        try:
            response = await self._http().request(
                method,
                API_PREFIX + path,
                params=_query(params or {}),
                content=content,
                headers=headers,
            )
        except httpx2.TimeoutException:
            raise self._timed_out() from None
        except httpx2.TransportError as exc:
            raise self._unreachable(exc) from None
        return self._answer(response.status_code, response.content)

    async def _send_oneshot(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        headers: Mapping[str, str],
    ) -> tuple[int, bytes]:
        import http.client

        all_headers = self._headers() | dict(headers)
        if self._token:
            all_headers["Authorization"] = f"Bearer {self._token}"
        try:
            return await oneshot.send(
                self.target,
                method,
                API_PREFIX + path,
                query=_query(params or {}),
                content=content,
                headers=all_headers,
                connect_timeout=CONNECT_TIMEOUT,
                read_timeout=READ_TIMEOUT,
            )
        except oneshot.RequestTimeout:
            raise self._timed_out() from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(exc) from None

    def _timed_out(self) -> DaemonUnreachable:
        return DaemonUnreachable(
            f"the compozy daemon at {self.target} did not answer in time",
            reason=Reason.DAEMON_TIMEOUT,
        )

    def _unreachable(self, exc: Exception) -> DaemonUnreachable:
        return DaemonUnreachable(
            f"cannot reach the compozy daemon at {self.target} ({exc or type(exc).__name__}); "
            f"{START_HINT}"
        )

    def _answer(self, status: int, content: bytes) -> Payload:
        """A response's payload, or the daemon's error raised as it sent it."""
        try:
            payload = jsonutil.loads(content)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise DaemonUnreachable(
                f"{self.target} answered HTTP {status} without a JSON object; "
                "is it a compozy daemon?",
                reason=Reason.NOT_A_DAEMON,
            )
        # 202 is a call waiting for approval (tool_approval_required), an error too
        if status >= 400 or (status == 202 and "error" in payload):
            error = payload.get("error")
            if not isinstance(error, dict):
                raise DaemonUnreachable(
                    f"{self.target} answered HTTP {status} without an error "
                    "payload; is it a compozy daemon?",
                    reason=Reason.NOT_A_DAEMON,
                )
            if status == 401:
                raise DaemonUnauthorized(
                    f"{error.get('message', 'unauthorized')}; set COMPOZY_TOKEN",
                    reason=named(Reason, str(error.get("reason", "")), Reason.TOKEN_MISSING),
                )
            raise RemoteError(error, status)
        return payload

    async def call(
        self, operation: Operation[R], args: Mapping[str, Any], *, session: str | None = None
    ) -> R:
        path, rest = operation.http_path(args, _segment)
        if operation.body is Body.NONE:
            params = operation.query_of(rest) or None
            answer = await self._request(operation.method, path, params=params, session=session)
        else:
            if rest.get("approval_token", "") is None:
                # no token is no field: the route refuses a null one (it is not a string)
                rest = {name: value for name, value in rest.items() if name != "approval_token"}
            answer = await self._request(operation.method, path, body=rest, session=session)
        return cast(R, answer)

    async def health(self) -> Payload:
        """The daemon's ``/api/health``: its store's state, version, and which daemon answered
        (``daemon``: its id and the TCP address it serves, ``null`` without one)."""
        return await self._request("GET", "/health")

    async def follow_events(self, session_id: str, cursor: int) -> AsyncIterator[Payload | None]:
        """The daemon's Server-Sent Events stream of the session (its keep-alive comments
        come as ``None``)."""
        path = f"{API_PREFIX}/sessions/{_segment(session_id)}/events"
        headers = {"Accept": "text/event-stream"}
        import httpx2

        try:
            async with self._http().stream(
                "GET", path, params={"cursor": str(cursor)}, headers=headers
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    self._answer(response.status_code, response.content)  # the daemon's error
                    raise DaemonUnreachable(
                        f"{self.target} answered HTTP {response.status_code} to a stream"
                    )
                data: list[str] = []
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif line.startswith(":"):
                        yield None
                    elif not line and data:
                        event = jsonutil.loads("\n".join(data))
                        data = []
                        if isinstance(event, dict):
                            yield event
        except httpx2.TransportError as exc:
            raise DaemonUnreachable(
                f"lost the compozy daemon at {self.target} ({exc or type(exc).__name__})"
            ) from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
