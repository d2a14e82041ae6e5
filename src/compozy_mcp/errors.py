"""The one error hierarchy of compozy-mcp.

Every failure a caller can see is a :class:`CompozyError` carrying a ``code`` (a stable,
machine-readable class of failure), a ``reason`` (the precise condition, a
:class:`~compozy_mcp.reasons.Reason`) and a message built from typed arguments. Surfaces never
invent errors; each maps these in one place: ``api/responses.py`` (HTTP status and body),
``cli/reporting.py`` (exit code and stderr), ``proxy/server.py`` and ``host/server.py`` (MCP).

::

    CompozyError                        code, reason, message
    ├── ToolError                       + tool_id: anything a tool call can end in
    │   ├── ToolNotFound                tool_not_found / tool_unknown
    │   ├── ToolInvalidInput            tool_invalid_input (or invalid_request) / schema_invalid
    │   │   ├── ResultViewInvalid       the selector value is not "compact" or "full"
    │   │   ├── ResultViewNotAccepted   the selector was sent to a single-result tool
    │   │   └── LoopInvalid             a Loop definition failed lint (details.items)
    │   ├── ToolDenied                  tool_denied / permission_denied, scope_mismatch, ...
    │   │   ├── ResultViewPinned        a hook changed the view a Loop node pinned
    │   │   ├── HookDenied              a tool.pre_call hook refused the call (exit 2, deny)
    │   │   ├── HookFailed              a hook with on_error: deny failed, timed out ...
    │   │   ├── SpawnRefused            spawn budget, depth, TTL or policy exceeded
    │   │   └── SessionEnded            the calling session is stopped, archived or expired
    │   ├── ToolApprovalRequired        tool_approval_required / approval_required, approval_token_*
    │   ├── ToolConflict                tool_conflict / session_stopped, ttl_expired, ...
    │   │   ├── StaleFence              a fence the caller sent is not the record's
    │   │   ├── ActionContractStale     a Loop node's pinned contract is not the live one (loops)
    │   │   ├── WorktreeDirty           worktree_dirty: uncommitted changes, and no force
    │   │   └── MergeConflict           merge_conflict: the branches change the same lines
    │   ├── WorktreeUnavailable         worktree_unavailable / not_a_git_repository, ...
    │   ├── PullRequestUnavailable      pull_request_unavailable / gh_missing, ...
    │   ├── ResourceNotFound            not_found / session_not_found, skill_not_found, ...
    │   ├── ModelNotFound               model_not_found / provider_unknown, model_unknown
    │   ├── ReasoningEffortUnsupported  reasoning_effort_unsupported
    │   ├── ToolResultPersistenceFailed tool_result_persistence_failed
    │   ├── McpServerUnavailable        mcp_server_unavailable / mcp_server_down, _timeout, _lost
    │   └── ToolBackendFailed           tool_backend_failed / handler_failed, or the code and
    │                                   reason of the non-tool error that ended the call
    ├── AlreadyExists                   conflict / workspace_exists, profile_exists
    ├── InvalidRequest                  invalid_request: a Host API request with a bad value
    │   └── RequestBodyInvalid          the HTTP body is not JSON, not an object, missing ...
    ├── StoreBusy                       store_busy: another writer held the store; retry
    ├── LimitExceeded                   limit_exceeded / frame_too_large: a named limit reached
    ├── RemoteError                     a daemon's error payload, reproduced as it came
    ├── ApiError                        a request the HTTP API refuses before any route runs
    │   ├── Unauthorized                unauthorized / token_missing, token_invalid
    │   ├── Forbidden                   forbidden / origin_not_allowed
    │   ├── RouteNotFound               not_found / route_not_found
    │   ├── MethodNotAllowed            method_not_allowed
    │   ├── RequestTooLarge             request_too_large / body_too_large
    │   ├── HostNotAllowed              misdirected_request / host_not_allowed
    │   └── InternalError               internal_error
    └── SetupError                      raised before any call runs
        ├── ToolRegistrationError       registration_invalid / view_*, schema_*, ...
        ├── StoreError                  store_unavailable / store_too_new
        ├── ConfigError                 config_invalid
        ├── DaemonUnreachable           daemon_unreachable / daemon_timeout, not_a_daemon, ...
        └── DaemonUnauthorized          unauthorized: the daemon wants COMPOZY_TOKEN

The dispatch messages of the spec's Errors table are produced here and nowhere else.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, ClassVar

from compozy_mcp.codes import Code
from compozy_mcp.reasons import NOT_FOUND_BY_KIND, Reason, named


def scrub(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so that a message that echoes what
    a caller sent can always be encoded and reach the caller."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


REDACTED_INPUT_MESSAGE = "invalid tool request"
REDACTED_DENIAL_MESSAGE = "tool invocation denied"


class CompozyError(Exception):
    """Base of every error compozy-mcp reports.

    ``code`` is the class's unless an instance is given another (a tool that reports input
    errors as ``invalid_request``, a daemon's error reproduced by a client).
    """

    code: Code = Code.INTERNAL_ERROR
    default_reason: ClassVar[Reason] = Reason.INTERNAL_ERROR

    def __init__(
        self, message: str, *, reason: Reason | None = None, code: Code | None = None
    ) -> None:
        message = scrub(message)
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        if code is not None:
            self.code = code

    def payload(self, *, redact: bool) -> dict[str, Any]:
        """The ``{"code", "reason", "message", ...}`` object every surface reports.

        ``redact`` is for the CLI and HTTP/UDS, which replace input-error and denial messages
        (spec, Errors); MCP reports the dispatch message.
        """
        return {"code": str(self.code), "reason": str(self.reason), "message": self.message}

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, reason={self.reason!r}, {self.message!r})"
        )


# --- tool calls -----------------------------------------------------------------------------


class ToolError(CompozyError):
    """A failure of one tool call. ``tool_id`` names the tool that was called."""

    code = Code.TOOL_BACKEND_FAILED
    #: the message CLI and HTTP surfaces print instead of the dispatch message, if any
    redacted_as: ClassVar[str | None] = None
    #: whether ``details`` are for the caller to read even where the message is redacted
    #: (redaction is for the dispatch message, not for findings the author must act on)
    details_survive_redaction: ClassVar[bool] = False

    def __init__(
        self,
        tool_id: str,
        message: str,
        *,
        reason: Reason | None = None,
        code: Code | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, reason=reason, code=code)
        self.tool_id = scrub(tool_id)
        self.details: dict[str, Any] = dict(details or {})

    def payload(self, *, redact: bool) -> dict[str, Any]:
        redacted = redact and self.redacted_as is not None
        body = super().payload(redact=redact)
        if redacted:
            body["message"] = self.redacted_as
        body["tool_id"] = self.tool_id
        if self.details and (not redacted or self.details_survive_redaction):
            body["details"] = self.details
        return body


class ToolNotFound(ToolError):
    code = Code.TOOL_NOT_FOUND
    default_reason = Reason.TOOL_UNKNOWN

    def __init__(self, tool_id: str) -> None:
        super().__init__(tool_id, f'tool "{tool_id}" is not registered')


class ToolInvalidInput(ToolError):
    """The input of a call is not acceptable; the tool did not run."""

    code = Code.TOOL_INVALID_INPUT
    default_reason = Reason.SCHEMA_INVALID
    redacted_as = REDACTED_INPUT_MESSAGE

    def __init__(
        self,
        tool_id: str,
        message: str,
        *,
        reason: Reason | None = None,
        code: Code | None = None,
        field: str | None = None,
    ) -> None:
        # Tools that report input errors as ``invalid_request`` keep that code (spec, Errors).
        super().__init__(tool_id, message, reason=reason, code=code)
        self.field = field

    @classmethod
    def for_field(
        cls, tool_id: str, field: str, problem: str, *, code: Code | None = None
    ) -> ToolInvalidInput:
        """``tool "<id>" input "<field>" <problem>``: the shape every field error takes."""
        return cls(tool_id, f'tool "{tool_id}" input "{field}" {problem}', code=code, field=field)


class ResultViewInvalid(ToolInvalidInput):
    """Spec, Errors rows 1 and 2: an unknown or non-string ``result_view``."""

    def __init__(self, tool_id: str, *, code: Code | None = None) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" input "result_view" must be one of "compact", "full"',
            code=code,
            field="result_view",
        )


class ResultViewNotAccepted(ToolInvalidInput):
    """Spec, Errors row 3: ``result_view`` sent to a single-result tool."""

    def __init__(self, tool_id: str, *, code: Code | None = None) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" returns a single result and does not accept "result_view"',
            code=code,
            field="result_view",
        )


class ToolDenied(ToolError):
    code = Code.TOOL_DENIED
    default_reason = Reason.PERMISSION_DENIED
    redacted_as = REDACTED_DENIAL_MESSAGE


class ResultViewPinned(ToolDenied):
    """Spec, Errors row 6: a hook changed the view that the caller pinned."""

    def __init__(self, tool_id: str, pinned: str) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" result view is pinned to "{pinned}" by the caller',
            reason=Reason.RESULT_VIEW_PINNED,
        )


#: characters of a hook's own reason (its stderr, its deny_reason) a denial message quotes
HOOK_REASON_CHARS = 500


class HookDenied(ToolDenied):
    """A ``tool.pre_call`` hook refused the call: it exited with the deny code, returned
    ``{"deny": true}``, or patched the tool id (which no hook may change)."""

    def __init__(self, tool_id: str, hook_id: str, because: str) -> None:
        because = " ".join(because.split())[:HOOK_REASON_CHARS] or "no reason given"
        super().__init__(
            tool_id,
            f'tool "{tool_id}" call denied by hook "{hook_id}": {because}',
            reason=Reason.HOOK_DENIED,
            details={"hook_id": hook_id},
        )
        self.hook_id = hook_id


class HookFailed(ToolDenied):
    """A ``tool.pre_call`` hook whose ``on_error`` is ``deny`` failed (exited with an error,
    timed out, printed something that is not a patch), so the call does not run."""

    def __init__(self, tool_id: str, hook_id: str, failure: str) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" call denied: hook "{hook_id}" {failure} and its on_error is "deny"',
            reason=Reason.HOOK_FAILED,
            details={"hook_id": hook_id},
        )
        self.hook_id = hook_id


class SpawnRefused(ToolDenied):
    """A spawn that the parent's budget, depth, TTL or permission policy does not allow."""


