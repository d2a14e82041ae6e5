"""The catalog tools: ``compozy__tool_*`` (contracts on demand) and ``compozy__skill_*``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import ResourceNotFound, ToolConflict
from compozy_mcp.info.descriptors import DESCRIPTOR_SCHEMA
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolDefinition
from compozy_mcp.native.schemas import (
    BOOLEAN,
    INTEGER,
    STRING,
    array,
    described,
    enum,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.sessions.policy import allows
from compozy_mcp.skills import SkillNotFound, SkillUnreadable
from compozy_mcp.skills.schema import (
    SKILL_SEARCH_ITEM_SCHEMA,
    SKILL_SUMMARY_SCHEMA,
    SKILL_VIEW_SCHEMA,
)
from compozy_mcp.views import KEEP, Each, Fields, ListRule, ViewSpec

CATALOG = ("compozy__bootstrap", "compozy__catalog")
SKILLS = ("compozy__catalog",)
TOOL_CURSOR = "t"
TOOL_ID_INPUT = described(STRING, "A tool id, such as compozy__session_status.")


# --- tools ----------------------------------------------------------------------------------


async def _tool_info(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    catalog = call.services.catalog
    tool = catalog.find_visible(args["tool_id"], call.scope)
    if tool is None:
        raise ResourceNotFound(call.tool_id, "tool", args["tool_id"])
    return {"tool": {"descriptor": catalog.descriptor(tool)}}


TOOL_SUMMARY = obj(
    {
        "id": STRING,
        "description": STRING,
        "risk": enum(*(r.value for r in Risk)),
        "has_result_views": BOOLEAN,
        "toolsets": strings(),
    }
)
TOOL_LIST_ITEM = DESCRIPTOR_SCHEMA
TOOL_LIST_VIEWS = ViewSpec(
    Fields(
        {
            "tools": Each(Fields.of("id", "description", "risk", "has_result_views")),
            "next_cursor": KEEP,
        }
    ),
    follow_up=("tools[].id", "next_cursor"),
)


async def _tool_list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    catalog = call.services.catalog
    tools: Sequence[RegisteredTool] = catalog.visible(call.scope)
    if "toolset" in args:
        tools = [t for t in tools if args["toolset"] in t.definition.toolsets]
    if "risk" in args:
        tools = [t for t in tools if t.risk.value == args["risk"]]
    cursor = args.get("cursor")
    start = decode_cursor(call.tool_id, TOOL_CURSOR, cursor) if cursor is not None else 0
    limit = args.get("limit", 100)
    page = tools[start : start + limit]
    out: dict[str, Any] = {"tools": [catalog.descriptor(t) for t in page]}
    if start + limit < len(tools):
        out["next_cursor"] = encode_cursor(TOOL_CURSOR, start + limit)
    return out


async def _tool_search(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    found = call.services.catalog.search(args["query"], call.scope, args.get("limit", 10))
    return {"query": args["query"], "tools": found}


# --- skills ---------------------------------------------------------------------------------


def _clean(diagnostics: dict[str, Any]) -> bool:
    return bool(
        diagnostics["valid"]
        and diagnostics["verified"]
        and not diagnostics["warnings"]
        and not diagnostics["failures"]
        and not diagnostics.get("activation_reason")
    )


ALL_DIAGNOSTICS_CLEAN = ListRule(
    holds=lambda items: all(_clean(item["diagnostics"]) for item in items),
    description="when every diagnostic is valid, verified, and has no warning, failure or "
    "activation reason",
)
SKILL_COMPACT_ITEM = Fields.of("name", "description", "scope", "tags", "diagnostics")


def _skill_views(*extra: str) -> ViewSpec:
    item = Fields({**SKILL_COMPACT_ITEM.fields, **dict.fromkeys(extra, KEEP)})
    return ViewSpec(
        Fields({"skills": Each(item, drop_when={"diagnostics": ALL_DIAGNOSTICS_CLEAN})}),
        follow_up=("skills[].name",),
    )


def _workspace_path(call: ToolCall, args: dict[str, Any]) -> Path:
    """The workspace whose skills a call sees: the one asked for, else the caller's."""
    sessions = call.services.sessions
    workspace_id = args.get("workspace_id")
    if workspace_id is None and call.scope.session_id is not None:
        workspace = sessions.workspace_of(call.info, call.scope.session_id)
    else:
        workspace = sessions.workspace(workspace_id)
    if workspace is None:
        raise ResourceNotFound(call.tool_id, "workspace", str(workspace_id))
    return Path(workspace.path)


