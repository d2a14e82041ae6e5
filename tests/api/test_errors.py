"""The one mapping from errors to HTTP statuses and bodies."""

from __future__ import annotations

import pytest

from compozy_mcp import errors as api_errors
from compozy_mcp.api.openapi import ERROR_CAUSES
from compozy_mcp.api.responses import STATUS_BY_CODE, status_for
from compozy_mcp.codes import Code
from compozy_mcp.errors import (
    CompozyError,
    ModelNotFound,
    ReasoningEffortUnsupported,
    ResourceNotFound,
    ResultViewInvalid,
    ResultViewPinned,
    StaleFence,
    ToolBackendFailed,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
    ToolNotFound,
    ToolResultPersistenceFailed,
)
from compozy_mcp.hostapi.wire import error_body

T = "compozy__session_status"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ToolInvalidInput(T, "x"), 400),
        (ToolInvalidInput(T, "x", code=Code.INVALID_REQUEST), 400),
        (ResultViewInvalid(T), 400),
        (ToolDenied(T, "x"), 403),
        (ResultViewPinned(T, "full"), 403),
        (ToolNotFound(T), 404),
        (ResourceNotFound(T, "session", "s"), 404),
        (ToolConflict(T, "x"), 409),
        (StaleFence(T, "s", "generation", 1, 2), 409),
        (ModelNotFound(T, "x"), 422),
        (ReasoningEffortUnsupported(T, "x"), 422),
        (ToolBackendFailed(T, "x"), 500),
        (ToolResultPersistenceFailed(T, "x"), 507),
        (CompozyError("anything else"), 500),
        (api_errors.RequestBodyInvalid("x"), 400),
        (api_errors.Unauthorized("x"), 401),
        (api_errors.Forbidden("x"), 403),
        (api_errors.RouteNotFound("x"), 404),
        (api_errors.MethodNotAllowed("x"), 405),
        (api_errors.RequestTooLarge("x"), 413),
        (api_errors.HostNotAllowed("x"), 421),
        (api_errors.InternalError("x"), 500),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, CompozyError) else str(v),
)
def test_every_error_class_has_its_status(error: CompozyError, status: int) -> None:
    assert status_for(error) == status


def test_every_status_the_mapping_gives_is_documented() -> None:
    assert set(STATUS_BY_CODE.values()) - {405} <= set(ERROR_CAUSES)


def test_input_errors_and_denials_are_redacted_and_others_are_not() -> None:
    assert error_body(ResultViewInvalid(T))["error"] == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": "invalid tool request",
        "tool_id": T,
    }
    assert error_body(ToolDenied(T, "policy says no"))["error"]["message"] == (
        "tool invocation denied"
    )
    not_found = error_body(ResourceNotFound(T, "session", "s"))["error"]
    assert not_found["message"] == 'session "s" does not exist'
    stale = error_body(StaleFence(T, "s", "generation", 1, 2))["error"]
    assert stale["details"] == {"fence": "generation", "sent": 1, "current": 2, "session_id": "s"}


def test_request_errors_carry_no_tool_id() -> None:
    assert error_body(api_errors.RequestTooLarge("too big")) == {
        "error": {"code": "request_too_large", "reason": "body_too_large", "message": "too big"}
    }
