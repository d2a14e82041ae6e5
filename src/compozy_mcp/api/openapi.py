"""The OpenAPI 3.1 document of the HTTP API (``GET /api/openapi.json``).

Schemas are the ones the code itself uses: ``ToolDescriptorPayload`` is the descriptor schema
with ``tool_id`` for ``id``, ``SessionPayload`` is the full session record schema, the session
inputs are the native tools' input schemas. JSON Schema 2020-12 is OpenAPI 3.1's dialect, so
they are used as they are. Tests check that every route is here and every response validates.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from typing import Any

from compozy_mcp import __version__
from compozy_mcp.agents.definitions import BUILTINS
from compozy_mcp.api.responses import STATUS_BY_CODE
from compozy_mcp.api.routes import MAX_BODY_BYTES
from compozy_mcp.hostapi import bodies
from compozy_mcp.hostapi.inputs import SESSION_CREATE, SESSION_LIST, TOOL_SEARCH, input_schema
from compozy_mcp.hostapi.tasks import TASK_OPERATIONS, TaskOperation
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.native import build_registry, loop_tools
from compozy_mcp.native.agent_tools import (
    AGENT_PROBLEM,
    AGENT_RECORD,
    EVENT_RECORD,
    TURN_RECORD,
)
from compozy_mcp.native.approval_tools import approval_tools
from compozy_mcp.native.contract_tools import DESCRIPTOR_SCHEMA
from compozy_mcp.native.loop_schema import LINT_ITEM, LOOP_RECORD, RUN_RECORD
from compozy_mcp.native.session_tools import DELETED
from compozy_mcp.native.worktree_tools import WORKTREE_RECORD
from compozy_mcp.schemas import COUNT, OPEN_OBJECT, STRING, array, obj
from compozy_mcp.sessions.record_schema import SESSION_RECORD
from compozy_mcp.upstream.status import SERVER_LIST_SCHEMA
from compozy_mcp.validation import bounded

Schema = dict[str, Any]
REFS = "#/components/schemas/"


def ref(name: str) -> Schema:
    return {"$ref": REFS + name}


def _descriptor_payload() -> Schema:
    """The descriptor schema with ``tool_id`` in place of ``id`` (upstream's payload)."""
    schema = copy.deepcopy(DESCRIPTOR_SCHEMA)
    schema["properties"] = {
        ("tool_id" if name == "id" else name): value for name, value in schema["properties"].items()
    }
    schema["required"] = ["tool_id" if name == "id" else name for name in schema["required"]]
    return schema


SIZES = obj({"database": COUNT, "wal": COUNT})
UPKEEP = obj(
    {
        "sessions_stopped": COUNT,
        "artifacts_deleted": COUNT,
        "vacuumed": {"type": "boolean"},
        "bytes_before": SIZES,
        "bytes_after": SIZES,
    }
)
ERROR = obj(
    {
        "error": obj(
            {"code": STRING, "reason": STRING, "message": STRING},
            {"tool_id": STRING, "details": OPEN_OBJECT},
        )
    }
)
ARTIFACT = obj({"uri": STRING, "mime_type": STRING, "bytes": {"type": "integer"}, "sha256": STRING})
ENVELOPE = obj(
    {"structured": OPEN_OBJECT, "preview": STRING},
    {
        "truncated": {"type": "boolean", "const": True},
        "artifacts": array(ARTIFACT),
        "title": {"type": "string", "description": "A title a tool.post_call hook gave."},
    },
)


def _answer_schema() -> Schema:
    approve = next(t for t in approval_tools() if t.id == "compozy__session_approve")
    return dict(approve.output_schema)


ANSWER = _answer_schema()


def schemas() -> dict[str, Schema]:
    return {
        "Error": ERROR,
        "ToolDescriptorPayload": _descriptor_payload(),
        "ToolList": obj({"tools": array(ref("ToolDescriptorPayload"))}),
        "ToolInfo": obj({"tool": ref("ToolDescriptorPayload")}),
        "ToolSearch": obj({"query": STRING, "tools": array(ref("ToolDescriptorPayload"))}),
        "ToolResult": ENVELOPE,
        "InvokeResponse": obj({"result": ref("ToolResult")}),
        "SessionPayload": SESSION_RECORD,
        "SessionResponse": obj({"session": ref("SessionPayload")}),
        "SessionPage": obj({"sessions": array(ref("SessionPayload"))}, {"next_cursor": STRING}),
        "SessionCreateRequest": with_selection_rules(stated(input_schema(SESSION_CREATE))),
        "DeleteResponse": DELETED,
        "UpkeepResponse": obj({"upkeep": UPKEEP}),
        "Workspace": bodies.WORKSPACE,
        "WorkspaceList": obj({"workspaces": array(ref("Workspace"))}),
        "WorkspaceResponse": obj({"workspace": ref("Workspace")}),
        "WorkspaceAddRequest": stated(bodies.WORKSPACE_ADD),
        "Profile": bodies.PROFILE,
        "ProfileList": obj({"profiles": array(ref("Profile"))}),
        "ProfileResponse": obj({"profile": ref("Profile")}),
        "ProfileAddRequest": stated(bodies.PROFILE_ADD),
        "McpServerList": SERVER_LIST_SCHEMA,
        # routes.py mint_approval: the call's input or its digest ("instead of input")
        "ApprovalMintRequest": {
            **stated(bodies.APPROVAL_MINT),
            **_one_of_fields({"required": ["input"]}, {"required": ["input_digest"]}),
        },
        "ApprovalResponse": obj({"approval": bodies.APPROVAL}),
        "AgentList": obj({"agents": array(AGENT_RECORD), "problems": array(AGENT_PROBLEM)}),
        "TurnPayload": TURN_RECORD,
        "TurnResponse": obj({"turn": ref("TurnPayload")}),
        "TurnPage": obj(
            {"session_id": STRING, "turns": array(ref("TurnPayload"))}, {"next_cursor": COUNT}
        ),
        "EventPage": obj(
            {"session_id": STRING, "events": array(EVENT_RECORD), "next_cursor": COUNT}
        ),
        "PromptRequest": _tool_body("compozy__session_prompt"),
        "CancelResponse": obj(
            {"session_id": STRING, "queued_cancelled": COUNT},
            {"running_turn_id": {"type": ["string", "null"]}},
        ),
        "ApproveRequest": _tool_body("compozy__session_approve"),
        "ApproveResponse": ANSWER,
        **_loop_schemas(),
        **_worktree_schemas(),
        **_task_schemas(),
    }


def _worktree_schemas() -> dict[str, Schema]:
    registry = build_registry()
    return {
        "SessionDiff": dict(registry.get("compozy__session_diff").definition.output_schema),
        "MergeRequest": _tool_body("compozy__session_merge"),
        "MergeResponse": dict(registry.get("compozy__session_merge").output_schema),
        "PullRequestRequest": _tool_body("compozy__session_pull_request"),
        "PullRequestResponse": dict(registry.get("compozy__session_pull_request").output_schema),
        "WorktreeRecord": WORKTREE_RECORD,
        "WorktreeResponse": obj({"worktree": ref("WorktreeRecord")}),
        "WorktreeList": obj({"worktrees": array(ref("WorktreeRecord"))}),
        "WorktreeCreateRequest": stated(
            dict(registry.get("compozy__worktree_create").input_schema)
        ),
    }


def _loop_input(verb: str, *without: str) -> Schema:
    """A loop tool's input as a request body: what the path carries, and the view (routes
    answer full records), left out."""
    schema = stated(dict(build_registry().get(f"compozy__loop_{verb}").input_schema))
    dropped = {"result_view", *without}
    properties = {k: v for k, v in schema["properties"].items() if k not in dropped}
    required = [name for name in schema.get("required", ()) if name not in dropped]
    body: Schema = {**schema, "properties": properties}
    if required:
        body["required"] = required
    else:
        body.pop("required", None)
    return body


def _loop_schemas() -> dict[str, Schema]:
    return {
        "LoopValidateRequest": _loop_input("validate"),
        "LoopValidation": obj({"valid": {"type": "boolean"}, "items": array(LINT_ITEM)}),
        "LoopCreateRequest": _loop_input("create"),
        "LoopRecord": LOOP_RECORD,
        "LoopResponse": obj({"loop": ref("LoopRecord")}),
        "LoopList": obj({"loops": array(ref("LoopRecord"))}),
        "LoopRunRequest": _loop_input("run", "loop_id", "definition"),
        "LoopRunRecord": RUN_RECORD,
        "LoopRunResponse": obj({"run": ref("LoopRunRecord")}),
        "LoopRunPage": obj({"runs": array(ref("LoopRunRecord"))}, {"next_cursor": STRING}),
        "LoopApproveRequest": _loop_input("approve", "run_id"),
    }


def _tool_body(tool_id: str) -> Schema:
    """A route body: a native tool's input less the session id (in the path) and the view."""
    schema = stated(dict(build_registry().get(tool_id).input_schema))
    properties = {
        name: value
        for name, value in schema["properties"].items()
        if name not in ("session_id", "result_view")
    }
    required = [name for name in schema.get("required", ()) if name in properties]
    return {**schema, "properties": properties, "required": required}


#: why each error status happens, for the response descriptions
ERROR_CAUSES = {
    202: "The call waits for the operator's approval, or its approval token does not hold "
    "(tool_approval_required); the tool did not run. details name the pending interaction.",
    400: "Invalid input: a bad body, query, tool input, workspace or profile "
    "(tool_invalid_input, invalid_request).",
    401: "A bearer token is required and missing or wrong (unauthorized).",
    403: "The call is denied (tool_denied), or a browser Origin is not allowed (forbidden).",
    404: "Unknown tool (tool_not_found) or session, workspace, profile (not_found).",
    409: "A stale fence or another conflict (tool_conflict, merge_conflict), or a workspace "
    "path or profile name that is already registered (conflict).",
    413: f"The request body is larger than {MAX_BODY_BYTES} bytes (request_too_large).",
    421: "The Host header names no address this daemon serves (misdirected_request).",
    422: "Unknown provider or model, or unsupported reasoning effort "
    "(model_not_found, reasoning_effort_unsupported); a workspace that cannot have a "
    "worktree (worktree_unavailable); a pull request gh cannot open "
    "(pull_request_unavailable).",
    500: "The tool or the daemon failed (tool_backend_failed, internal_error).",
    503: "The store was busy: another writer held it past the bounded wait (store_busy). "
    "Nothing changed; retry after Retry-After seconds.",
    507: "The result could not be stored as an artifact (tool_result_persistence_failed).",
}
#: statuses every route can answer, before the route runs
GUARD = (401, 403, 421, 500, 503)


def _responses(ok: int, body: str, *errors: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        str(ok): {
            "description": "OK" if ok == 200 else "Created",
            "content": {"application/json": {"schema": ref(body)}},
        }
    }
    for status in sorted({*errors, *GUARD}):
        out[str(status)] = {"$ref": f"#/components/responses/E{status}"}
    return out


def _query(name: str, schema: Schema, description: str, *, required: bool = False) -> Schema:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


def _path(name: str, description: str, schema: Schema = STRING) -> Schema:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": schema,
        "description": description,
    }