def _allowed_skills(call: ToolCall, skills: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if call.scope.session_id is None:
        return skills
    policy = call.services.sessions.policy(call.scope.session_id)
    entries = policy.skills if policy else []
    return [skill for skill in skills if allows(entries, skill["name"])]


async def _skill_list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    skills = call.services.skills.list(_workspace_path(call, args))
    return {"skills": _allowed_skills(call, skills)}


async def _skill_search(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    path = _workspace_path(call, args)
    found = call.services.skills.search(args["query"], path, limit=args.get("limit", 20))
    return {"skills": _allowed_skills(call, found)}


async def _skill_view(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    name = args["name"]
    path = _workspace_path(call, args)
    if not _allowed_skills(call, [{"name": name}]):
        raise ResourceNotFound(call.tool_id, "skill", name)
    try:
        return {"skill": call.services.skills.view(name, path)}
    except SkillNotFound:
        raise ResourceNotFound(call.tool_id, "skill", name) from None
    except SkillUnreadable as exc:
        raise ToolConflict(
            call.tool_id, f'skill "{name}" cannot be read: {exc.reason}', reason="skill_invalid"
        ) from None


def _count_preview(key: str, noun: str) -> Any:
    def preview(result: dict[str, Any]) -> str:
        count = len(result[key])
        more = "; more with next_cursor" if "next_cursor" in result else ""
        return f"{count} {noun}{'' if count == 1 else 's'}{more}"

    return preview


WORKSPACE_INPUT = described(
    STRING, "Workspace whose .compozy/skills to include; default: the caller's."
)


def catalog_tools() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            id="compozy__tool_info",
            description="Read a tool's contract: input schema, output schema and digests; for "
            "tools with views, both the compact and the full contract (output_views).",
            input_schema=tool_input({"tool_id": TOOL_ID_INPUT}),
            output_schema=obj({"tool": obj({"descriptor": DESCRIPTOR_SCHEMA})}),
            handler=_tool_info,
            risk=Risk.READ,
            toolsets=CATALOG,
            preview=lambda r: r["tool"]["descriptor"]["id"],
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__tool_list",
            description="List the tools this caller may use, optionally by toolset or risk.",
            input_schema=tool_input(
                optional={
                    "toolset": STRING,
                    "risk": enum(*(r.value for r in Risk)),
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                    "cursor": STRING,
                }
            ),
            output_schema=obj({"tools": array(TOOL_LIST_ITEM)}, {"next_cursor": STRING}),
            handler=_tool_list,
            risk=Risk.READ,
            toolsets=CATALOG,
            views=TOOL_LIST_VIEWS,
            preview=_count_preview("tools", "tool"),
            idempotent=True,
            max_result_bytes=1024 * 1024,
        ),
        ToolDefinition(
            id="compozy__tool_search",
            description="Search the tools this caller may use by words of their id, toolsets "
            "and description; best match first.",
            input_schema=tool_input(
                {"query": {"type": "string", "minLength": 1, "maxLength": 500}},
                {"limit": {"type": "integer", "minimum": 1, "maximum": 50}},
            ),
            output_schema=obj(
                {
                    "query": STRING,
                    "tools": array(
                        {
                            **TOOL_SUMMARY,
                            "properties": {**TOOL_SUMMARY["properties"], "score": INTEGER},
                            "required": [*TOOL_SUMMARY["required"], "score"],
                        }
                    ),
                }
            ),
            handler=_tool_search,
            risk=Risk.READ,
            toolsets=CATALOG,
            preview=_count_preview("tools", "match"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__skill_list",
            description="List the skills this caller may use: the user's and the workspace's "
            "(a workspace skill overrides a user skill of the same name).",
            input_schema=tool_input(optional={"workspace_id": WORKSPACE_INPUT}),
            output_schema=obj({"skills": array(SKILL_SUMMARY_SCHEMA)}),
            handler=_skill_list,
            risk=Risk.READ,
            toolsets=SKILLS,
            views=_skill_views(),
            preview=_count_preview("skills", "skill"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__skill_search",
            description="Search skills by words of their name, tags and description.",
            input_schema=tool_input(
                {"query": {"type": "string", "minLength": 1, "maxLength": 500}},
                {
                    "workspace_id": WORKSPACE_INPUT,
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                },
            ),
            output_schema=obj({"skills": array(SKILL_SEARCH_ITEM_SCHEMA)}),
            handler=_skill_search,
            risk=Risk.READ,
            toolsets=SKILLS,
            views=_skill_views("score"),
            preview=_count_preview("skills", "match"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__skill_view",
            description="Read one skill: its front matter, body, files and diagnostics.",
            input_schema=tool_input(
                {"name": {"type": "string", "minLength": 1, "maxLength": 200}},
                {"workspace_id": WORKSPACE_INPUT},
            ),
            output_schema=obj({"skill": SKILL_VIEW_SCHEMA}),
            handler=_skill_view,
            risk=Risk.READ,
            toolsets=SKILLS,
            preview=lambda r: r["skill"]["name"],
            idempotent=True,
        ),
    ]
