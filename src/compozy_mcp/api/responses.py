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
from compozy_mcp.errors import CompozyError, StoreBusy
from compozy_mcp.hostapi.wire import DIAGNOSTIC_HEADER, error_body
from compozy_mcp.net import is_loopback

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

#: error code -> HTTP status; every code an error class carries is listed (a test walks them)
STATUS_BY_CODE: dict[str, int] = {
    "tool_approval_required": 202,
    "invalid_request": 400,
    "tool_invalid_input": 400,
    "unauthorized": 401,
    "tool_denied": 403,
    "forbidden": 403,
    "tool_not_found": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "tool_conflict": 409,
    "conflict": 409,
    "request_too_large": 413,
    "misdirected_request": 421,
    "model_not_found": 422,
    "reasoning_effort_unsupported": 422,
    "worktree_unavailable": 422,
    "pull_request_unavailable": 422,
    "merge_conflict": 409,
    "tool_backend_failed": 500,
    "internal_error": 500,
    "registration_invalid": 500,
    "store_unavailable": 500,
    "config_invalid": 500,
    "daemon_unreachable": 500,
    "store_busy": 503,
    "limit_exceeded": 413,
    "mcp_server_unavailable": 503,
    "tool_result_persistence_failed": 507,
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