def _json_body(schema: str) -> Schema:
    return {"required": True, "content": {"application/json": {"schema": ref(schema)}}}


SESSION_PARAM = {"$ref": "#/components/parameters/Session"}
#: a history or events page's position: an integer the store can hold (64 bits)
PAGE_CURSOR: Schema = bounded({**COUNT})
TOOL_ID = _path("tool_id", "A tool id, such as compozy__session_status.")
SESSION_ID = _path("session_id", "A session id.")
WORKSPACE_ID = _path("workspace_id", "A workspace id.")


def _session_list_parameters() -> list[Schema]:
    properties = stated(input_schema(SESSION_LIST))["properties"]
    return [
        _query(name, properties[name], f"compozy__session_list input {name!r}.")
        for name in (
            "limit",
            "cursor",
            "workspace_id",
            "state",
            "archived",
            "parent_session_id",
            "agent_name",
        )
    ]


def stated(schema: Schema) -> Schema:
    """An input schema with the rule every integer input is held to stated in it: within 64
    bits. (Strings must be UTF-8 text, as the document's description says: JSON can escape a
    lone surrogate, which no tool takes.)"""
    out: Schema = bounded(schema)
    return out


def with_selection_rules(schema: Schema) -> Schema:
    """An input schema that takes ``provider`` with ``model``/``reasoning_effort``, with the
    models and efforts each provider has stated as ``if``/``then`` rules: what the tools check
    after the schema, said in the schema, so that no schema-valid request is refused."""
    properties = schema.get("properties", {})
    if "provider" not in properties:
        return schema
    rules = []
    for name, provider in BUILTINS.items():
        then: Schema = {}
        if "model" in properties:
            then["model"] = {"enum": list(provider.models)}
        if "reasoning_effort" in properties:
            then["reasoning_effort"] = {"enum": list(provider.reasoning_efforts)}
        rules.append(
            {
                "if": {"properties": {"provider": {"const": name}}, "required": ["provider"]},
                "then": {"properties": then},
            }
        )
    return {**schema, "allOf": rules}