class SessionEnded(ToolDenied):
    """The managed session making the call has ended: its access ended with it."""

    def __init__(self, tool_id: str, session_id: str, how: str, at: str) -> None:
        super().__init__(
            tool_id,
            f'session "{session_id}" has ended ({how} at {at}); it can make no more calls',
            reason=Reason.SESSION_ENDED,
            details={"session_id": session_id, "ended": how, "at": at},
        )


class ToolApprovalRequired(ToolError):
    """The call needs a person's approval and has none yet (reason ``approval_required``, with
    the pending interaction in ``details``), or the one-shot token it presented does not hold
    (``approval_token_missing``, ``_expired``, ``_mismatch``, ``_replayed``). The tool did not
    run. Not redacted: the message says what to do next (HTTP 202, as upstream)."""

    code = Code.TOOL_APPROVAL_REQUIRED
    default_reason = Reason.APPROVAL_REQUIRED


class ToolConflict(ToolError):
    code = Code.TOOL_CONFLICT
    default_reason = Reason.CONFLICT


class StaleFence(ToolConflict):
    """A fence in the input is not the record's current value; nothing changed."""

    def __init__(self, tool_id: str, session_id: str, fence: str, sent: int, current: int) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" fence "{fence}" is stale: the call sent {sent}, '
            f'session "{session_id}" is at {current}; read the session and retry',
            reason=Reason.STALE_FENCE,
            details={"fence": fence, "sent": sent, "current": current, "session_id": session_id},
        )


