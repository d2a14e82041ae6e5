"""The skill tools, ``compozy__skill_*``: list, search and view the skills a caller may use."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio

from compozy_mcp.errors import ResourceNotFound, ToolConflict
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition, count_preview
from compozy_mcp.reasons import Reason
from compozy_mcp.schemas import STRING, array, described, obj, tool_input
from compozy_mcp.sessions.policy import allows
from compozy_mcp.skills import SkillNotFound, SkillUnreadable
from compozy_mcp.skills.schema import (
    SKILL_SEARCH_ITEM_SCHEMA,
    SKILL_SUMMARY_SCHEMA,
    SKILL_VIEW_SCHEMA,
)
from compozy_mcp.views import KEEP, Each, Fields, ListRule, ViewSpec

SKILLS = ("compozy__catalog",)


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
    workspaces = call.services.sessions.workspaces
    workspace_id = args.get("workspace_id")
    if workspace_id is None and call.scope.session_id is not None:
        return Path(workspaces.workspace_of(call.info, call.scope.session_id).path)
    workspace = workspaces.workspace(workspace_id)
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
    # discovery reads and parses files: a thousand skills take a second of a worker thread,
    # never of the event loop
    skills = await anyio.to_thread.run_sync(call.services.skills.list, _workspace_path(call, args))
    return {"skills": _allowed_skills(call, skills)}


async def _skill_search(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    path = _workspace_path(call, args)
    search = functools.partial(call.services.skills.search, limit=args.get("limit", 20))
    found = await anyio.to_thread.run_sync(search, args["query"], path)
    return {"skills": _allowed_skills(call, found)}


async def _skill_view(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    name = args["name"]
    path = _workspace_path(call, args)
    if not _allowed_skills(call, [{"name": name}]):
        raise ResourceNotFound(call.tool_id, "skill", name)
    try:
        return {"skill": await anyio.to_thread.run_sync(call.services.skills.view, name, path)}
    except SkillNotFound:
        raise ResourceNotFound(call.tool_id, "skill", name) from None
    except SkillUnreadable as exc:
        raise ToolConflict(
            call.tool_id,
            f'skill "{name}" cannot be read: {exc.reason}',
            reason=Reason.SKILL_INVALID,
        ) from None


WORKSPACE_INPUT = described(
    STRING, "Workspace whose .compozy/skills to include; default: the caller's."
)


def skill_tools() -> list[ToolDefinition]:
    return [
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
            preview=count_preview("skills", "skill"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__skill_search",
            description="Search skills by words of their name, tags and description.",
            input_schema=tool_input(
                {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 500,
                        "description": "Words to look for.",
                    }
                },
                {
                    "workspace_id": WORKSPACE_INPUT,
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "description": "Most hits; default 20.",
                    },
                },
            ),
            output_schema=obj({"skills": array(SKILL_SEARCH_ITEM_SCHEMA)}),
            handler=_skill_search,
            risk=Risk.READ,
            toolsets=SKILLS,
            views=_skill_views("score"),
            preview=count_preview("skills", "match", "matches"),
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__skill_view",
            description="Read one skill: its front matter, body, files and diagnostics.",
            input_schema=tool_input(
                {
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "description": "Skill name, as listed.",
                    }
                },
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