def _one_of_fields(*alternatives: Schema) -> Schema:
    return {"oneOf": list(alternatives)}


def _without(*names: str) -> Schema:
    return {"not": {"anyOf": [{"required": [name]} for name in names]}}


#: what a tool's handler checks beyond its input schema (the rules between fields), said in
#: the document so that no schema-valid request is refused: MCP clients refuse a tool schema
#: with oneOf/anyOf at its top, so the tools' own schemas cannot carry them
HANDLER_RULES: dict[str, Schema] = {
    # loops/service.py: a stored Loop's id, or a definition (stored first, with its loop_id)
    "compozy__loop_run": {"anyOf": [{"required": ["loop_id"]}, {"required": ["definition"]}]},
    # native/hook_schema.py definition_problem: exactly one of command and url; headers are a
    # webhook's
    "compozy__hooks_create": _one_of_fields(
        {"allOf": [{"required": ["command"]}, _without("url", "headers")]},
        {"allOf": [{"required": ["url"]}, _without("command")]},
    ),
    # sessions/tasks.py review_submit: changes requested say what to change
    "compozy__task_run_review_submit": {
        "if": {"properties": {"decision": {"const": "request_changes"}}, "required": ["decision"]},
        "then": {"required": ["comments"], "properties": {"comments": {"pattern": "\\S"}}},
    },
    # native/approval_tools.py _set: a session's permission mode, or a remembered approval
    "compozy__tool_approvals_set": _one_of_fields(
        {
            "required": ["session_id", "permission_mode"],
            "propertyNames": {"enum": ["session_id", "permission_mode", "result_view"]},
        },
        {
            "allOf": [
                {"required": ["tool_id", "decision"]},
                _without("session_id", "permission_mode"),
            ],
            "dependentRequired": {"input": ["agent_name"], "input_digest": ["agent_name"]},
        },
    ),
}


