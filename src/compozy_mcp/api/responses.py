"""How the HTTP API reports errors: the status and the body of every error, in one place.

A body is ``{"error": {"code", "reason", "message", "tool_id"?, "details"?}}``. Tool errors
keep their code and reason; input-error and denial messages are redacted to ``invalid tool
request`` / ``tool invocation denied`` (spec, Errors). A busy store is ``503`` with
``Retry-After``: nothing changed, and the same request may be sent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from compozy_mcp import jsonutil
from compozy_mcp.codes import Code
from compozy_mcp.errors import CompozyError, StoreBusy
from compozy_mcp.hostapi.wire import DIAGNOSTIC_HEADER, error_body
from compozy_mcp.net import is_loopback

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

#: error code -> HTTP status; every code an error class carries is listed (a test walks them)
STATUS_BY_CODE: dict[Code, int] = {
    Code.TOOL_APPROVAL_REQUIRED: 202,
    Code.INVALID_REQUEST: 400,
    Code.TOOL_INVALID_INPUT: 400,
    Code.UNAUTHORIZED: 401,
    Code.TOOL_DENIED: 403,
    Code.FORBIDDEN: 403,
    Code.TOOL_NOT_FOUND: 404,
    Code.NOT_FOUND: 404,
    Code.METHOD_NOT_ALLOWED: 405,
    Code.TOOL_CONFLICT: 409,
    Code.CONFLICT: 409,
    Code.REQUEST_TOO_LARGE: 413,
    Code.MISDIRECTED_REQUEST: 421,
    Code.MODEL_NOT_FOUND: 422,
    Code.REASONING_EFFORT_UNSUPPORTED: 422,
    Code.WORKTREE_UNAVAILABLE: 422,
    Code.PULL_REQUEST_UNAVAILABLE: 422,
    Code.MERGE_CONFLICT: 409,
    Code.TOOL_BACKEND_FAILED: 500,
    Code.INTERNAL_ERROR: 500,
    Code.REGISTRATION_INVALID: 500,
    Code.STORE_UNAVAILABLE: 500,
    Code.CONFIG_INVALID: 500,
    Code.DAEMON_UNREACHABLE: 500,
    Code.STORE_BUSY: 503,
    Code.LIMIT_EXCEEDED: 413,
    Code.MCP_SERVER_UNAVAILABLE: 503,
    Code.TOOL_RESULT_PERSISTENCE_FAILED: 507,
}


def status_for(error: CompozyError) -> int:
    """The HTTP status of an error: by its code (a daemon's code it reproduced keeps its
    status); an unknown code is a server failure."""
    return STATUS_BY_CODE.get(error.code, 500)


def error_response(
    error: CompozyError, headers: Mapping[str, str] | None = None, *, diagnostic: bool = False
) -> Response:
    """The response of an error; ``diagnostic`` (:func:`wants_diagnostic`) adds the dispatch
    message the body otherwise redacts."""
    from starlette.responses import Response

    all_headers = dict(headers or {})
    if error.code == StoreBusy.code:
        all_headers.setdefault("Retry-After", str(StoreBusy.retry_after_seconds))
    return Response(
        jsonutil.dumps(error_body(error, diagnostic=diagnostic)),
        status_code=status_for(error),
        headers=all_headers,
        media_type="application/json",
    )


def wants_diagnostic(request: Request) -> bool:
    """Whether a request asked for the dispatch diagnostic (``X-Compozy-Diagnostic: 1``) and
    may have it: it came over the Unix socket (no peer address) or from a loopback address,
    never from a remote client, token or not."""
    if request.headers.get(DIAGNOSTIC_HEADER) != "1":
        return False
    client = request.scope.get("client")
    return not client or not client[0] or is_loopback(client[0])
