"""The one error hierarchy of compozy-mcp.

Every failure a caller can see is a :class:`CompozyError` carrying a ``code`` (a stable,
machine-readable class of failure), a ``reason`` (the precise condition) and a message built
from typed arguments. Surfaces never invent errors; each maps these in one place
(``cli/errors.py``, the MCP proxy, the HTTP API).

::

    CompozyError                        code, reason, message
    ├── ToolError                       + tool_id: anything a tool call can end in
    │   ├── ToolNotFound                tool_not_found / tool_unknown
    │   ├── ToolInvalidInput            tool_invalid_input / schema_invalid, input_not_json, ...
    │   │   ├── ResultViewInvalid       the selector value is not "compact" or "full"
    │   │   └── ResultViewNotAccepted   the selector was sent to a single-result tool
    │   ├── ToolDenied                  tool_denied / permission_denied, scope_mismatch, ...
    │   │   ├── ResultViewPinned        a hook changed the view a Loop node pinned
    │   │   └── SpawnRefused            spawn budget, depth, TTL or policy exceeded
    │   ├── ToolConflict                tool_conflict / stale_fence, session_stopped, ...
    │   │   └── StaleFence              a fence the caller sent is not the record's
    │   ├── ResourceNotFound            not_found / session_not_found, skill_not_found, ...
    │   ├── ModelNotFound               model_not_found / provider_unknown, model_unknown
    │   ├── ReasoningEffortUnsupported  reasoning_effort_unsupported
    │   ├── ToolResultPersistenceFailed tool_result_persistence_failed
    │   ├── ToolBackendFailed           tool_backend_failed / handler_failed, store_busy
    │   └── RemoteError                 a daemon's error payload, as it came (cli/remote.py)
    ├── ApiError                        a request the HTTP API refuses (api/errors.py):
    │                                   bad body, route, method, size, token, Host
    └── SetupError                      raised before any call runs
        ├── ToolRegistrationError       registration_invalid / view_*, schema_*, ...
        ├── StoreError                  store_unavailable, store_too_new, migration_failed
        ├── ConfigError                 config_invalid
        └── DaemonUnreachable, DaemonUnauthorized   the CLI cannot use its daemon

The dispatch messages of the spec's Errors table are produced here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

REDACTED_INPUT_MESSAGE = "invalid tool request"
REDACTED_DENIAL_MESSAGE = "tool invocation denied"


class CompozyError(Exception):
    """Base of every error compozy-mcp reports."""

    code: ClassVar[str] = "internal_error"
    default_reason: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, reason={self.reason!r}, {self.message!r})"
        )


class ToolError(CompozyError):
    """A failure of one tool call. ``tool_id`` names the tool that was called."""

    code: ClassVar[str] = "tool_backend_failed"
    #: the message CLI and HTTP surfaces print instead of the dispatch message, if any
    redacted_as: ClassVar[str | None] = None

    def __init__(
        self,
        tool_id: str,
        message: str,
        *,
        reason: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, reason=reason)
        self.tool_id = tool_id
        self.details: dict[str, Any] = dict(details or {})

    @property
    def error_code(self) -> str:
        """The code reported for this error (a tool may override the class code)."""
        return self.code

    def payload(self, *, redact: bool) -> dict[str, Any]:
        """The ``{"code", "reason", "message", "tool_id"}`` object every surface reports."""
        message = self.redacted_as if (redact and self.redacted_as) else self.message
        body: dict[str, Any] = {
            "code": self.error_code,
            "reason": self.reason,
            "message": message,
            "tool_id": self.tool_id,
        }
        if self.details and not (redact and self.redacted_as):
            body["details"] = self.details
        return body


class ToolNotFound(ToolError):
    code = "tool_not_found"
    default_reason = "tool_unknown"

    def __init__(self, tool_id: str) -> None:
        super().__init__(tool_id, f'tool "{tool_id}" is not registered')


class ToolInvalidInput(ToolError):
    """The input of a call is not acceptable; the tool did not run."""

    code = "tool_invalid_input"
    default_reason = "schema_invalid"
    redacted_as = REDACTED_INPUT_MESSAGE

    def __init__(
        self,
        tool_id: str,
        message: str,
        *,
        reason: str | None = None,
        code: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(tool_id, message, reason=reason)
        # Tools that report input errors as ``invalid_request`` keep that code (spec, Errors).
        self._code = code or type(self).code
        self.field = field

    @property
    def error_code(self) -> str:
        return self._code

    @classmethod
    def for_field(
        cls, tool_id: str, field: str, problem: str, *, code: str | None = None
    ) -> ToolInvalidInput:
        """``tool "<id>" input "<field>" <problem>``: the shape every field error takes."""
        return cls(tool_id, f'tool "{tool_id}" input "{field}" {problem}', code=code, field=field)


class ResultViewInvalid(ToolInvalidInput):
    """Spec, Errors rows 1 and 2: an unknown or non-string ``result_view``."""

    def __init__(self, tool_id: str, *, code: str | None = None) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" input "result_view" must be one of "compact", "full"',
            code=code,
            field="result_view",
        )


class ResultViewNotAccepted(ToolInvalidInput):
    """Spec, Errors row 3: ``result_view`` sent to a single-result tool."""

    def __init__(self, tool_id: str, *, code: str | None = None) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" returns a single result and does not accept "result_view"',
            code=code,
            field="result_view",
        )


class ToolDenied(ToolError):
    code = "tool_denied"
    default_reason = "permission_denied"
    redacted_as = REDACTED_DENIAL_MESSAGE


class ResultViewPinned(ToolDenied):
    """Spec, Errors row 6: a hook changed the view that the caller pinned."""

    def __init__(self, tool_id: str, pinned: str) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" result view is pinned to "{pinned}" by the caller',
            reason="result_view_pinned",
        )


class SpawnRefused(ToolDenied):
    """A spawn that the parent's budget, depth, TTL or permission policy does not allow."""