def with_handler_rules(tool_id: str, schema: Schema) -> Schema:
    """``schema`` with :data:`HANDLER_RULES` of ``tool_id`` added to its ``allOf``."""
    rule = HANDLER_RULES.get(tool_id)
    if rule is None:
        return schema
    return {**schema, "allOf": [*schema.get("allOf", ()), rule]}


def _invoke_paths() -> dict[str, Any]:
    """One invoke operation per native tool, its body the tool's own input schema (the route
    is ``/api/tools/{tool_id}/invoke`` for any tool id)."""
    paths: dict[str, Any] = {}
    for tool in build_registry():
        schema = with_selection_rules(stated(dict(tool.input_schema)))
        schema = with_handler_rules(tool.id, schema)
        field = tool.definition.scope_session_field
        if field and field not in schema.get("required", ()):
            # the field a managed session may leave out (it is filled with the caller) is
            # required of the operator, which is who the HTTP API serves without the header
            schema = {**schema, "required": [*schema.get("required", ()), field]}
        body = obj(
            {"input": schema},
            {
                "approval_token": {
                    "type": "string",
                    "description": "A one-shot approval token minted for this call "
                    "(POST /api/tools/{tool_id}/approvals).",
                }
            },
        )
        paths[f"/api/tools/{tool.id}/invoke"] = {
            "post": {
                "operationId": f"invoke_{tool.id}",
                "summary": f"Invoke {tool.id}. {tool.description}",
                "parameters": [SESSION_PARAM],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": body}},
                },
                "responses": _responses(
                    200, "InvokeResponse", 202, 400, 403, 404, 409, 413, 422, 507
                ),
            }
        }
    return paths


