"""Reasons: the precise condition an error reports beside its ``code``.

A reason is part of the public contract (HTTP bodies, MCP results, the CLI's ``-o json``), so
every reason compozy-mcp reports is named here once; code raises ``Reason.X`` rather than a
string literal. ``Reason`` is a ``StrEnum``: a member is its string, on every surface.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

Named = TypeVar("Named", bound=StrEnum)


class Reason(StrEnum):
    # --- tool calls: resolution, input, authorization --------------------------------------
    TOOL_UNKNOWN = "tool_unknown"
    SCHEMA_INVALID = "schema_invalid"
    INPUT_NOT_JSON = "input_not_json"
    PERMISSION_DENIED = "permission_denied"
    SCOPE_SESSION_UNKNOWN = "scope_session_unknown"
    SCOPE_MISMATCH = "scope_mismatch"
    SESSION_NOT_IN_SCOPE = "session_not_in_scope"
    SESSION_ENDED = "session_ended"
    HOOK_DENIED = "hook_denied"
    HOOK_FAILED = "hook_failed"
    #: a hook patch that does not apply to the tool (an upstream result has no title)
    PATCH_NOT_APPLICABLE = "patch_not_applicable"
    OPERATOR_ONLY = "operator_only"
    RESULT_VIEW_PINNED = "result_view_pinned"
    HANDLER_FAILED = "handler_failed"
    ARTIFACT_WRITE_FAILED = "artifact_write_failed"
    # --- sessions ---------------------------------------------------------------------------
    CONFLICT = "conflict"
    STALE_FENCE = "stale_fence"
    WRITE_CONFLICT = "write_conflict"
    SESSION_EXISTS = "session_exists"
    WORKSPACE_EXISTS = "workspace_exists"
    PROFILE_EXISTS = "profile_exists"
    SESSION_ARCHIVED = "session_archived"
    SESSION_NOT_ARCHIVED = "session_not_archived"
    SESSION_STOPPED = "session_stopped"
    TTL_EXPIRED = "ttl_expired"
    TURN_OUT_OF_RANGE = "turn_out_of_range"
    PARENT_NOT_ACTIVE = "parent_not_active"
    PARENT_STOPPED = "parent_stopped"
    STOPPED_BY_OPERATOR = "stopped_by_operator"
    PERMISSION_EXCEEDS_PARENT = "permission_exceeds_parent"
    SPAWN_DEPTH_EXCEEDED = "spawn_depth_exceeded"
    SPAWN_BUDGET_EXHAUSTED = "spawn_budget_exhausted"
    SPAWN_TTL_EXCEEDED = "spawn_ttl_exceeded"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    PROVIDER_UNKNOWN = "provider_unknown"
    MODEL_UNKNOWN = "model_unknown"
    REASONING_EFFORT_UNSUPPORTED = "reasoning_effort_unsupported"
    # --- agents, turns and interactions -------------------------------------------------------
    RUNTIME_UNSELECTED = "runtime_unselected"
    RUNTIME_NOT_READY = "runtime_not_ready"
    TURN_RUNNING = "turn_running"
    TURN_NOT_FOUND = "turn_not_found"
    INTERACTION_NOT_FOUND = "interaction_not_found"
    DECISION_NOT_OFFERED = "decision_not_offered"
    AGENT_NOT_FOUND = "agent_not_found"
    # --- limits -------------------------------------------------------------------------------
    FRAME_TOO_LARGE = "frame_too_large"
    SOURCE_TOO_LARGE = "source_too_large"
    LOOP_TOO_LARGE = "loop_too_large"
    OUTPUT_TOO_LARGE = "output_too_large"
    RUN_TOO_LARGE = "run_too_large"
    # --- worktrees and hand-off ---------------------------------------------------------------
    NOT_A_GIT_REPOSITORY = "not_a_git_repository"
    REPOSITORY_EMPTY = "repository_empty"
    GIT_MISSING = "git_missing"
    GIT_FAILED = "git_failed"
    BASE_UNKNOWN = "base_unknown"
    BRANCH_EXISTS = "branch_exists"
    BRANCH_UNKNOWN = "branch_unknown"
    WORKTREE_MISSING = "worktree_missing"
    WORKTREE_EXISTS = "worktree_exists"
    WORKTREE_DIRTY = "worktree_dirty"
    WORKTREE_IN_USE = "worktree_in_use"
    RUNTIME_BOUND = "runtime_bound"
    NO_WORKTREE = "no_worktree"
    MERGE_CONFLICT = "merge_conflict"
    NOT_FAST_FORWARD = "not_fast_forward"
    GH_MISSING = "gh_missing"
    GH_UNAUTHENTICATED = "gh_unauthenticated"
    GH_FAILED = "gh_failed"
    NO_REMOTE = "no_remote"
    PUSH_FAILED = "push_failed"
    # --- lookups ----------------------------------------------------------------------------
    NOT_FOUND = "not_found"
    SESSION_NOT_FOUND = "session_not_found"
    WORKSPACE_NOT_FOUND = "workspace_not_found"
    PROFILE_NOT_FOUND = "profile_not_found"
    SKILL_NOT_FOUND = "skill_not_found"
    TOOL_NOT_FOUND = "tool_not_found"
    ARTIFACT_NOT_FOUND = "artifact_not_found"
    SKILL_INVALID = "skill_invalid"
    HOOK_NOT_FOUND = "hook_not_found"
    WORKTREE_NOT_FOUND = "worktree_not_found"
    # --- hooks ------------------------------------------------------------------------------
    HOOK_EXISTS = "hook_exists"
    HOOK_READ_ONLY = "hook_read_only"
    HOOK_INVALID = "hook_invalid"
    # --- Host API requests ------------------------------------------------------------------
    REQUEST_INVALID = "request_invalid"
    WORKSPACE_INVALID = "workspace_invalid"
    PROFILE_INVALID = "profile_invalid"
    PATH_NOT_ABSOLUTE = "path_not_absolute"
    PATH_NOT_DIRECTORY = "path_not_directory"
    # --- HTTP requests ----------------------------------------------------------------------
    BODY_INVALID = "body_invalid"
    BODY_NOT_JSON = "body_not_json"
    BODY_MISSING = "body_missing"
    BODY_NOT_OBJECT = "body_not_object"
    INPUT_NOT_OBJECT = "input_not_object"
    BODY_TOO_LARGE = "body_too_large"
    TOKEN_MISSING = "token_missing"
    TOKEN_INVALID = "token_invalid"
    CREDENTIAL_OUT_OF_SCOPE = "credential_out_of_scope"
    ORIGIN_NOT_ALLOWED = "origin_not_allowed"
    HOST_NOT_ALLOWED = "host_not_allowed"
    ROUTE_NOT_FOUND = "route_not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    INTERNAL_ERROR = "internal_error"
    # --- the store --------------------------------------------------------------------------
    STORE_UNAVAILABLE = "store_unavailable"
    STORE_TOO_NEW = "store_too_new"
    STORE_LOCKED = "store_locked"
    # --- set-up -----------------------------------------------------------------------------
    REGISTRATION_INVALID = "registration_invalid"
    TOOL_ID_INVALID = "tool_id_invalid"
    TOOL_ID_DUPLICATE = "tool_id_duplicate"
    SELECTOR_RESERVED = "selector_reserved"
    VIEW_INVALID = "view_invalid"
    VIEW_NOT_ARRAY = "view_not_array"
    VIEW_NOT_OBJECT = "view_not_object"
    VIEW_FIELD_UNKNOWN = "view_field_unknown"
    VIEW_FOLLOW_UP_UNKNOWN = "view_follow_up_unknown"
    VIEW_FOLLOW_UP_DROPPED = "view_follow_up_dropped"
    CONFIG_INVALID = "config_invalid"
    # --- reaching a daemon ------------------------------------------------------------------
    DAEMON_UNREACHABLE = "daemon_unreachable"
    DAEMON_TIMEOUT = "daemon_timeout"
    NOT_A_DAEMON = "not_a_daemon"
    MCP_UNAVAILABLE = "mcp_unavailable"
    # --- upstream MCP servers ---------------------------------------------------------------
    MCP_CONFIG_INVALID = "mcp_config_invalid"
    MCP_SERVER_EXISTS = "mcp_server_exists"
    MCP_SERVER_UNKNOWN = "mcp_server_unknown"
    MCP_SERVER_DOWN = "mcp_server_down"
    MCP_SERVER_TIMEOUT = "mcp_server_timeout"
    MCP_SERVER_LOST = "mcp_server_lost"
    MCP_TASKS_UNSUPPORTED = "mcp_tasks_unsupported"
    # --- approvals --------------------------------------------------------------------------
    APPROVAL_REQUIRED = "approval_required"
    APPROVAL_REJECTED = "approval_rejected"
    APPROVAL_TOKEN_MISSING = "approval_token_missing"
    APPROVAL_TOKEN_EXPIRED = "approval_token_expired"
    APPROVAL_TOKEN_MISMATCH = "approval_token_mismatch"
    APPROVAL_TOKEN_REPLAYED = "approval_token_replayed"
    PERMISSION_MODE_PLAN = "permission_mode_plan"
    APPROVAL_SELF = "approval_self"
    INTERACTION_KIND_UNSUPPORTED = "interaction_kind_unsupported"
    GRANT_NOT_FOUND = "grant_not_found"
    # --- loops ------------------------------------------------------------------------------
    LOOP_INVALID = "loop_invalid"
    LOOP_NOT_FOUND = "loop_not_found"
    LOOP_NOT_IN_SCOPE = "loop_not_in_scope"
    LOOP_RUN_NOT_FOUND = "loop_run_not_found"
    LOOP_RUN_NOT_WAITING = "loop_run_not_waiting"
    LOOP_RUN_ENDED = "loop_run_ended"
    ACTION_CONTRACT_STALE = "action_contract_stale"
    GATE_REJECTED = "gate_rejected"
    TURN_NOT_COMPLETED = "turn_not_completed"
    RUN_INTERRUPTED = "run_interrupted"
    RUN_CANCELLED = "run_cancelled"
    REFERENCE_RENDER_FAILED = "reference_render_failed"


#: the reason a lookup of ``kind`` ("session", "skill", ...) that found nothing reports
NOT_FOUND_BY_KIND: dict[str, Reason] = {
    "session": Reason.SESSION_NOT_FOUND,
    "workspace": Reason.WORKSPACE_NOT_FOUND,
    "profile": Reason.PROFILE_NOT_FOUND,
    "skill": Reason.SKILL_NOT_FOUND,
    "tool": Reason.TOOL_NOT_FOUND,
    "artifact": Reason.ARTIFACT_NOT_FOUND,
    "hook": Reason.HOOK_NOT_FOUND,
    "interaction": Reason.INTERACTION_NOT_FOUND,
    "approval grant": Reason.GRANT_NOT_FOUND,
    "loop": Reason.LOOP_NOT_FOUND,
    "loop run": Reason.LOOP_RUN_NOT_FOUND,
    "worktree": Reason.WORKTREE_NOT_FOUND,
}


def named(kind: type[Named], text: str, default: Named) -> Named:
    """The member of ``kind`` (``Reason``, ``Code``) named ``text`` (a daemon's, say), or
    ``default`` when it names none this version knows."""
    try:
        return kind(text)
    except ValueError:
        return default
