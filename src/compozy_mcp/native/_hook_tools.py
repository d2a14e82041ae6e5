"""The hook tools, ``compozy__hooks_*``: define, inspect, switch and test hooks, and read their
run log.

Who may act: reading (``events``, ``list``, ``info``, ``runs``) is open to every caller its
permission policy allows; a managed session reads only the runs of calls made by itself and its
descendants. Changing hooks and running one (``create``, ``update``, ``enable``, ``disable``,
``delete``, ``test``) is the operator's alone: a hook runs commands on the host with the
operator's rights and sees every session's calls, so a managed session is refused
(``tool_denied`` / ``operator_only``) whatever its policy says.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.cursors import cursor_schema
from compozy_mcp.errors import ToolDenied
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.hook_schema import (
    DECISIONS,
    DENY_EXIT_CODE,
    EVENTS,
    FIELDS,
    HOOK_ID,
    HOOK_RECORD,
    HOOK_REF,
    OPTIONAL_FIELDS,
    OUTCOMES,
    POST_CALL,
    POST_ERROR,
    PRE_CALL,
    PROBLEM,
    RUN_CURSOR,
    RUN_RECORD,
    check_definition,
)
from compozy_mcp.native.registry import Handler, Risk, ToolDefinition, count_preview
from compozy_mcp.reasons import Reason
from compozy_mcp.schemas import (
    BOOLEAN,
    OPEN_OBJECT,
    STRING,
    array,
    described,
    enum,
    nullable,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.views import KEEP, Each, Fields, ViewSpec

HOOKS = ("compozy__hooks",)
ONLY_HOOK_ID = tool_input({"hook_id": HOOK_REF})
HOOK_RESULT = obj({"hook": HOOK_RECORD})


def _operator_only(call: ToolCall) -> None:
    if call.scope.session_id is not None:
        raise ToolDenied(
            call.tool_id,
            f'tool "{call.tool_id}" is for the operator only: hooks run commands on the host '
            f'and see every session\'s calls (called by session "{call.scope.session_id}")',
            reason=Reason.OPERATOR_ONLY,
        )


def _hook_preview(result: dict[str, Any]) -> str:
    hook = result["hook"]
    state = "enabled" if hook["enabled"] else "disabled"
    return f"{hook['id']} on {hook['event']} ({state})"


# --- events ---------------------------------------------------------------------------------

_COMMON_PAYLOAD = [
    "event",
    "tool_id",
    "tool_call_id",
    "has_result_views (tools with views only)",
    "pinned_result_view (calls whose view the caller fixed: Loop nodes)",
    "read_only",
    "tool_input",
]
_SESSION_PAYLOAD = [
    "session_id, session_name, session_type, agent_name, workspace_id, workspace, state, "
    "parent_session_id, created_at, updated_at (calls made by a managed session)",
    "timestamp",
]
EVENT_CATALOG: list[dict[str, Any]] = [
    {
        "event": PRE_CALL,
        "description": "Before a tool runs, after its input is checked. A patch may replace "
        "tool_input (checked again, result_view included) or deny the call.",
        "payload_fields": [*_COMMON_PAYLOAD, *_SESSION_PAYLOAD],
        "patch_fields": ["deny", "deny_reason", "tool_input"],
    },
    {
        "event": POST_CALL,
        "description": "After a tool returned. result_view says which view tool_result holds; "
        "a patch may replace the title or the result; a deny only stops later hooks.",
        "payload_fields": [
            *_COMMON_PAYLOAD,
            "result_view (tools with views only)",
            "tool_result ({structured, preview}, the envelope the caller gets)",
            *_SESSION_PAYLOAD,
        ],
        "patch_fields": ["deny", "deny_reason", "title", "tool_result"],
    },
    {
        "event": POST_ERROR,
        "description": "After a call failed. A patch may replace the error message; a deny "
        "only stops later hooks.",
        "payload_fields": [
            *_COMMON_PAYLOAD,
            "error ({code, reason, message})",
            *_SESSION_PAYLOAD,
        ],
        "patch_fields": ["deny", "deny_reason", "error"],
    },
]
EVENT_RECORD = obj(
    {
        "event": enum(*EVENTS),
        "description": STRING,
        "payload_fields": strings(),
        "patch_fields": strings(),
    }
)


async def _events(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"events": EVENT_CATALOG, "deny_exit_code": DENY_EXIT_CODE}


# --- list and info --------------------------------------------------------------------------

HOOK_COMPACT = Fields.of("id", "event", "enabled", "source", "workspace_id", "on_error", "stats")
LIST_VIEWS = ViewSpec(
    Fields({"hooks": Each(HOOK_COMPACT), "problems": KEEP}),
    follow_up=("hooks[].id",),
)


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    listed = await call.services.hooks.list(call.info, args.get("event"))
    hooks = listed["hooks"]
    if "enabled" in args:
        hooks = [hook for hook in hooks if hook["enabled"] is args["enabled"]]
    if "source" in args:
        hooks = [hook for hook in hooks if hook["source"] == args["source"]]
    return {"hooks": hooks, "problems": listed["problems"]}


def _list_preview(result: dict[str, Any]) -> str:
    count = len(result["hooks"])
    failing = sum(1 for hook in result["hooks"] if hook["stats"]["failed"])
    text = f"{count} hook{'' if count == 1 else 's'}"
    if failing:
        text += f"; {failing} with failed runs"
    if result["problems"]:
        text += f"; {len(result['problems'])} problem(s) loading hooks"
    return text


async def _info(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"hook": await call.services.hooks.info(call.info, args["hook_id"])}


# --- changes --------------------------------------------------------------------------------


async def _create(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    _operator_only(call)
    check_definition(call.tool_id, args)
    return {"hook": await call.services.hooks.create(call.info, args)}


async def _update(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    _operator_only(call)
    changes = {name: value for name, value in args.items() if name != "hook_id"}
    return {"hook": await call.services.hooks.update(call.info, args["hook_id"], changes)}


def _switch(enabled: bool) -> Handler:
    async def switch(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
        _operator_only(call)
        hooks = call.services.hooks
        return {"hook": await hooks.set_enabled(call.info, args["hook_id"], enabled)}

    return switch


async def _delete(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    _operator_only(call)
    return await call.services.hooks.delete(call.info, args["hook_id"])


# --- runs and test --------------------------------------------------------------------------

RUNS_VIEWS = ViewSpec(
    Fields(
        {
            "runs": Each(
                Fields.of(
                    "run_id",
                    "hook_id",
                    "event",
                    "session_id",
                    "tool_id",
                    "tool_call_id",
                    "started_at",
                    "duration_ms",
                    "outcome",
                    "decision",
                    "patch_applied",
                    "detail",
                )
            ),
            "next_cursor": KEEP,
        }
    ),
    follow_up=("runs[].hook_id", "runs[].session_id", "runs[].tool_call_id", "next_cursor"),
)


async def _runs(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.hooks.runs(call.info, args)


async def _test(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    _operator_only(call)
    return await call.services.hooks.test(call.info, args)


TEST_RESULT = obj(
    {
        "hook_id": STRING,
        "event": enum(*EVENTS),
        "payload": OPEN_OBJECT,
        "outcome": enum(*OUTCOMES),
        "decision": enum(*DECISIONS),
        "duration_ms": {"type": "number"},
        "stderr": STRING,
    },
    {
        "exit_code": nullable({"type": "integer"}),
        "detail": STRING,
        "patch": OPEN_OBJECT,
        "tool_input": described(OPEN_OBJECT, "The patched input, checked as the call would."),
        "result_view": enum("compact", "full"),
        "error": described(
            obj(
                {"code": STRING, "reason": STRING, "message": STRING},
                {"tool_id": STRING, "details": OPEN_OBJECT},
            ),
            "The error the call would end in.",
        ),
    },
)


def _test_preview(result: dict[str, Any]) -> str:
    return f"{result['hook_id']}: {result['outcome']}, {result['decision']}"


def _hook_tool(
    verb: str, description: str, handler: Handler, input_schema: dict[str, Any], risk: Risk
) -> ToolDefinition:
    return ToolDefinition(
        id=f"compozy__hooks_{verb}",
        description=description,
        input_schema=input_schema,
        output_schema=HOOK_RESULT,
        handler=handler,
        risk=risk,
        toolsets=HOOKS,
        preview=_hook_preview,
        idempotent=verb != "create",
        # refused before approvals: no prompt for a call that would be refused anyway
        operator_only=risk is not Risk.READ,
    )


def hook_tools() -> list[ToolDefinition]:
    definition_input = tool_input(
        {"event": FIELDS["event"]},
        {"id": described(HOOK_ID, "Default: generated."), **OPTIONAL_FIELDS},
    )
    update_input = tool_input({"hook_id": HOOK_REF}, FIELDS)
    return [
        ToolDefinition(
            id="compozy__hooks_events",
            description="The hook events (tool.pre_call, tool.post_call, tool.post_error): "
            "what each payload carries and what each patch may change.",
            input_schema=tool_input(),
            output_schema=obj({"events": array(EVENT_RECORD), "deny_exit_code": {"const": 2}}),
            handler=_events,
            risk=Risk.READ,
            toolsets=HOOKS,
            preview=count_preview("events", "event"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__hooks_list",
            description="List hooks (stored, and from $COMPOZY_HOME/hooks.yaml and workspaces' "
            ".compozy/hooks.yaml) with how their runs went, and any hooks.yaml that could not "
            "be loaded.",
            input_schema=tool_input(
                optional={
                    "event": described(enum(*EVENTS), "Only hooks of this event."),
                    "enabled": described(BOOLEAN, "Only enabled (true) or disabled hooks."),
                    "source": described(
                        enum("store", "home", "workspace"), "Only hooks from this source."
                    ),
                }
            ),
            output_schema=obj({"hooks": array(HOOK_RECORD), "problems": array(PROBLEM)}),
            handler=_list,
            risk=Risk.READ,
            toolsets=HOOKS,
            views=LIST_VIEWS,
            preview=_list_preview,
            idempotent=True,
        ),
        _hook_tool("info", "Read one hook.", _info, ONLY_HOOK_ID, Risk.READ),
        _hook_tool(
            "create",
            "Create a hook: a command (payload on stdin, patch on stdout, exit 2 denies) or a "
            "webhook (url) run on a tool event. Operator only.",
            _create,
            definition_input,
            Risk.MUTATING,
        ),
        _hook_tool(
            "update",
            "Change a stored hook: the fields given replace the hook's (command and url "
            "replace each other). Operator only.",
            _update,
            update_input,
            Risk.MUTATING,
        ),
        _hook_tool(
            "enable",
            "Enable a stored hook. Operator only.",
            _switch(True),
            ONLY_HOOK_ID,
            Risk.MUTATING,
        ),
        _hook_tool(
            "disable",
            "Disable a stored hook (it stays, and runs no more). Operator only.",
            _switch(False),
            ONLY_HOOK_ID,
            Risk.MUTATING,
        ),
        ToolDefinition(
            id="compozy__hooks_delete",
            description="Delete a stored hook and its statistics (its runs stay in the log). "
            "Operator only.",
            input_schema=ONLY_HOOK_ID,
            output_schema=obj({"hook_id": STRING, "deleted": {"const": True}}),
            handler=_delete,
            risk=Risk.DESTRUCTIVE,
            toolsets=HOOKS,
            preview=lambda r: f"{r['hook_id']} deleted",
            idempotent=False,
        ),
        ToolDefinition(
            id="compozy__hooks_runs",
            description="The hook run log, newest first: each run's outcome, decision, whether "
            "its patch was applied and why it failed; stderr in the full view. A managed "
            "session sees runs of calls made by itself and its descendants.",
            input_schema=tool_input(
                optional={
                    "hook_id": HOOK_REF,
                    "event": described(enum(*EVENTS), "Only runs for this event."),
                    "tool_call_id": described(STRING, "Only runs for this tool call."),
                    "session_id": described(
                        STRING,
                        "Runs of calls this session made. A managed session may name itself "
                        "or a descendant only.",
                    ),
                    "failed": described(BOOLEAN, "Only failed runs (true) or the others."),
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 200,
                        "description": "Page size; default 50.",
                    },
                    "cursor": cursor_schema(RUN_CURSOR),
                }
            ),
            output_schema=obj({"runs": array(RUN_RECORD)}, {"next_cursor": STRING}),
            handler=_runs,
            risk=Risk.READ,
            toolsets=HOOKS,
            views=RUNS_VIEWS,
            preview=count_preview("runs", "run"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__hooks_test",
            description="Run one hook once on a payload (given, or a sample built for tool_id) "
            "and show its decision, its patch, the input the patch leads to (checked as the "
            "call would) and its stderr. Applies nothing, calls no tool, records no run. "
            "Operator only.",
            input_schema=tool_input(
                {"hook_id": HOOK_REF},
                {
                    "event": described(enum(*EVENTS), "Default: the hook's event."),
                    "payload": described(OPEN_OBJECT, "The payload to send, as is."),
                    "tool_id": described(STRING, "Build a sample payload for this tool."),
                    "tool_input": described(OPEN_OBJECT, "The sample's tool_input."),
                    "session_id": described(
                        STRING, "The sample's calling session (its context is read)."
                    ),
                },
            ),
            output_schema=TEST_RESULT,
            handler=_test,
            risk=Risk.MUTATING,
            toolsets=HOOKS,
            preview=_test_preview,
            operator_only=True,
        ),
    ]