def _paths() -> dict[str, Any]:
    search = stated(input_schema(TOOL_SEARCH))["properties"]
    session_ops = (404,)
    return {
        "/api/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {"application/json": {"schema": OPEN_OBJECT}},
                    },
                    **{str(s): {"$ref": f"#/components/responses/E{s}"} for s in GUARD},
                },
            }
        },
        "/api/tools": {
            "get": {
                "operationId": "listTools",
                "summary": "The tools the caller may use, as ToolDescriptorPayloads.",
                "parameters": [SESSION_PARAM],
                "responses": _responses(200, "ToolList"),
            }
        },
        "/api/tools/search": {
            "get": {
                "operationId": "searchTools",
                "summary": "Tools matching the query's words, best match first.",
                "parameters": [
                    _query("q", search["query"], "The words to search for.", required=True),
                    _query("limit", search["limit"], "At most this many tools (default 10)."),
                    SESSION_PARAM,
                ],
                "responses": _responses(200, "ToolSearch", 400),
            }
        },
        "/api/tools/{tool_id}": {
            "get": {
                "operationId": "toolInfo",
                "summary": "One tool's descriptor, with output_views for tools with views.",
                "parameters": [TOOL_ID, SESSION_PARAM],
                "responses": _responses(200, "ToolInfo", 404),
            }
        },
        **_invoke_paths(),
        "/api/tools/{tool_id}/approvals": {
            "post": {
                "operationId": "mintApproval",
                "summary": "Mint a one-shot approval token for one call of the tool by a "
                "session, from its input or input_digest (computed without result_view). "
                "Operator only; the token is single-use and expires (default 120 s).",
                "parameters": [TOOL_ID, SESSION_PARAM],
                "requestBody": _json_body("ApprovalMintRequest"),
                "responses": _responses(201, "ApprovalResponse", 400, 403, 404, 413),
            }
        },
        "/api/sessions": {
            "get": {
                "operationId": "listSessions",
                "summary": "Sessions, newest first, as full SessionPayloads; follow next_cursor.",
                "parameters": _session_list_parameters(),
                "responses": _responses(200, "SessionPage", 400),
            },
            "post": {
                "operationId": "createSession",
                "summary": "Create a session; the body is the compozy__session_create input.",
                "requestBody": _json_body("SessionCreateRequest"),
                "responses": _responses(201, "SessionResponse", 400, 404, 409, 413, 422),
            },
        },
        "/api/sessions/{session_id}": {
            "get": {
                "operationId": "sessionStatus",
                "summary": "One session's full SessionPayload.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "SessionResponse", *session_ops),
            },
            "delete": {
                "operationId": "deleteSession",
                "summary": "Delete an archived session and its descendants, with their "
                "transcripts and the artifacts only they stored.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "DeleteResponse", 404, 409),
            },
        },
        "/api/store/vacuum": {
            "post": {
                "operationId": "vacuumStore",
                "summary": "Stop expired sessions, delete expired artifacts and rebuild the "
                "database so that deleted content gives its space back.",
                "responses": _responses(200, "UpkeepResponse"),
            }
        },
        "/api/sessions/{session_id}/archive": {
            "post": {
                "operationId": "archiveSession",
                "summary": "Archive a session (idempotent); no request body.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "SessionResponse", *session_ops),
            }
        },
        "/api/sessions/{session_id}/unarchive": {
            "post": {
                "operationId": "unarchiveSession",
                "summary": "Return an archived session to the board (idempotent); no request body.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "SessionResponse", *session_ops),
            }
        },
        "/api/agents": {
            "get": {
                "operationId": "listAgents",
                "summary": "The agents a runtime can select (built-in and from agents.yaml), "
                "with their models and efforts, and the problems of agent files.",
                "parameters": [
                    _query("workspace_id", STRING, "Include this workspace's agents.yaml.")
                ],
                "responses": _responses(200, "AgentList", 404),
            }
        },
        "/api/sessions/{session_id}/prompt": {
            "post": {
                "operationId": "promptSession",
                "summary": "Send a prompt as the session's next turn (binding its agent when none "
                "runs); with wait, answer once the turn ended or timeout_seconds passed.",
                "parameters": [SESSION_ID],
                "requestBody": _json_body("PromptRequest"),
                "responses": _responses(200, "TurnResponse", 400, 404, 409, 413, 422),
            }
        },
        "/api/sessions/{session_id}/cancel": {
            "post": {
                "operationId": "cancelTurn",
                "summary": "Cancel the session's running turn and every queued one.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "CancelResponse", 404),
            }
        },
        "/api/sessions/{session_id}/history": {
            "get": {
                "operationId": "sessionHistory",
                "summary": "The session's turns, oldest first, complete; follow next_cursor.",
                "parameters": [
                    SESSION_ID,
                    _query("cursor", PAGE_CURSOR, "next_cursor of the previous page."),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "Turns."),
                ],
                "responses": _responses(200, "TurnPage", 400, 404),
            }
        },
        "/api/sessions/{session_id}/events": {
            "get": {
                "operationId": "sessionEvents",
                "summary": "The raw update stream of the session's agent since cursor. With "
                "Accept: text/event-stream, a Server-Sent Events stream that goes on live "
                "(each event's id is its seq; Last-Event-ID resumes; until=turn_end ends it "
                "after the next turn_ended).",
                "parameters": [
                    SESSION_ID,
                    _query("cursor", PAGE_CURSOR, "next_cursor of the previous page."),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "Events."),
                    _query("until", {"const": "turn_end"}, "Streams: end after a turn_ended."),
                ],
                "responses": {
                    **_responses(200, "EventPage", 400, 404),
                    "200": {
                        "description": "OK",
                        "content": {
                            "application/json": {"schema": ref("EventPage")},
                            "text/event-stream": {"schema": STRING},
                        },
                    },
                },
            }
        },
        "/api/sessions/{session_id}/approve": {
            "post": {
                "operationId": "approveSession",
                "summary": "Answer a pending permission request with one of the options the "
                "agent offered.",
                "parameters": [SESSION_ID],
                "requestBody": _json_body("ApproveRequest"),
                "responses": _responses(200, "ApproveResponse", 400, 404, 409),
            }
        },
        "/api/workspaces": {
            "get": {
                "operationId": "listWorkspaces",
                "summary": "The registered workspaces, oldest (the default) first.",
                "responses": _responses(200, "WorkspaceList"),
            },
            "post": {
                "operationId": "addWorkspace",
                "summary": "Register a directory of the daemon's machine as a workspace.",
                "requestBody": _json_body("WorkspaceAddRequest"),
                "responses": _responses(201, "WorkspaceResponse", 400, 409, 413),
            },
        },
        "/api/workspaces/{workspace_id}/trust": {
            "post": {
                "operationId": "trustWorkspace",
                "summary": "Trust a workspace: its .compozy/hooks.yaml runs from the next call on "
                "(the hooks file of a workspace that is not trusted never runs).",
                "parameters": [WORKSPACE_ID],
                "responses": _responses(200, "WorkspaceResponse", 404),
            },
            "delete": {
                "operationId": "distrustWorkspace",
                "summary": "No longer trust a workspace: its .compozy/hooks.yaml stops running.",
                "parameters": [WORKSPACE_ID],
                "responses": _responses(200, "WorkspaceResponse", 404),
            },
        },
        "/api/profiles": {
            "get": {
                "operationId": "listProfiles",
                "summary": "The profiles, oldest (the default) first.",
                "responses": _responses(200, "ProfileList"),
            },
            "post": {
                "operationId": "addProfile",
                "summary": "Create a profile (how sessions are presented).",
                "requestBody": _json_body("ProfileAddRequest"),
                "responses": _responses(201, "ProfileResponse", 400, 409, 413),
            },
        },
        **_loop_paths(),
        **_worktree_paths(),
        **_task_paths(),
        "/api/mcp/servers": {
            "get": {
                "operationId": "listMcpServers",
                "summary": "The upstream MCP servers the daemon connects: each one's state, tool "
                "count, restarts and last error.",
                "responses": _responses(200, "McpServerList"),
            }
        },
    }