class LoopInvalid(ToolInvalidInput):
    """A Loop definition failed lint: it is neither stored nor started. ``details.items``
    holds every lint item; the message lists the errors as the CLI prints them. The items
    reach every surface: the CLI and HTTP/UDS redact the message, not the lint findings."""

    default_reason = Reason.LOOP_INVALID
    details_survive_redaction = True

    def __init__(self, tool_id: str, items: list[dict[str, Any]]) -> None:
        errors = [item for item in items if item["severity"] == "error"]
        listed = "\n".join(f"error: {item['code']}\n{item['message']}" for item in errors)
        super().__init__(
            tool_id,
            f"the Loop definition has {len(errors)} lint error"
            f"{'' if len(errors) == 1 else 's'}; it was not started:\n{listed}",
        )
        self.details = {"items": items}


class ActionContractStale(ToolConflict):
    """A tool node's pinned contract no longer matches the live descriptor."""

    default_reason = Reason.ACTION_CONTRACT_STALE

    def __init__(self, node_id: str, tool_id: str, pinned: Mapping[str, Any], live: str) -> None:
        view = pinned.get("view")
        which = f"the {view} contract" if view else "the contract"
        super().__init__(
            tool_id,
            f'node "{node_id}" pinned {which} of {tool_id} (input {_short(pinned)}), which no '
            f"longer matches the live descriptor ({live}); start a new run to use the current "
            "contract",
            details={"node_id": node_id, "pinned": dict(pinned)},
        )


