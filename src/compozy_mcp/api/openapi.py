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
from compozy_mcp.hostapi.inputs import SESSION_CREATE, input_schema
from compozy_mcp.hostapi.operation import Body, Kind, Operation, Param
from compozy_mcp.hostapi.operations import (
    HEARTBEAT_OPERATIONS,
    INVOKE,
    OPERATIONS,
    SESSION_EVENTS,
    TASK_OPERATIONS,
)
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
        # routes: the call's input or its digest ("instead of input")
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


#: path ids the tools hold to a pattern
ID_SCHEMAS: dict[str, Schema] = {"loop_id": loop_tools.LOOP_ID}


def _json_body(schema: str) -> Schema:
    return {"required": True, "content": {"application/json": {"schema": ref(schema)}}}


SESSION_PARAM = {"$ref": "#/components/parameters/Session"}
#: what each id in a path is
ID_DESCRIPTIONS = {
    "tool_id": "A tool id, such as compozy__session_status.",
    "session_id": "A session id.",
    "workspace_id": "A workspace id.",
    "worktree_id": "A worktree id (wt-...).",
    "loop_id": "A stored Loop's id.",
    "run_id": "A Loop run's id, or a task run's (trun-...).",
    "task_id": "A task id (task-...).",
}


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
        # a provider that states none learns them from its agent (announced when it starts):
        # the tools take any then, and so does the document
        if "model" in properties and provider.models:
            then["model"] = {"enum": list(provider.models)}
        if "reasoning_effort" in properties and provider.reasoning_efforts:
            then["reasoning_effort"] = {"enum": list(provider.reasoning_efforts)}
        if not then:
            continue
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
    # loops: a stored Loop's id, or a definition (stored first, with its loop_id)
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
    # sessions/heartbeats.py set: an interval or a cron expression, not both
    "compozy__agent_heartbeat_set": {"not": {"required": ["interval_seconds", "cron"]}},
    "compozy__tool_approvals_set": _one_of_fields(
        {
            "required": ["session_id", "permission_mode"],
            "propertyNames": {"enum": ["session_id", "permission_mode", "result_view"]},
        },
        {
            "allOf": [
                {"required": ["tool_id", "decision"]},
                _without("session_id", "permission_mode"),
                # the input or its digest: both must agree, which no schema can say
                {"not": {"required": ["input", "input_digest"]}},
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


def _parameter(operation: Operation[Any], param: Param) -> Schema:
    """A query parameter: its schema is the declaration's, or the input field's it fills."""
    field = stated(input_schema(operation.checked_as))["properties"].get(param.input_field, {})
    # a declared schema is held to what the store holds too (64-bit integers)
    schema = field if param.schema is None else stated(dict(param.schema))
    items = field.get("items", {})
    if param.kind is Kind.LIST and "enum" in items:
        schema = _comma_separated(items["enum"])
    description = param.description or f"{operation.checked_as} input {param.input_field!r}."
    return _query(param.name, dict(schema), description, required=param.required)


def _comma_separated(values: list[str]) -> Schema:
    """A query value naming one or more of ``values``, comma-separated (empty items are
    skipped, as the route skips them)."""
    one = "(" + "|".join(re.escape(value) for value in values) + ")"
    return {"type": "string", "pattern": f"^,*{one}(,+{one})*,*$"}


def _operation(operation: Operation[Any], components: dict[str, Schema]) -> Schema:
    """One operation's entry, from its declaration (``components``: the schemas it names)."""
    parameters = [
        _path(field, ID_DESCRIPTIONS[field], ID_SCHEMAS.get(field, STRING))
        for field in operation.path_fields
    ] + [_parameter(operation, param) for param in operation.query]
    if operation.as_session:
        parameters.append(SESSION_PARAM)
    spec: Schema = {"operationId": operation.operation_id, "summary": operation.summary}
    if parameters:
        spec["parameters"] = parameters
    if operation.request is not None:
        body = _json_body(operation.request)
        # a body that may be left out is optional unless its schema requires a field
        needed = components[operation.request].get("required")
        if operation.body is Body.OPTIONAL and not needed:
            body = {**body, "required": False}
        spec["requestBody"] = body
    spec["responses"] = _responses(operation.status, operation.response, *operation.errors)
    if operation is SESSION_EVENTS:
        spec["responses"]["200"] = {
            "description": "OK",
            "content": {
                "application/json": {"schema": ref(operation.response)},
                "text/event-stream": {"schema": STRING},
            },
        }
    return spec


def _paths() -> dict[str, Any]:
    """Every declared operation (a tool's invoke once per native tool, with its input)."""
    components = schemas()
    paths: dict[str, Any] = {
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
        }
    }
    for operation in OPERATIONS:
        if operation is INVOKE:
            paths.update(_invoke_paths())
            continue
        paths.setdefault(f"/api{operation.path}", {})[operation.method.lower()] = _operation(
            operation, components
        )
    return paths


def _task_schemas() -> dict[str, Schema]:
    """Each task and heartbeat operation's body (the tool's input less the path's id and the
    view) and response (the tool's full record)."""
    registry = build_registry()
    schemas: dict[str, Schema] = {}
    for operation in TASK_OPERATIONS + HEARTBEAT_OPERATIONS:
        assert operation.tool_id is not None
        tool = registry.get(operation.tool_id)
        schemas[operation.response] = dict(tool.definition.output_schema)
        if operation.request is not None:
            schema = with_handler_rules(tool.id, stated(dict(tool.input_schema)))
            dropped = {"result_view", *operation.path_fields}
            properties = {k: v for k, v in schema["properties"].items() if k not in dropped}
            required = [name for name in schema.get("required", ()) if name in properties]
            schemas[operation.request] = {**schema, "properties": properties, "required": required}
    return schemas


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