WORKTREE_ID = _path("worktree_id", "A worktree id (wt-...).")


def _worktree_paths() -> dict[str, Any]:
    optional_body = {"required": False}
    return {
        "/api/sessions/{session_id}/diff": {
            "get": {
                "operationId": "sessionDiff",
                "summary": "What the session changed in its worktree against the commit the "
                "worktree was made from, uncommitted changes included, with the patch.",
                "parameters": [SESSION_ID],
                "responses": _responses(200, "SessionDiff", 404, 422),
            }
        },
        "/api/sessions/{session_id}/merge": {
            "post": {
                "operationId": "mergeSession",
                "summary": "Merge the session's work into a branch (default: the worktree's "
                "base branch); a conflict (409 merge_conflict) changes nothing.",
                "parameters": [SESSION_ID],
                "requestBody": {**_json_body("MergeRequest"), **optional_body},
                "responses": _responses(200, "MergeResponse", 400, 404, 409, 422),
            }
        },
        "/api/sessions/{session_id}/pull-request": {
            "post": {
                "operationId": "openPullRequest",
                "summary": "Push the session's branch and open its pull request with gh; "
                "without gh, 422 pull_request_unavailable with the commands to run.",
                "parameters": [SESSION_ID],
                "requestBody": {**_json_body("PullRequestRequest"), **optional_body},
                "responses": _responses(200, "PullRequestResponse", 400, 404, 409, 422),
            }
        },
        "/api/worktrees": {
            "get": {
                "operationId": "listWorktrees",
                "summary": "The worktrees sessions work in, newest first.",
                "parameters": [
                    _query("workspace_id", STRING, "Only this workspace's worktrees."),
                    _query("session_id", STRING, "Only this session's worktrees."),
                    _query("include_removed", {"type": "boolean"}, "Removed ones too."),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "At most."),
                ],
                "responses": _responses(200, "WorktreeList", 400),
            },
            "post": {
                "operationId": "createWorktree",
                "summary": "Give a session without one a worktree of its own.",
                "requestBody": _json_body("WorktreeCreateRequest"),
                "responses": _responses(201, "WorktreeResponse", 400, 404, 409, 413, 422),
            },
        },
        "/api/worktrees/{worktree_id}": {
            "get": {
                "operationId": "worktreeInfo",
                "summary": "One worktree, with its checked-out commit and uncommitted files.",
                "parameters": [WORKTREE_ID],
                "responses": _responses(200, "WorktreeResponse", 404),
            },
            "delete": {
                "operationId": "removeWorktree",
                "summary": "Remove a worktree's directory (its branch stays); uncommitted "
                "changes refuse it (409 worktree_dirty) unless force=true commits them first.",
                "parameters": [
                    WORKTREE_ID,
                    _query("force", {"type": "boolean"}, "Commit uncommitted changes first."),
                ],
                "responses": _responses(200, "WorktreeResponse", 400, 404, 409, 422),
            },
        },
    }