class WorktreeDirty(ToolConflict):
    """A worktree holds uncommitted changes and the operation would have to take them along;
    nothing changed. ``details.files`` lists them (the first 50)."""

    default_reason = Reason.WORKTREE_DIRTY

    def __init__(self, tool_id: str, where: str, files: list[str], advice: str) -> None:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        super().__init__(
            tool_id,
            f"{where} has uncommitted changes ({shown}); {advice}",
            details={"files": files[:50], "count": len(files)},
        )


class MergeConflict(ToolConflict):
    """Merging a session's branch would conflict; nothing changed. ``details.files`` names
    the files in conflict."""

    code = Code.MERGE_CONFLICT
    default_reason = Reason.MERGE_CONFLICT

    def __init__(self, tool_id: str, branch: str, target: str, files: list[str]) -> None:
        super().__init__(
            tool_id,
            f'merging branch "{branch}" into "{target}" conflicts in {len(files)} file'
            f"{'' if len(files) == 1 else 's'}: {', '.join(files[:10])}"
            f"{' ...' if len(files) > 10 else ''}; nothing was changed",
            details={"files": files, "branch": branch, "into": target},
        )


class WorktreeUnavailable(ToolError):
    """A session cannot have (or use) a git worktree here: the workspace is not a git
    repository, has no commit yet, git is missing, the base is unknown, or the directory
    vanished. The message says which and what to do."""

    code = Code.WORKTREE_UNAVAILABLE
    default_reason = Reason.NOT_A_GIT_REPOSITORY


class PullRequestUnavailable(ToolError):
    """A pull request cannot be opened from here (the ``gh`` CLI is missing or not logged
    in, or there is no remote). ``details.commands`` are the commands that open it by hand."""

    code = Code.PULL_REQUEST_UNAVAILABLE
    default_reason = Reason.GH_MISSING

    def __init__(self, tool_id: str, message: str, *, reason: Reason, commands: list[str]) -> None:
        super().__init__(
            tool_id,
            f"{message}; to open it by hand: {'; '.join(commands)}",
            reason=reason,
            details={"commands": commands},
        )