class ToolConflict(ToolError):
    code = "tool_conflict"
    default_reason = "conflict"


class StaleFence(ToolConflict):
    """A fence in the input is not the record's current value; nothing changed."""

    def __init__(self, tool_id: str, session_id: str, fence: str, sent: int, current: int) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" fence "{fence}" is stale: the call sent {sent}, '
            f'session "{session_id}" is at {current}; read the session and retry',
            reason="stale_fence",
            details={"fence": fence, "sent": sent, "current": current, "session_id": session_id},
        )


class ResourceNotFound(ToolError):
    code = "not_found"
    default_reason = "not_found"

    def __init__(self, tool_id: str, kind: str, ident: str) -> None:
        super().__init__(tool_id, f'{kind} "{ident}" does not exist', reason=f"{kind}_not_found")
        self.kind = kind
        self.ident = ident


class ModelNotFound(ToolError):
    code = "model_not_found"
    default_reason = "model_unknown"


class ReasoningEffortUnsupported(ToolError):
    code = "reasoning_effort_unsupported"
    default_reason = "reasoning_effort_unsupported"


class ToolResultPersistenceFailed(ToolError):
    code = "tool_result_persistence_failed"
    default_reason = "artifact_write_failed"


class ToolBackendFailed(ToolError):
    code = "tool_backend_failed"
    default_reason = "handler_failed"


class InvalidRequest(CompozyError):
    """A Host API request that is not a tool call (registering a workspace or a profile) with a
    value the caller must fix. Its message only echoes what the caller sent, so it is reported
    as it is (tool input errors are redacted instead)."""

    code = "invalid_request"
    default_reason = "request_invalid"


class SetupError(CompozyError):
    """A problem found before any call runs: bad tool definitions, store, configuration."""


class ToolRegistrationError(SetupError):
    code = "registration_invalid"
    default_reason = "registration_invalid"

    def __init__(self, tool_id: str, message: str, *, reason: str | None = None) -> None:
        super().__init__(f'tool "{tool_id}" cannot be registered: {message}', reason=reason)
        self.tool_id = tool_id


class StoreError(SetupError):
    code = "store_unavailable"
    default_reason = "store_unavailable"


class ConfigError(SetupError):
    code = "config_invalid"
    default_reason = "config_invalid"