def _task_schema_name(operation: TaskOperation, kind: str) -> str:
    return operation.operation_id[0].upper() + operation.operation_id[1:] + kind


def _task_schemas() -> dict[str, Schema]:
    """Each task operation's body (the tool's input less the path's id and the view) and
    response (the tool's full record)."""
    registry = build_registry()
    schemas: dict[str, Schema] = {}
    for operation in TASK_OPERATIONS:
        tool = registry.get(operation.tool_id)
        schemas[_task_schema_name(operation, "Response")] = dict(tool.definition.output_schema)
        if operation.has_body:
            schema = with_handler_rules(tool.id, stated(dict(tool.input_schema)))
            dropped = {"result_view", operation.path_field}
            properties = {k: v for k, v in schema["properties"].items() if k not in dropped}
            required = [name for name in schema.get("required", ()) if name in properties]
            schemas[_task_schema_name(operation, "Request")] = {
                **schema,
                "properties": properties,
                "required": required,
            }
    return schemas


def _comma_separated(values: list[str]) -> Schema:
    """A query value naming one or more of ``values``, comma-separated (empty items are
    skipped, as the route skips them)."""
    one = "(" + "|".join(re.escape(value) for value in values) + ")"
    return {"type": "string", "pattern": f"^,*{one}(,+{one})*,*$"}


def _task_paths() -> dict[str, Any]:
    """The ``compozy__task_*`` tools as resources, called as the operator (full records)."""
    ids = {
        "task_id": _path("task_id", "A task id (task-...)."),
        "run_id": _path("run_id", "A task run id (trun-...)."),
    }
    list_input = stated(dict(build_registry().get("compozy__task_list").input_schema))
    filters = list_input["properties"]
    schemas = _task_schemas()
    paths: dict[str, Any] = {}
    for operation in TASK_OPERATIONS:
        spec: dict[str, Any] = {
            "operationId": operation.operation_id,
            "summary": operation.summary,
        }
        if operation.path_field is not None:
            spec["parameters"] = [ids[operation.path_field]]
        if operation.name == "list":
            spec["parameters"] = [
                _query("workspace_id", STRING, "Only this workspace's tasks."),
                _query(
                    "state",
                    _comma_separated(filters["states"]["items"]["enum"]),
                    "Only tasks in these states (comma-separated).",
                ),
                _query("label", STRING, "Only tasks with this label."),
                _query("limit", filters["limit"], "At most this many."),
            ]
        if operation.has_body:
            body = _json_body(_task_schema_name(operation, "Request"))
            if not schemas[_task_schema_name(operation, "Request")]["required"]:
                body = {**body, "required": False}
            spec["requestBody"] = body
        errors = (400, 404, 409, 422) if operation.has_body else (400, 404)
        spec["responses"] = _responses(
            operation.status, _task_schema_name(operation, "Response"), *errors
        )
        paths.setdefault(f"/api{operation.path}", {})[operation.method.lower()] = spec
    return paths


LOOP_ID = _path("loop_id", "A stored Loop's id.", loop_tools.LOOP_ID)
RUN_ID = _path("run_id", "A Loop run's id.")