def _short(pinned: Mapping[str, Any]) -> str:
    inp = str(pinned.get("input_schema_digest", ""))[:12]
    out = str(pinned.get("output_schema_digest", ""))[:12]
    return f"{inp}…, output {out}…"


class ResourceNotFound(ToolError):
    code = Code.NOT_FOUND
    default_reason = Reason.NOT_FOUND

    def __init__(self, tool_id: str, kind: str, ident: str) -> None:
        super().__init__(
            tool_id,
            f'{kind} "{ident}" does not exist',
            reason=NOT_FOUND_BY_KIND.get(kind, Reason.NOT_FOUND),
        )
        self.kind = kind
        self.ident = ident


class ModelNotFound(ToolError):
    code = Code.MODEL_NOT_FOUND
    default_reason = Reason.MODEL_UNKNOWN


class ReasoningEffortUnsupported(ToolError):
    code = Code.REASONING_EFFORT_UNSUPPORTED
    default_reason = Reason.REASONING_EFFORT_UNSUPPORTED


class ToolResultPersistenceFailed(ToolError):
    code = Code.TOOL_RESULT_PERSISTENCE_FAILED
    default_reason = Reason.ARTIFACT_WRITE_FAILED


class McpServerUnavailable(ToolError):
    """A call to an upstream MCP server's tool that the server could not take: it is not
    connected (starting, or restarting after a failure), it did not answer in time, or it went
    away mid-call. The message names the server; the same call may be retried later."""

    code = Code.MCP_SERVER_UNAVAILABLE
    default_reason = Reason.MCP_SERVER_DOWN

    def __init__(
        self, tool_id: str, server: str, problem: str, *, reason: Reason | None = None
    ) -> None:
        super().__init__(
            tool_id,
            f'tool "{tool_id}" failed: MCP server "{server}" {problem}',
            reason=reason,
            details={"server": server},
        )
        self.server = server


class ToolBackendFailed(ToolError):
    code = Code.TOOL_BACKEND_FAILED
    default_reason = Reason.HANDLER_FAILED


# --- requests that are not tool calls -------------------------------------------------------


class AlreadyExists(CompozyError):
    """A Host API request registering what is already registered: a workspace at the same
    path, a profile of the same name. Nothing changed."""

    code = Code.CONFLICT
    default_reason = Reason.CONFLICT


class InvalidRequest(CompozyError):
    """A Host API request that is not a tool call (registering a workspace or a profile) with a
    value the caller must fix. Its message only echoes what the caller sent, so it is reported
    as it is (tool input errors are redacted instead)."""

    code = Code.INVALID_REQUEST
    default_reason = Reason.REQUEST_INVALID


class RequestBodyInvalid(InvalidRequest):
    """An HTTP request body that is not what the route takes (not JSON, not an object...)."""

    default_reason = Reason.BODY_INVALID


class StoreBusy(CompozyError):
    """Another writer held the store's write lock past the bounded wait. Nothing changed; the
    same call can be retried (HTTP 503 with ``Retry-After``)."""

    code = Code.STORE_BUSY
    default_reason = Reason.STORE_LOCKED
    #: seconds a client should wait before it retries
    retry_after_seconds: ClassVar[int] = 1


class LimitExceeded(CompozyError):
    """Something would have grown past one of the documented limits; it was stopped there.
    The message says what, names the limit and its value, and the setting that raises it."""

    code = Code.LIMIT_EXCEEDED
    default_reason = Reason.FRAME_TOO_LARGE

    def __init__(
        self,
        what: str,
        *,
        limit: str,
        value: int,
        setting: str | None,
        reason: Reason | None = None,
    ) -> None:
        raise_it = f"; raise it with {setting}" if setting else ""
        super().__init__(f"{what} (limit {limit}: {value}){raise_it}", reason=reason)
        self.limit = limit
        self.value = value
        self.setting = setting

    def payload(self, *, redact: bool) -> dict[str, Any]:
        body = super().payload(redact=redact)
        body["limit"] = {"name": self.limit, "value": self.value, "setting": self.setting}
        return body


