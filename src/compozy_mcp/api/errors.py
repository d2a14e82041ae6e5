"""How the HTTP API reports errors: the status and the body of every error, in one place.

A body is ``{"error": {"code", "reason", "message", "tool_id"?, "details"?}}``. Tool errors
keep their code and reason; input-error and denial messages are redacted to ``invalid tool
request`` / ``tool invocation denied`` (spec, Errors). Errors of the request itself (route,
method, body, size, token, Host) are :class:`ApiError`\\ s and carry no ``tool_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compozy_mcp import jsonutil
from compozy_mcp.errors import CompozyError, ToolError

if TYPE_CHECKING:
    from starlette.responses import Response


class ApiError(CompozyError):
    """A request the API refuses before any operation runs."""


class BadRequest(ApiError):
    code = "invalid_request"
    default_reason = "body_invalid"


class Unauthorized(ApiError):
    code = "unauthorized"
    default_reason = "token_missing"


class Forbidden(ApiError):
    code = "forbidden"
    default_reason = "origin_not_allowed"


class RouteNotFound(ApiError):
    code = "not_found"
    default_reason = "route_not_found"


class MethodNotAllowed(ApiError):
    code = "method_not_allowed"
    default_reason = "method_not_allowed"


class RequestTooLarge(ApiError):
    code = "request_too_large"
    default_reason = "body_too_large"


class HostNotAllowed(ApiError):
    code = "misdirected_request"
    default_reason = "host_not_allowed"


class InternalError(ApiError):
    code = "internal_error"
    default_reason = "internal_error"


#: error code -> HTTP status; a code not listed is a server failure (500)
STATUS_BY_CODE: dict[str, int] = {
    "invalid_request": 400,
    "tool_invalid_input": 400,
    "unauthorized": 401,
    "tool_denied": 403,
    "forbidden": 403,
    "tool_not_found": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "tool_conflict": 409,
    "request_too_large": 413,
    "misdirected_request": 421,
    "model_not_found": 422,
    "reasoning_effort_unsupported": 422,
    "tool_backend_failed": 500,
    "internal_error": 500,
    "tool_result_persistence_failed": 507,
}


def error_code(error: CompozyError) -> str:
    return error.error_code if isinstance(error, ToolError) else error.code


def status_for(error: CompozyError) -> int:
    return STATUS_BY_CODE.get(error_code(error), 500)


def error_body(error: CompozyError) -> dict[str, Any]:
    """``{"error": {...}}``, redacted as the spec says for the CLI and HTTP/UDS."""
    if isinstance(error, ToolError):
        return {"error": error.payload(redact=True)}
    return {"error": {"code": error.code, "reason": error.reason, "message": error.message}}


def error_response(error: CompozyError, headers: Mapping[str, str] | None = None) -> Response:
    from starlette.responses import Response

    return Response(
        jsonutil.dumps(error_body(error)),
        status_code=status_for(error),
        headers=dict(headers or {}),
        media_type="application/json",
    )