def _loop_paths() -> dict[str, Any]:
    """The ``compozy__loop_*`` tools as resources: each operation is the tool's call, as the
    operator, answering the full record."""
    runs = stated(dict(build_registry().get("compozy__loop_runs").input_schema))["properties"]
    run_ops = (404, 409)
    return {
        "/api/loops/validate": {
            "post": {
                "operationId": "validateLoop",
                "summary": "Lint a Loop definition (compozy__loop_validate): every item, with "
                "line and column when the definition is text.",
                "requestBody": _json_body("LoopValidateRequest"),
                "responses": _responses(200, "LoopValidation", 400, 413),
            }
        },
        "/api/loops": {
            "get": {
                "operationId": "listLoops",
                "summary": "Stored Loops, the latest version of each.",
                "responses": _responses(200, "LoopList"),
            },
            "post": {
                "operationId": "createLoop",
                "summary": "Lint and store a Loop definition (a new version with a stored "
                "loop_id); lint errors answer 400 loop_invalid with every item in details.",
                "requestBody": _json_body("LoopCreateRequest"),
                "responses": _responses(201, "LoopResponse", 400, 413),
            },
        },
        "/api/loops/{loop_id}": {
            "get": {
                "operationId": "loopInfo",
                "summary": "One stored Loop version (default: the latest).",
                "parameters": [
                    LOOP_ID,
                    _query("version", bounded({"type": "integer", "minimum": 1}), "The version."),
                ],
                "responses": _responses(200, "LoopResponse", 400, 404),
            }
        },
        "/api/loops/{loop_id}/runs": {
            "post": {
                "operationId": "startLoopRun",
                "summary": "Start a run of a stored Loop (linted again before it starts).",
                "parameters": [LOOP_ID],
                "requestBody": _json_body("LoopRunRequest"),
                "responses": _responses(201, "LoopRunResponse", 400, 403, 404, 413),
            }
        },
        "/api/loop-runs": {
            "get": {
                "operationId": "listLoopRuns",
                "summary": "Loop runs, newest first; follow next_cursor.",
                "parameters": [
                    _query(name, runs[name], f"compozy__loop_runs input {name!r}.")
                    for name in ("loop_id", "status", "limit", "cursor")
                ],
                "responses": _responses(200, "LoopRunPage", 400),
            }
        },
        "/api/loop-runs/{run_id}": {
            "get": {
                "operationId": "loopRunStatus",
                "summary": "One run: its status, each node's, outputs and pinned contracts.",
                "parameters": [RUN_ID],
                "responses": _responses(200, "LoopRunResponse", 404),
            }
        },
        "/api/loop-runs/{run_id}/cancel": {
            "post": {
                "operationId": "cancelLoopRun",
                "summary": "Cancel a run that has not ended; no request body.",
                "parameters": [RUN_ID],
                "responses": _responses(200, "LoopRunResponse", *run_ops),
            }
        },
        "/api/loop-runs/{run_id}/approve": {
            "post": {
                "operationId": "approveLoopRun",
                "summary": "Answer the gate the run waits at (approve or reject).",
                "parameters": [RUN_ID],
                "requestBody": _json_body("LoopApproveRequest"),
                "responses": _responses(200, "LoopRunResponse", 400, *run_ops, 413),
            }
        },
    }


DESCRIPTION = f"""The compozy daemon's HTTP API, served by `compozy serve` on TCP (default
127.0.0.1:8765) and on a Unix socket (default $COMPOZY_HOME/compozy.sock, mode 0600). The hosted
MCP endpoint is `/mcp` on the same listeners (not described here).

Strings are UTF-8 text: a lone surrogate (which JSON can escape) is refused as invalid input, as
is a number of more than 4300 digits or beyond a double's range (`1e400`): valid JSON, not a
value any tool takes. NaN and Infinity are not JSON.
Integral numbers such as `1.0` are integers. Every error is
`{{"error": {{"code", "reason", "message", "tool_id"?, "details"?}}}}`; the
message of input errors and denials is redacted to `invalid tool request` / `tool invocation
denied`.
Besides the statuses listed per operation, an unknown path answers 404 (`not_found`,
`route_not_found`) and a method a path does not take answers 405 (`method_not_allowed`, with
`Allow`). Status by error code: {", ".join(f"{c} {s}" for c, s in STATUS_BY_CODE.items())}.

A loopback daemon accepts only loopback `Host` (and `Origin`) headers. When a token is set
(required for a non-loopback host), every request needs `Authorization: Bearer <token>`."""


def for_address(address: str | None) -> Callable[[], dict[str, Any]]:
    """The document a daemon serving at ``address`` (``http://HOST:PORT``) publishes."""
    return functools.partial(document, address)


@functools.cache
def document(address: str | None = None) -> dict[str, Any]:
    """The OpenAPI document; ``servers`` names ``address`` (a Unix-socket daemon's base URL is
    ``http://localhost``)."""
    errors = {
        f"E{status}": {
            "description": cause,
            "content": {"application/json": {"schema": ref("Error")}},
        }
        for status, cause in ERROR_CAUSES.items()
    }
    return copy.deepcopy(
        {
            "openapi": "3.1.0",
            "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
            "info": {
                "title": "compozy daemon API",
                "version": __version__,
                "description": DESCRIPTION,
            },
            "servers": [{"url": address or "http://localhost"}],
            "security": [{}, {"bearer": []}],
            "paths": _paths(),
            "components": {
                "schemas": schemas(),
                "responses": errors,
                "parameters": {
                    "Session": {
                        "name": SESSION_HEADER,
                        "in": "header",
                        "required": False,
                        "schema": STRING,
                        "description": "Make the call as this managed session: its permission "
                        "policy decides which tools it sees and may call.",
                    }
                },
                "securitySchemes": {
                    "bearer": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "COMPOZY_TOKEN / --token of `compozy serve`.",
                    }
                },
            },
        }
    )