class RemoteError(CompozyError):
    """An error a daemon reported, reproduced verbatim: its payload is already redacted."""

    def __init__(self, payload: Mapping[str, Any], status: int) -> None:
        super().__init__(
            str(payload.get("message", "")),
            reason=named(Reason, str(payload.get("reason", "")), Reason.INTERNAL_ERROR),
            code=named(Code, str(payload.get("code", "")), Code.INTERNAL_ERROR),
        )
        self._payload = dict(payload)
        self.status = status
        self.tool_id = str(payload.get("tool_id", ""))

    def payload(self, *, redact: bool) -> dict[str, Any]:
        return dict(self._payload)


# --- the HTTP API's own refusals --------------------------------------------------------------


class ApiError(CompozyError):
    """A request the HTTP API refuses before any operation runs."""


class Unauthorized(ApiError):
    code = Code.UNAUTHORIZED
    default_reason = Reason.TOKEN_MISSING


class Forbidden(ApiError):
    code = Code.FORBIDDEN
    default_reason = Reason.ORIGIN_NOT_ALLOWED


class RouteNotFound(ApiError):
    code = Code.NOT_FOUND
    default_reason = Reason.ROUTE_NOT_FOUND


class MethodNotAllowed(ApiError):
    code = Code.METHOD_NOT_ALLOWED
    default_reason = Reason.METHOD_NOT_ALLOWED


class RequestTooLarge(ApiError):
    code = Code.REQUEST_TOO_LARGE
    default_reason = Reason.BODY_TOO_LARGE


class HostNotAllowed(ApiError):
    code = Code.MISDIRECTED_REQUEST
    default_reason = Reason.HOST_NOT_ALLOWED


class InternalError(ApiError):
    code = Code.INTERNAL_ERROR
    default_reason = Reason.INTERNAL_ERROR

    def __init__(self, message: str, *, error_id: str | None = None) -> None:
        super().__init__(message)
        #: the id the daemon's log line of this failure carries, so that one can be found
        self.error_id = error_id

    def payload(self, *, redact: bool) -> dict[str, Any]:
        body = super().payload(redact=redact)
        if self.error_id is not None:
            body["details"] = {"error_id": self.error_id}
        return body

    @classmethod
    def logged(cls) -> InternalError:
        """An unexpected failure, with a fresh error id to log its traceback under."""
        error_id = "err-" + secrets.token_hex(4)
        return cls(f"internal error {error_id}; see the daemon's log", error_id=error_id)


# --- set-up ---------------------------------------------------------------------------------


class SetupError(CompozyError):
    """A problem found before any call runs: bad tool definitions, store, configuration."""


class ToolRegistrationError(SetupError):
    code = Code.REGISTRATION_INVALID
    default_reason = Reason.REGISTRATION_INVALID

    def __init__(self, tool_id: str, message: str, *, reason: Reason | None = None) -> None:
        super().__init__(f'tool "{tool_id}" cannot be registered: {message}', reason=reason)
        self.tool_id = tool_id


class StoreError(SetupError):
    code = Code.STORE_UNAVAILABLE
    default_reason = Reason.STORE_UNAVAILABLE


class ConfigError(SetupError):
    code = Code.CONFIG_INVALID
    default_reason = Reason.CONFIG_INVALID


class DaemonUnreachable(SetupError):
    code = Code.DAEMON_UNREACHABLE
    default_reason = Reason.DAEMON_UNREACHABLE


class DaemonUnauthorized(SetupError):
    """The daemon wants a bearer token (``COMPOZY_TOKEN``) and did not get the right one."""

    code = Code.UNAUTHORIZED
    default_reason = Reason.TOKEN_MISSING
