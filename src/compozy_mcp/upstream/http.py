"""An HTTP transport for the SDK's Streamable HTTP client that answers for a server it cannot
reach, so that a call waiting on it fails at once instead of hanging.

The SDK's Streamable HTTP client lets a transport error escape the task that sent the request:
the request is never answered and the connection is dead for good. A JSON-RPC error response
instead reaches the waiting call, and the next call simply tries again. Used by the relay (a
daemon) and by upstream MCP servers over HTTP.
"""

from __future__ import annotations

import httpx2

from compozy_mcp import jsonutil

#: the JSON-RPC code of such an answer; it never leaves compozy (the call becomes a tool error)
UNREACHABLE = -32098


class AnsweringTransport(httpx2.AsyncBaseTransport):
    """``inner``, with transport errors turned into a JSON-RPC error from ``what`` (how the
    server is named in the message, such as ``the compozy daemon at unix:/...``); ``detail``
    adds the transport error's own text."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, what: str, *, detail: bool = True) -> None:
        self._inner = inner
        self._what = what
        self._detail = detail

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
                message = f"cannot reach {self._what}"
            else:  # the request may have reached it: say so, never claim it did not run
                message = f"lost {self._what} mid-request; it may have run"
            if self._detail:
                message += f" ({exc or type(exc).__name__})"
            error = {"code": UNREACHABLE, "message": message}
            return httpx2.Response(
                502,
                headers={"Content-Type": "application/json"},
                content=jsonutil.dumps({"jsonrpc": "2.0", "id": None, "error": error}),
                request=request,
            )

    async def aclose(self) -> None:
        await self._inner.aclose()
