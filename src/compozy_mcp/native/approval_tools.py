"""The approval tools: ``compozy__tool_approvals_list`` / ``_set`` / ``_revoke`` (remembered
approvals and permission modes) and ``compozy__session_approve`` (answering a session's pending
interaction).

Who may act:

- ``_list`` is open to every caller its policy allows; a managed session sees the grants of its
  own workspace only.
- ``_set`` and ``_revoke`` are the operator's alone (``operator_only``): a session that could
  grant itself approvals would need none.
- ``compozy__session_approve`` answers an interaction of the named session: the operator answers
  any; a managed session answers those of its descendants (a supervising parent), never its own
  (``approval_self``), its parent's or a sibling's (``session_not_in_scope``). It is never itself
  held for approval: it is the answer.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.errors import ToolInvalidInput
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition, count_preview
from compozy_mcp.schemas import (
    BOOLEAN,
    OPEN_OBJECT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.views import Each, Fields, ViewSpec

TOOL_APPROVALS = ("compozy__tool_approvals",)
SESSIONS = ("compozy__sessions",)
#: as in compozy_mcp.approvals (which this layer does not import)
PERMISSION_MODES = ("default", "accept_edits", "bypass", "plan")
APPROVAL_DECISIONS = ("allow-once", "allow-always", "reject-once", "reject-always")
DIGEST = described(
    {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    'The approval digest of an input: "sha256:" + hex SHA-256 of its canonical JSON with '
    "result_view removed (docs/approvals.md).",
)
ID = {"type": "string", "minLength": 1, "maxLength": 200}

GRANT = obj(
    {
        "id": STRING,
        "scope": described(
            enum("input", "agent", "tool"),
            "input: one exact input of one agent; agent: every input of one agent; tool: every "
            "input of any agent, in the workspace.",
        ),
        "workspace_id": STRING,
        "tool_id": STRING,
        "decision": enum("allow", "reject"),
        "profile_archived": described(
            BOOLEAN, "The profile of the session whose answer made the grant is gone."
        ),
        "source": enum("answer", "operator"),
        "created_at": TIMESTAMP,
    },
    {
        "agent_name": STRING,
        "input_digest": STRING,
        "profile_id": STRING,
        "tool_input": described(OPEN_OBJECT, "The input the grant was answered on, as sent."),
    },
    order=(
        "id",
        "scope",
        "workspace_id",
        "agent_name",
        "tool_id",
        "input_digest",
        "decision",
        "profile_archived",
        "profile_id",
        "source",
        "tool_input",
        "created_at",
    ),
)
LIST_VIEWS = ViewSpec(
    Fields(
        {
            "grants": Each(
                Fields.of(
                    "id",
                    "scope",
                    "workspace_id",
                    "agent_name",
                    "tool_id",
                    "input_digest",
                    "decision",
                    "profile_archived",
                )
            )
        }
    ),
    follow_up=("grants[].id",),
)
MODE_RECORD = obj({"session_id": STRING, "permission_mode": enum(*PERMISSION_MODES)})


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.approvals.list_grants(call.info, args)


async def _set(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    approvals = call.services.approvals
    if "permission_mode" in args:
        extra = sorted(set(args) - {"permission_mode", "session_id"})
        if "session_id" not in args or extra:
            raise ToolInvalidInput(
                call.tool_id,
                f'tool "{call.tool_id}" sets a permission mode with "session_id" and '
                '"permission_mode" only',
            )
        mode = args["permission_mode"]
        return {"mode": await approvals.set_mode(call.info, args["session_id"], mode)}
    for name in ("tool_id", "decision"):
        if name not in args:
            raise ToolInvalidInput.for_field(
                call.tool_id, name, "is required to remember an approval"
            )
    if "session_id" in args:
        raise ToolInvalidInput.for_field(
            call.tool_id, "session_id", "goes with permission_mode only"
        )
    if ("input" in args or "input_digest" in args) and "agent_name" not in args:
        raise ToolInvalidInput.for_field(
            call.tool_id, "agent_name", "is required with input or input_digest"
        )
    return await approvals.set_grant(call.info, args)


async def _revoke(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.approvals.revoke(call.info, args["grant_id"])


async def _approve(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.approvals.answer(
        call.info, args["session_id"], args["interaction_id"], args["decision"]
    )


def _set_preview(result: dict[str, Any]) -> str:
    if "mode" in result:
        mode = result["mode"]
        return f"{mode['session_id']}: permission mode {mode['permission_mode']}"
    grant = result["grant"]
    return f"{grant['id']}: {grant['decision']} {grant['tool_id']} ({grant['scope']})"


def _approve_preview(result: dict[str, Any]) -> str:
    return f"{result['interaction_id']}: {result['decision']}"


def approval_tools() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            id="compozy__tool_approvals_list",
            description="Remembered approvals (grants): which tool calls run or are refused "
            "without asking, by workspace, agent, tool and input digest.",
            input_schema=tool_input(
                optional={
                    "workspace_id": described(ID, "Only this workspace's grants."),
                    "agent_name": described(ID, "Only grants for this agent."),
                    "tool_id": described(ID, "Only grants for this tool."),
                }
            ),
            output_schema=obj({"grants": array(GRANT)}),
            handler=_list,
            risk=Risk.READ,
            toolsets=TOOL_APPROVALS,
            views=LIST_VIEWS,
            preview=count_preview("grants", "grant"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__tool_approvals_set",
            description="Remember an approval: allow or reject calls of tool_id in a workspace "
            "(default: the default workspace), by one agent_name or any, for one input (or "
            "its input_digest) or any. Or set a session's permission_mode (default, "
            "accept_edits, bypass, plan) with session_id; its descendants inherit it.",
            input_schema=tool_input(
                optional={
                    "tool_id": described(ID, "The tool the grant is for."),
                    "decision": described(enum("allow", "reject"), "Allow or reject such calls."),
                    "workspace_id": described(ID, "Default: the default workspace."),
                    "agent_name": described(ID, "Only this agent's calls; default: any agent."),
                    "input": described(OPEN_OBJECT, "The call's input (result_view ignored)."),
                    "input_digest": DIGEST,
                    "profile_id": described(ID, "The profile the grant is shown under."),
                    "session_id": described(ID, "With permission_mode: the session to set."),
                    "permission_mode": described(
                        enum(*PERMISSION_MODES), "Set the session's mode (with session_id only)."
                    ),
                }
            ),
            output_schema=obj(optional={"grant": GRANT, "mode": MODE_RECORD}),
            handler=_set,
            risk=Risk.DESTRUCTIVE,
            toolsets=TOOL_APPROVALS,
            preview=_set_preview,
            idempotent=True,
            operator_only=True,
        ),
        ToolDefinition(
            id="compozy__tool_approvals_revoke",
            description="Forget a remembered approval; later calls it decided are asked again.",
            input_schema=tool_input(
                {"grant_id": described(ID, "grants[].id of the grant to forget.")}
            ),
            output_schema=obj({"revoked": GRANT}),
            handler=_revoke,
            risk=Risk.DESTRUCTIVE,
            toolsets=TOOL_APPROVALS,
            preview=lambda result: f"{result['revoked']['id']} revoked",
            operator_only=True,
        ),
        ToolDefinition(
            id="compozy__session_approve",
            description="Answer a session's pending interaction. For an approval: allow-once, "
            "allow-always, reject-once or reject-always; the session's agent then retries the "
            "same call. For an agent's permission request: one of the option ids it offered.",
            input_schema=tool_input(
                {
                    "session_id": described(ID, "The session that waits."),
                    "interaction_id": described(ID, "pending_interactions[].interaction_id"),
                    "decision": described(
                        ID,
                        "approval: "
                        + ", ".join(APPROVAL_DECISIONS)
                        + "; permission: one of the interaction's choices.",
                    ),
                }
            ),
            output_schema=obj(
                {
                    "session_id": STRING,
                    "interaction_id": STRING,
                    "kind": STRING,
                    "decision": STRING,
                },
                {
                    "title": STRING,
                    "turn_id": STRING,
                    "tool_id": STRING,
                    "grant": GRANT,
                    "next": described(STRING, "What happens to the call now."),
                    "options": strings(),
                },
                closed=False,
            ),
            handler=_approve,
            risk=Risk.MUTATING,
            toolsets=SESSIONS,
            preview=_approve_preview,
            acts_on=("session_id",),
            asks_approval=False,
        ),
    ]
