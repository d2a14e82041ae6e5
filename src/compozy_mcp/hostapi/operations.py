"""Every Host API operation, declared once (see :mod:`.operation` for what a declaration says).

Operations that name a ``tool_id`` are that native tool called as the operator through the one
dispatcher (hooks, approvals, policy and the audit log see them as they see an agent's call);
the others are answered by the host itself (:class:`~.local.LocalHost` has a method of the
operation's name). The order is the routes' matching order within a path's prefix.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.hostapi import _shapes as s
from compozy_mcp.hostapi.operation import Body, Cli, Kind, Operation, Param

STRING: dict[str, Any] = {"type": "string"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}


def _limit(maximum: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": maximum}


# --- tools: the catalog as the caller (a managed session, with the header) sees it -----------

LIST_TOOLS: Operation[s.ToolList] = Operation(
    "list_tools",
    "GET",
    "/tools",
    "listTools",
    "The tools the caller may use, as ToolDescriptorPayloads.",
    as_session=True,
    response="ToolList",
    cli=Cli("tool list", "list the native tools"),
)
SEARCH_TOOLS: Operation[s.ToolFound] = Operation(
    "search_tools",
    "GET",
    "/tools/search",
    "searchTools",
    "Tools matching the query's words, best match first.",
    input_of="compozy__tool_search",
    query=(
        Param("q", field="query", description="The words to search for.", required=True),
        Param("limit", Kind.INTEGER, "At most this many tools (default 10)."),
    ),
    as_session=True,
    response="ToolSearch",
    errors=(400,),
    cli=Cli("tool search", "search the native tools"),
)
INVOKE: Operation[s.InvokeResponse] = Operation(
    "invoke",
    "POST",
    "/tools/{tool_id}/invoke",
    "invoke",
    "Invoke a tool through the one dispatcher.",
    body=Body.OBJECT,
    body_fields=("input", "approval_token"),
    as_session=True,
    response="InvokeResponse",
    errors=(202, 400, 403, 404, 409, 413, 422, 507),
    cli=Cli("tool invoke", "invoke a tool with a JSON input"),
)
MINT_APPROVAL: Operation[s.ApprovalResponse] = Operation(
    "mint_approval",
    "POST",
    "/tools/{tool_id}/approvals",
    "mintApproval",
    "Mint a one-shot approval token for one call of the tool by a session, from its input or "
    "input_digest (computed without result_view). Operator only; the token is single-use and "
    "expires (default 120 s).",
    body=Body.OBJECT,
    as_session=True,
    status=201,
    request="ApprovalMintRequest",
    response="ApprovalResponse",
    errors=(400, 403, 404, 413),
    cli=Cli("approvals mint", "mint a one-shot approval token for one call"),
)
TOOL_INFO: Operation[s.ToolInfo] = Operation(
    "tool_info",
    "GET",
    "/tools/{tool_id}",
    "toolInfo",
    "One tool's descriptor, with output_views for tools with views.",
    as_session=True,
    response="ToolInfo",
    errors=(404,),
    cli=Cli("tool info", "show a tool's contract"),
)

# --- sessions: the complete SessionPayload, never a view ------------------------------------

SESSION_LIST = "compozy__session_list"

LIST_SESSIONS: Operation[s.SessionPage] = Operation(
    "list_sessions",
    "GET",
    "/sessions",
    "listSessions",
    "Sessions, newest first, as full SessionPayloads; follow next_cursor.",
    tool_id=SESSION_LIST,
    query=(
        Param("limit", Kind.INTEGER),
        Param("cursor"),
        Param("workspace_id"),
        Param("state"),
        Param("archived", Kind.BOOLEAN),
        Param("parent_session_id"),
        Param("agent_name"),
    ),
    response="SessionPage",
    errors=(400,),
    cli=Cli("session list", "list sessions, newest first"),
)
CREATE_SESSION: Operation[s.SessionResponse] = Operation(
    "create_session",
    "POST",
    "/sessions",
    "createSession",
    "Create a session; the body is the compozy__session_create input.",
    tool_id="compozy__session_create",
    body=Body.OBJECT,
    status=201,
    request="SessionCreateRequest",
    response="SessionResponse",
    errors=(400, 404, 409, 413, 422),
    cli=Cli("session create", "create a session"),
)
ARCHIVE_SESSION: Operation[s.SessionResponse] = Operation(
    "archive_session",
    "POST",
    "/sessions/{session_id}/archive",
    "archiveSession",
    "Archive a session (idempotent); no request body.",
    tool_id="compozy__session_archive",
    response="SessionResponse",
    errors=(404,),
    cli=Cli("session archive", "archive a session"),
)
UNARCHIVE_SESSION: Operation[s.SessionResponse] = Operation(
    "unarchive_session",
    "POST",
    "/sessions/{session_id}/unarchive",
    "unarchiveSession",
    "Return an archived session to the board (idempotent); no request body.",
    tool_id="compozy__session_unarchive",
    response="SessionResponse",
    errors=(404,),
    cli=Cli("session unarchive", "return an archived session to the board"),
)
PROMPT_SESSION: Operation[s.TurnResponse] = Operation(
    "prompt_session",
    "POST",
    "/sessions/{session_id}/prompt",
    "promptSession",
    "Send a prompt as the session's next turn (binding its agent when none runs); with wait, "
    "answer once the turn ended or timeout_seconds passed.",
    tool_id="compozy__session_prompt",
    body=Body.OBJECT,
    body_fields=("prompt", "wait", "timeout_seconds"),
    request="PromptRequest",
    response="TurnResponse",
    errors=(400, 404, 409, 413, 422),
    cli=Cli("session prompt", "send a prompt to the session's agent and follow its turn"),
)
CANCEL_TURN: Operation[s.Payload] = Operation(
    "cancel_turn",
    "POST",
    "/sessions/{session_id}/cancel",
    "cancelTurn",
    "Cancel the session's running turn and every queued one.",
    tool_id="compozy__session_prompt_cancel",
    views=False,
    response="CancelResponse",
    errors=(404,),
    cli=Cli("session cancel", "cancel the running turn and the queued ones"),
)
SESSION_HISTORY: Operation[s.TurnPage] = Operation(
    "session_history",
    "GET",
    "/sessions/{session_id}/history",
    "sessionHistory",
    "The session's turns, oldest first, complete; follow next_cursor.",
    tool_id="compozy__session_history",
    query=(
        Param("cursor", Kind.INTEGER, "next_cursor of the previous page.", schema=COUNT),
        Param("limit", Kind.INTEGER, "Turns.", schema=_limit(100)),
    ),
    response="TurnPage",
    errors=(400, 404),
    cli=Cli("session history", "show a session's turns, oldest first"),
)
SESSION_EVENTS: Operation[s.EventPage] = Operation(
    "session_events",
    "GET",
    "/sessions/{session_id}/events",
    "sessionEvents",
    "The raw update stream of the session's agent since cursor. With Accept: "
    "text/event-stream, a Server-Sent Events stream that goes on live (each event's id is its "
    "seq; Last-Event-ID resumes; until=turn_end ends it after the next turn_ended).",
    tool_id="compozy__session_events",
    query=(
        Param("cursor", Kind.INTEGER, "next_cursor of the previous page.", schema=COUNT),
        Param("limit", Kind.INTEGER, "Events.", schema=_limit(500)),
        Param(
            "until",
            description="Streams: end after a turn_ended.",
            schema={"const": "turn_end"},
            stream_only=True,
        ),
    ),
    response="EventPage",
    errors=(400, 404),
)
APPROVE_SESSION: Operation[s.Payload] = Operation(
    "approve_session",
    "POST",
    "/sessions/{session_id}/approve",
    "approveSession",
    "Answer a pending permission request with one of the options the agent offered.",
    tool_id="compozy__session_approve",
    views=False,
    body=Body.OBJECT,
    body_fields=("interaction_id", "decision"),
    request="ApproveRequest",
    response="ApproveResponse",
    errors=(400, 404, 409),
    cli=Cli(
        "session approve",
        "answer a pending interaction: an approval prompt or the agent's permission request",
    ),
)

# --- worktrees and hand-off -------------------------------------------------------------------

SESSION_DIFF: Operation[s.Payload] = Operation(
    "session_diff",
    "GET",
    "/sessions/{session_id}/diff",
    "sessionDiff",
    "What the session changed in its worktree against the commit the worktree was made from, "
    "uncommitted changes included, with the patch.",
    tool_id="compozy__session_diff",
    response="SessionDiff",
    errors=(404, 422),
    cli=Cli("session diff", "what a session changed in its worktree (the patch, or --stat)"),
)
MERGE_SESSION: Operation[s.Payload] = Operation(
    "merge_session",
    "POST",
    "/sessions/{session_id}/merge",
    "mergeSession",
    "Merge the session's work into a branch (default: the worktree's base branch); a conflict "
    "(409 merge_conflict) changes nothing.",
    tool_id="compozy__session_merge",
    views=False,
    body=Body.OPTIONAL,
    body_fields=("into", "mode", "message"),
    request="MergeRequest",
    response="MergeResponse",
    errors=(400, 404, 409, 422),
    cli=Cli("session merge", "merge a session's work into a branch"),
)
OPEN_PULL_REQUEST: Operation[s.Payload] = Operation(
    "open_pull_request",
    "POST",
    "/sessions/{session_id}/pull-request",
    "openPullRequest",
    "Push the session's branch and open its pull request with gh; without gh, 422 "
    "pull_request_unavailable with the commands to run.",
    tool_id="compozy__session_pull_request",
    views=False,
    body=Body.OPTIONAL,
    body_fields=("into", "title", "body", "draft", "remote"),
    request="PullRequestRequest",
    response="PullRequestResponse",
    errors=(400, 404, 409, 422),
    cli=Cli("session pr", "push a session's branch and open a pull request (gh)"),
)
SESSION_STATUS: Operation[s.SessionResponse] = Operation(
    "session_status",
    "GET",
    "/sessions/{session_id}",
    "sessionStatus",
    "One session's full SessionPayload.",
    tool_id="compozy__session_status",
    response="SessionResponse",
    errors=(404,),
    cli=Cli("session status", "show one session"),
)
DELETE_SESSION: Operation[s.Deleted] = Operation(
    "delete_session",
    "DELETE",
    "/sessions/{session_id}",
    "deleteSession",
    "Delete an archived session and its descendants, with their transcripts and the artifacts "
    "only they stored.",
    tool_id="compozy__session_delete",
    views=False,
    response="DeleteResponse",
    errors=(404, 409),
    cli=Cli("session delete", "delete an archived session and its descendants, for good"),
)
LIST_WORKTREES: Operation[s.WorktreeList] = Operation(
    "list_worktrees",
    "GET",
    "/worktrees",
    "listWorktrees",
    "The worktrees sessions work in, newest first.",
    tool_id="compozy__worktree_list",
    query=(
        Param("workspace_id", description="Only this workspace's worktrees."),
        Param("session_id", description="Only this session's worktrees."),
        Param("include_removed", Kind.BOOLEAN, "Removed ones too."),
        Param("limit", Kind.INTEGER, "At most.", schema=_limit(500)),
    ),
    response="WorktreeList",
    errors=(400,),
    cli=Cli("worktree list", "list worktrees, newest first"),
)
CREATE_WORKTREE: Operation[s.WorktreeResponse] = Operation(
    "create_worktree",
    "POST",
    "/worktrees",
    "createWorktree",
    "Give a session without one a worktree of its own.",
    tool_id="compozy__worktree_create",
    views=False,
    body=Body.OBJECT,
    body_fields=("session_id", "branch", "base"),
    status=201,
    request="WorktreeCreateRequest",
    response="WorktreeResponse",
    errors=(400, 404, 409, 413, 422),
    cli=Cli("worktree create", "give a session without one a worktree of its own"),
)
WORKTREE_INFO: Operation[s.WorktreeResponse] = Operation(
    "worktree_info",
    "GET",
    "/worktrees/{worktree_id}",
    "worktreeInfo",
    "One worktree, with its checked-out commit and uncommitted files.",
    tool_id="compozy__worktree_inspect",
    response="WorktreeResponse",
    errors=(404,),
    cli=Cli("worktree inspect", "show one worktree, with its uncommitted files"),
)
REMOVE_WORKTREE: Operation[s.WorktreeResponse] = Operation(
    "remove_worktree",
    "DELETE",
    "/worktrees/{worktree_id}",
    "removeWorktree",
    "Remove a worktree's directory (its branch stays); uncommitted changes refuse it (409 "
    "worktree_dirty) unless force=true commits them first.",
    tool_id="compozy__worktree_remove",
    views=False,
    query=(Param("force", Kind.BOOLEAN, "Commit uncommitted changes first."),),
    response="WorktreeResponse",
    errors=(400, 404, 409, 422),
    cli=Cli("worktree remove", "remove a worktree's directory (its branch stays; nothing is lost)"),
)

# --- agents, the store, workspaces, profiles, MCP servers ------------------------------------

LIST_AGENTS: Operation[s.AgentList] = Operation(
    "list_agents",
    "GET",
    "/agents",
    "listAgents",
    "The agents a runtime can select (built-in and from agents.yaml), with their models and "
    "efforts, and the problems of agent files.",
    tool_id="compozy__agent_list",
    query=(
        Param("workspace_id", description="Include this workspace's agents.yaml.", schema=STRING),
    ),
    response="AgentList",
    errors=(404,),
    cli=Cli("agent list", "list agents with their models"),
)
VACUUM_STORE: Operation[s.Upkeep] = Operation(
    "vacuum_store",
    "POST",
    "/store/vacuum",
    "vacuumStore",
    "Stop expired sessions, delete expired artifacts and rebuild the database so that deleted "
    "content gives its space back.",
    response="UpkeepResponse",
    cli=Cli(
        "store vacuum", "stop expired sessions, delete expired artifacts, rebuild the database"
    ),
)
LIST_WORKSPACES: Operation[s.WorkspaceList] = Operation(
    "list_workspaces",
    "GET",
    "/workspaces",
    "listWorkspaces",
    "The registered workspaces, oldest (the default) first.",
    response="WorkspaceList",
    cli=Cli("workspace list", "list workspaces"),
)
ADD_WORKSPACE: Operation[s.WorkspaceResponse] = Operation(
    "add_workspace",
    "POST",
    "/workspaces",
    "addWorkspace",
    "Register a directory of the daemon's machine as a workspace.",
    body=Body.OBJECT,
    status=201,
    request="WorkspaceAddRequest",
    response="WorkspaceResponse",
    errors=(400, 409, 413),
    cli=Cli("workspace add", "register a directory as a workspace"),
)
TRUST_WORKSPACE: Operation[s.WorkspaceResponse] = Operation(
    "trust_workspace",
    "POST",
    "/workspaces/{workspace_id}/trust",
    "trustWorkspace",
    "Trust a workspace: its .compozy/hooks.yaml runs from the next call on (the hooks file of a "
    "workspace that is not trusted never runs).",
    response="WorkspaceResponse",
    errors=(404,),
    cli=Cli(
        "workspace trust",
        "let a workspace's .compozy/hooks.yaml run (hooks of an untrusted one never run)",
    ),
)
DISTRUST_WORKSPACE: Operation[s.WorkspaceResponse] = Operation(
    "distrust_workspace",
    "DELETE",
    "/workspaces/{workspace_id}/trust",
    "distrustWorkspace",
    "No longer trust a workspace: its .compozy/hooks.yaml stops running.",
    response="WorkspaceResponse",
    errors=(404,),
)
LIST_PROFILES: Operation[s.ProfileList] = Operation(
    "list_profiles",
    "GET",
    "/profiles",
    "listProfiles",
    "The profiles, oldest (the default) first.",
    response="ProfileList",
    cli=Cli("profile list", "list profiles"),
)
ADD_PROFILE: Operation[s.ProfileResponse] = Operation(
    "add_profile",
    "POST",
    "/profiles",
    "addProfile",
    "Create a profile (how sessions are presented).",
    body=Body.OBJECT,
    status=201,
    request="ProfileAddRequest",
    response="ProfileResponse",
    errors=(400, 409, 413),
    cli=Cli("profile add", "create a profile"),
)
LIST_MCP_SERVERS: Operation[s.ServerList] = Operation(
    "list_mcp_servers",
    "GET",
    "/mcp/servers",
    "listMcpServers",
    "The upstream MCP servers the daemon connects: each one's state, tool count, restarts and "
    "last error.",
    response="McpServerList",
)

# --- loops: the compozy__loop_* tools, their full records -----------------------------------

VALIDATE_LOOP: Operation[s.LoopValidation] = Operation(
    "validate_loop",
    "POST",
    "/loops/validate",
    "validateLoop",
    "Lint a Loop definition (compozy__loop_validate): every item, with line and column when "
    "the definition is text.",
    tool_id="compozy__loop_validate",
    views=False,
    redact=True,
    body=Body.OBJECT,
    request="LoopValidateRequest",
    response="LoopValidation",
    errors=(400, 413),
    cli=Cli("loop validate", "lint a definition (YAML or JSON; - for stdin)"),
)
LIST_LOOPS: Operation[s.LoopList] = Operation(
    "list_loops",
    "GET",
    "/loops",
    "listLoops",
    "Stored Loops, the latest version of each.",
    tool_id="compozy__loop_list",
    redact=True,
    response="LoopList",
    cli=Cli("loop list", "stored loops"),
)
CREATE_LOOP: Operation[s.LoopResponse] = Operation(
    "create_loop",
    "POST",
    "/loops",
    "createLoop",
    "Lint and store a Loop definition (a new version with a stored loop_id); lint errors "
    "answer 400 loop_invalid with every item in details.",
    tool_id="compozy__loop_create",
    redact=True,
    body=Body.OBJECT,
    status=201,
    request="LoopCreateRequest",
    response="LoopResponse",
    errors=(400, 413),
    cli=Cli("loop create", "lint and store a definition (a new version)"),
)
START_LOOP_RUN: Operation[s.LoopRunResponse] = Operation(
    "start_loop_run",
    "POST",
    "/loops/{loop_id}/runs",
    "startLoopRun",
    "Start a run of a stored Loop (linted again before it starts).",
    tool_id="compozy__loop_run",
    redact=True,
    body=Body.OBJECT,
    status=201,
    request="LoopRunRequest",
    response="LoopRunResponse",
    errors=(400, 403, 404, 413),
    cli=Cli("loop run", "lint and start a run, and follow it"),
)
LOOP_INFO: Operation[s.LoopResponse] = Operation(
    "loop_info",
    "GET",
    "/loops/{loop_id}",
    "loopInfo",
    "One stored Loop version (default: the latest).",
    tool_id="compozy__loop_inspect",
    redact=True,
    query=(Param("version", Kind.INTEGER, "The version."),),
    response="LoopResponse",
    errors=(400, 404),
    cli=Cli("loop inspect", "one stored loop"),
)
LIST_LOOP_RUNS: Operation[s.LoopRunPage] = Operation(
    "list_loop_runs",
    "GET",
    "/loop-runs",
    "listLoopRuns",
    "Loop runs, newest first; follow next_cursor.",
    tool_id="compozy__loop_runs",
    redact=True,
    query=(Param("loop_id"), Param("status"), Param("limit", Kind.INTEGER), Param("cursor")),
    response="LoopRunPage",
    errors=(400,),
    cli=Cli("loop runs", "runs, newest first"),
)
CANCEL_LOOP_RUN: Operation[s.LoopRunResponse] = Operation(
    "cancel_loop_run",
    "POST",
    "/loop-runs/{run_id}/cancel",
    "cancelLoopRun",
    "Cancel a run that has not ended; no request body.",
    tool_id="compozy__loop_cancel",
    redact=True,
    response="LoopRunResponse",
    errors=(404, 409),
    cli=Cli("loop cancel", "cancel a run"),
)
APPROVE_LOOP_RUN: Operation[s.LoopRunResponse] = Operation(
    "approve_loop_run",
    "POST",
    "/loop-runs/{run_id}/approve",
    "approveLoopRun",
    "Answer the gate the run waits at (approve or reject).",
    tool_id="compozy__loop_approve",
    redact=True,
    body=Body.OBJECT,
    request="LoopApproveRequest",
    response="LoopRunResponse",
    errors=(400, 404, 409, 413),
    cli=Cli("loop approve", "answer the gate a run waits at"),
)
LOOP_RUN_STATUS: Operation[s.LoopRunResponse] = Operation(
    "loop_run_status",
    "GET",
    "/loop-runs/{run_id}",
    "loopRunStatus",
    "One run: its status, each node's, outputs and pinned contracts.",
    tool_id="compozy__loop_status",
    redact=True,
    response="LoopRunResponse",
    errors=(404,),
    cli=Cli("loop status", "one run: its status and its nodes'"),
)


# --- tasks: the compozy__task_* tools, their full records ------------------------------------


def _tool_operation(
    tool_id: str,
    name: str,
    method: str,
    path: str,
    operation_id: str,
    summary: str,
    cli: Cli,
    *,
    status: int = 200,
    query: tuple[Param, ...] = (),
) -> Operation[s.Payload]:
    """A tool as a resource, called as the operator: the path's id and the body (or the query)
    are its input, its full record the answer; ``<OperationId>Request`` and ``...Response``
    name its body's and answer's schemas."""
    body = Body.OPTIONAL if method in ("POST", "PUT", "PATCH") else Body.NONE
    prefix = operation_id[0].upper() + operation_id[1:]
    return Operation(
        name,
        method,
        path,
        operation_id,
        summary,
        tool_id=tool_id,
        query=query,
        unknown_query="is not a filter of tasks" if query else None,
        body=body,
        body_drops=("result_view",),
        status=status,
        request=f"{prefix}Request" if body is Body.OPTIONAL else None,
        response=f"{prefix}Response",
        errors=(400, 404, 409, 422) if body is Body.OPTIONAL else (400, 404),
        cli=cli,
    )


def _task(
    name: str,
    method: str,
    path: str,
    operation_id: str,
    summary: str,
    cli: Cli,
    *,
    status: int = 200,
    query: tuple[Param, ...] = (),
) -> Operation[s.Payload]:
    return _tool_operation(
        f"compozy__task_{name}",
        f"task_{name}",
        method,
        path,
        operation_id,
        summary,
        cli,
        status=status,
        query=query,
    )


TASK_LIST = _task(
    "list",
    "GET",
    "/tasks",
    "listTasks",
    "Tasks in the order they are claimed (priority, then age).",
    Cli("task list", "list tasks in the order they are claimed"),
    query=(
        Param("workspace_id", description="Only this workspace's tasks.", schema=STRING),
        Param(
            "state",
            Kind.LIST,
            "Only tasks in these states (comma-separated).",
            field="states",
            schema=STRING,
        ),
        Param("label", description="Only tasks with this label.", schema=STRING),
        Param("limit", Kind.INTEGER, "At most this many."),
    ),
)
TASK_CREATE = _task(
    "create",
    "POST",
    "/tasks",
    "createTask",
    "Queue a task.",
    Cli("task create", "queue a task (it starts todo)"),
    status=201,
)
TASK_CLAIM_NEXT = _task(
    "run_claim_next",
    "POST",
    "/tasks/claim",
    "claimTask",
    "A session claims its workspace's highest-priority todo task.",
    Cli("task claim", "claim the next todo task of a session's workspace for it"),
)
TASK_STATUS = _task(
    "status",
    "GET",
    "/tasks/{task_id}",
    "taskStatus",
    "One task with its runs and reviews.",
    Cli("task show", "one task with its runs and reviews"),
)
TASK_UPDATE = _task(
    "update",
    "PATCH",
    "/tasks/{task_id}",
    "updateTask",
    "Change a task.",
    Cli("task update", "change a task that is not done or cancelled"),
)
TASK_CANCEL = _task(
    "cancel",
    "POST",
    "/tasks/{task_id}/cancel",
    "cancelTask",
    "Cancel a task.",
    Cli("task cancel", "cancel a task (a run working on it ends)"),
)
TASK_REVIEW = _task(
    "run_review_submit",
    "POST",
    "/tasks/{task_id}/review",
    "reviewTask",
    "Accept an in_review task's delivery or request changes.",
    Cli("task review", "accept a task's delivery, or request changes with comments"),
)
TASK_RUN_HEARTBEAT = _task(
    "run_heartbeat",
    "POST",
    "/task-runs/{run_id}/heartbeat",
    "heartbeatTaskRun",
    "Extend a run's claim.",
    Cli("task heartbeat", "extend a run's claim"),
)
TASK_RUN_COMPLETE = _task(
    "run_complete",
    "POST",
    "/task-runs/{run_id}/complete",
    "completeTaskRun",
    "Deliver a run's work for review.",
    Cli("task complete", "deliver a run's work for review (the task goes in_review)"),
)
TASK_RUN_FAIL = _task(
    "run_fail",
    "POST",
    "/task-runs/{run_id}/fail",
    "failTaskRun",
    "End a run as failed; the task goes back to todo.",
    Cli("task fail", "end a run as failed (the task goes back to todo)"),
)
TASK_RUN_RELEASE = _task(
    "run_release",
    "POST",
    "/task-runs/{run_id}/release",
    "releaseTaskRun",
    "Give a claimed task back; it goes back to todo.",
    Cli("task release", "give a claimed task back (it goes back to todo)"),
)

TASK_OPERATIONS: tuple[Operation[s.Payload], ...] = (
    TASK_LIST,
    TASK_CREATE,
    TASK_CLAIM_NEXT,
    TASK_STATUS,
    TASK_UPDATE,
    TASK_CANCEL,
    TASK_REVIEW,
    TASK_RUN_HEARTBEAT,
    TASK_RUN_COMPLETE,
    TASK_RUN_FAIL,
    TASK_RUN_RELEASE,
)

# --- heartbeats: the compozy__agent_heartbeat_* tools, their full records ----------------------

HEARTBEAT_STATUS = _tool_operation(
    "compozy__agent_heartbeat_status",
    "heartbeat_status",
    "GET",
    "/sessions/{session_id}/heartbeat",
    "heartbeatStatus",
    "A session's heartbeat: the policy its wakes run under, the next wake, the last outcome.",
    Cli("heartbeat show", "a session's heartbeat: policy, schedule, last wake"),
)
HEARTBEAT_SET = _tool_operation(
    "compozy__agent_heartbeat_set",
    "heartbeat_set",
    "PUT",
    "/sessions/{session_id}/heartbeat",
    "setHeartbeat",
    "Give a session a heartbeat (an interval or a cron expression, a prompt, quiet hours).",
    Cli(
        "heartbeat set",
        "give a session a heartbeat (an interval or a cron schedule, a prompt)",
    ),
)
HEARTBEAT_WAKE = _tool_operation(
    "compozy__agent_heartbeat_wake",
    "heartbeat_wake",
    "POST",
    "/sessions/{session_id}/heartbeat/wake",
    "wakeHeartbeat",
    "Wake a session now with its heartbeat prompt (skipped while a turn runs).",
    Cli("heartbeat wake", "wake a session now (skipped while a turn runs)"),
)
HEARTBEAT_OPERATIONS: tuple[Operation[s.Payload], ...] = (
    HEARTBEAT_WAKE,
    HEARTBEAT_STATUS,
    HEARTBEAT_SET,
)

#: every operation, in the routes' matching order
OPERATIONS: tuple[Operation[Any], ...] = (
    LIST_TOOLS,
    SEARCH_TOOLS,
    INVOKE,
    MINT_APPROVAL,
    TOOL_INFO,
    LIST_SESSIONS,
    CREATE_SESSION,
    ARCHIVE_SESSION,
    UNARCHIVE_SESSION,
    PROMPT_SESSION,
    CANCEL_TURN,
    SESSION_HISTORY,
    SESSION_EVENTS,
    APPROVE_SESSION,
    *HEARTBEAT_OPERATIONS,
    SESSION_DIFF,
    MERGE_SESSION,
    OPEN_PULL_REQUEST,
    SESSION_STATUS,
    DELETE_SESSION,
    LIST_WORKTREES,
    CREATE_WORKTREE,
    WORKTREE_INFO,
    REMOVE_WORKTREE,
    LIST_AGENTS,
    VACUUM_STORE,
    LIST_WORKSPACES,
    ADD_WORKSPACE,
    TRUST_WORKSPACE,
    DISTRUST_WORKSPACE,
    LIST_PROFILES,
    ADD_PROFILE,
    LIST_MCP_SERVERS,
    VALIDATE_LOOP,
    LIST_LOOPS,
    CREATE_LOOP,
    START_LOOP_RUN,
    LOOP_INFO,
    LIST_LOOP_RUNS,
    CANCEL_LOOP_RUN,
    APPROVE_LOOP_RUN,
    LOOP_RUN_STATUS,
    *TASK_OPERATIONS,
)
BY_NAME: dict[str, Operation[Any]] = {operation.name: operation for operation in OPERATIONS}
BY_CLI: dict[str, Operation[Any]] = {
    operation.cli.words: operation for operation in OPERATIONS if operation.cli is not None
}
