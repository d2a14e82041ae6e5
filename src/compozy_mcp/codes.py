"""Error codes: the stable name of what failed, on every surface (HTTP bodies, MCP results, the
CLI's ``-o json``).

Every code compozy-mcp reports is named here once; an error class carries one (see
:mod:`compozy_mcp.errors`), the HTTP status and the CLI's exit code are looked up by it.
``Code`` is a ``StrEnum``: a member is its string, on every surface.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    CONFIG_INVALID = "config_invalid"
    CONFLICT = "conflict"
    DAEMON_UNREACHABLE = "daemon_unreachable"
    FORBIDDEN = "forbidden"
    INTERNAL_ERROR = "internal_error"
    INVALID_REQUEST = "invalid_request"
    LIMIT_EXCEEDED = "limit_exceeded"
    MCP_SERVER_UNAVAILABLE = "mcp_server_unavailable"
    MERGE_CONFLICT = "merge_conflict"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    MISDIRECTED_REQUEST = "misdirected_request"
    MODEL_NOT_FOUND = "model_not_found"
    NOT_FOUND = "not_found"
    PULL_REQUEST_UNAVAILABLE = "pull_request_unavailable"
    REASONING_EFFORT_UNSUPPORTED = "reasoning_effort_unsupported"
    REGISTRATION_INVALID = "registration_invalid"
    REQUEST_TOO_LARGE = "request_too_large"
    STORE_BUSY = "store_busy"
    STORE_UNAVAILABLE = "store_unavailable"
    TOOL_APPROVAL_REQUIRED = "tool_approval_required"
    TOOL_BACKEND_FAILED = "tool_backend_failed"
    TOOL_CONFLICT = "tool_conflict"
    TOOL_DENIED = "tool_denied"
    TOOL_INVALID_INPUT = "tool_invalid_input"
    TOOL_NOT_FOUND = "tool_not_found"
    TOOL_RESULT_PERSISTENCE_FAILED = "tool_result_persistence_failed"
    UNAUTHORIZED = "unauthorized"
    WORKTREE_UNAVAILABLE = "worktree_unavailable"
