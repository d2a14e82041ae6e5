"""The worktree tools: ``compozy__worktree_list``, ``_inspect``, ``_create``, ``_remove``, and
the hand-off of a session's work: ``compozy__session_diff``, ``compozy__session_merge`` and
``compozy__session_pull_request``.

Who may act: a tool that takes a ``session_id`` acts on that session (``acts_on``), and a tool
that takes a ``worktree_id`` on the session that owns the worktree (checked by the session
service): a managed session may name only itself or a descendant, never its parent or a
sibling. Listing shows a managed session the worktrees of itself and its descendants only.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition, count_preview
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.sessions.record_schema import SESSION_ID, WORKTREE, WORKTREE_STATES
from compozy_mcp.sessions.worktrees import MERGE_MODES
from compozy_mcp.views import Each, Fields, ViewSpec

WORKTREES = ("compozy__worktree",)
SESSIONS = ("compozy__sessions",)

WORKTREE_ID = described(STRING, "Worktree id (wt-...).")
BRANCH_NAME = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "Branch to create; default compozy/<session name>.",
)
BASE = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "Commit or branch the worktree starts from; default the workspace's HEAD.",
)
_BASE_FIELDS = WORKTREE["properties"]

#: a worktree as the worktree tools return it
WORKTREE_RECORD = obj(
    {
        "worktree_id": STRING,
        "session_id": STRING,
        "workspace_id": STRING,
        "branch": STRING,
        "path": STRING,
        "directory": STRING,
        "state": enum(*WORKTREE_STATES),
        "base": _BASE_FIELDS["base"],
        "repository": STRING,
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    {
        "changes": _BASE_FIELDS["changes"],
        "merged": _BASE_FIELDS["merged"],
        "head": STRING,
        "uncommitted": COUNT,
        "dirty": strings(),
        "removed_at": TIMESTAMP,
        "work_in_progress_commit": STRING,
    },
    order=(
        "worktree_id",
        "session_id",
        "workspace_id",
        "branch",
        "path",
        "directory",
        "state",
        "base",
        "changes",
        "merged",
        "repository",
        "head",
        "uncommitted",
        "dirty",
        "created_at",
        "updated_at",
        "removed_at",
        "work_in_progress_commit",
    ),
)
#: what compact keeps of a worktree: who and where, its state, what it holds
WORKTREE_COMPACT = Fields.of(
    "worktree_id",
    "session_id",
    "workspace_id",
    "branch",
    "directory",
    "state",
    "changes",
    "merged",
    "head",
    "uncommitted",
)

FILE_CHANGE = obj(
    {
        "path": STRING,
        "status": enum("added", "modified", "deleted", "renamed", "copied", "type_changed"),
    },
    {"old_path": STRING, "added": COUNT, "removed": COUNT, "binary": {"const": True}},
    order=("path", "status", "old_path", "added", "removed", "binary"),
)
DIFF = obj(
    {
        "session_id": STRING,
        "worktree_id": STRING,
        "branch": STRING,
        "base": _BASE_FIELDS["base"],
        "head": obj({"commit": STRING, "uncommitted": BOOLEAN}),
        "totals": obj({"files": COUNT, "added": COUNT, "removed": COUNT}),
        "files": array(FILE_CHANGE),
        "patch": STRING,
    },
    {"truncated": obj({"files_shown": COUNT, "files_total": COUNT})},
    order=(
        "session_id",
        "worktree_id",
        "branch",
        "base",
        "head",
        "totals",
        "files",
        "truncated",
        "patch",
    ),
)
DIFF_VIEWS = ViewSpec(
    Fields.of(
        "session_id",
        "worktree_id",
        "branch",
        "base",
        "head",
        "totals",
        "files",
        "truncated",
    ),
    follow_up=("session_id", "worktree_id"),
)

MERGE_RESULT = obj(
    {
        "session_id": STRING,
        "worktree_id": STRING,
        "branch": STRING,
        "into": STRING,
        "mode": enum(*MERGE_MODES),
        "outcome": enum("fast_forward", "merge_commit", "squashed", "up_to_date"),
        "previous": STRING,
        "commit": STRING,
    },
    {"committed_work_in_progress": BOOLEAN, "merged_at": TIMESTAMP},
)
PULL_REQUEST_RESULT = obj(
    {
        "session_id": STRING,
        "branch": STRING,
        "into": STRING,
        "remote": STRING,
        "created": BOOLEAN,
        "pull_request": obj(
            {
                "number": {"type": "integer", "minimum": 1},
                "url": STRING,
                "state": enum("open", "draft", "merged", "closed"),
            },
            {"title": STRING},
        ),
    }
)


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    rows = await call.services.sessions.list_worktrees(
        call.info,
        workspace_id=args.get("workspace_id"),
        session_id=args.get("session_id"),
        include_removed=args.get("include_removed", False),
        limit=args.get("limit", 200),
    )
    return {"worktrees": rows}


async def _inspect(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "worktree": await call.services.sessions.inspect_worktree(call.info, args["worktree_id"])
    }


async def _create(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    record = await call.services.sessions.create_worktree(
        call.info, args["session_id"], branch=args.get("branch"), base=args.get("base")
    )
    return {"worktree": record}


async def _remove(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    record = await call.services.sessions.remove_worktree(
        call.info, args["worktree_id"], force=args.get("force", False)
    )
    return {"worktree": record}


async def _diff(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.sessions.diff(call.info, args["session_id"])


async def _merge(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.sessions.merge(
        call.info,
        args["session_id"],
        into=args.get("into"),
        mode=args.get("mode", "merge"),
        message=args.get("message"),
    )


async def _pull_request(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.sessions.pull_request(
        call.info,
        args["session_id"],
        into=args.get("into"),
        title=args.get("title"),
        body=args.get("body"),
        draft=args.get("draft", False),
        remote=args.get("remote", "origin"),
    )


def _worktree_preview(result: dict[str, Any]) -> str:
    tree = result["worktree"]
    return f"{tree['worktree_id']} {tree['state']} on {tree['branch']}"


def _diff_preview(result: dict[str, Any]) -> str:
    totals = result["totals"]
    files = totals["files"]
    return (
        f"{files} file{'' if files == 1 else 's'} changed, +{totals['added']} -{totals['removed']}"
    )


INTO = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "Branch to merge into; default the branch the worktree was made from.",
)
SINGLE_WORKTREE = obj({"worktree": WORKTREE_RECORD})


def worktree_tools() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            id="compozy__worktree_list",
            description="List the git worktrees sessions work in, newest first (removed ones "
            "with include_removed).",
            input_schema=tool_input(
                optional={
                    "workspace_id": described(STRING, "Only this workspace's worktrees."),
                    "session_id": described(STRING, "Only this session's worktrees."),
                    "include_removed": described(BOOLEAN, "List removed worktrees too."),
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 500,
                        "description": "At most this many; default 200.",
                    },
                }
            ),
            output_schema=obj({"worktrees": array(WORKTREE_RECORD)}),
            handler=_list,
            risk=Risk.READ,
            toolsets=WORKTREES,
            views=ViewSpec(
                Fields({"worktrees": Each(WORKTREE_COMPACT)}),
                follow_up=("worktrees[].worktree_id", "worktrees[].session_id"),
            ),
            preview=count_preview("worktrees", "worktree"),
            idempotent=True,
            acts_on=("session_id",),
        ),
        ToolDefinition(
            id="compozy__worktree_inspect",
            description="Read one worktree, with its checked-out commit and the files that "
            "have uncommitted changes.",
            input_schema=tool_input({"worktree_id": WORKTREE_ID}),
            output_schema=SINGLE_WORKTREE,
            handler=_inspect,
            risk=Risk.READ,
            toolsets=WORKTREES,
            views=ViewSpec(
                Fields({"worktree": WORKTREE_COMPACT}),
                follow_up=("worktree.worktree_id", "worktree.session_id"),
            ),
            preview=_worktree_preview,
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__worktree_create",
            description="Give a session without one a git worktree of its own: its branch "
            "checked out again if it has one, else a new branch from base. Its agent must not "
            "be running.",
            input_schema=tool_input(
                {"session_id": SESSION_ID}, {"branch": BRANCH_NAME, "base": BASE}
            ),
            output_schema=SINGLE_WORKTREE,
            handler=_create,
            risk=Risk.MUTATING,
            toolsets=WORKTREES,
            preview=_worktree_preview,
            acts_on=("session_id",),
        ),
        ToolDefinition(
            id="compozy__worktree_remove",
            description="Remove a worktree's directory; its branch stays. Uncommitted changes "
            "refuse it (worktree_dirty) unless force, which commits them to the branch first.",
            input_schema=tool_input(
                {"worktree_id": WORKTREE_ID},
                {
                    "force": described(
                        BOOLEAN, "Commit uncommitted changes to the branch, then remove it."
                    )
                },
            ),
            output_schema=SINGLE_WORKTREE,
            handler=_remove,
            risk=Risk.DESTRUCTIVE,
            toolsets=WORKTREES,
            preview=_worktree_preview,
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__session_diff",
            description="What a session changed in its worktree, against the commit the "
            "worktree was made from, uncommitted changes included: files with their status "
            "and line counts, and (full) the unified patch.",
            input_schema=tool_input({"session_id": SESSION_ID}),
            output_schema=DIFF,
            handler=_diff,
            risk=Risk.READ,
            toolsets=SESSIONS,
            views=DIFF_VIEWS,
            preview=_diff_preview,
            idempotent=True,
            acts_on=("session_id",),
        ),
        ToolDefinition(
            id="compozy__session_merge",
            description="Merge a session's work (its branch, uncommitted changes committed to "
            "it first) into a branch: fast_forward, merge (default) or squash. A conflict "
            "fails with merge_conflict and changes nothing.",
            input_schema=tool_input(
                {"session_id": SESSION_ID},
                {
                    "into": INTO,
                    "mode": described(enum(*MERGE_MODES), "How to merge; default merge."),
                    "message": described(
                        {"type": "string", "minLength": 1, "maxLength": 10_000},
                        "Message of the merge or squash commit.",
                    ),
                },
            ),
            output_schema=MERGE_RESULT,
            handler=_merge,
            risk=Risk.MUTATING,
            toolsets=SESSIONS,
            preview=lambda r: f"{r['branch']} -> {r['into']}: {r['outcome']}",
            acts_on=("session_id",),
        ),
        ToolDefinition(
            id="compozy__session_pull_request",
            description="Push a session's branch and open a pull request for it with the "
            "GitHub CLI (gh); the session records it. Without gh, fails with the commands "
            "that do it by hand.",
            input_schema=tool_input(
                {"session_id": SESSION_ID},
                {
                    "into": described(
                        {"type": "string", "minLength": 1, "maxLength": 200},
                        "Base branch of the pull request; default the worktree's base branch.",
                    ),
                    "title": described(
                        {"type": "string", "minLength": 1, "maxLength": 256},
                        "Title; default the session's name.",
                    ),
                    "body": described(
                        {"type": "string", "maxLength": 65_536}, "Description of the change."
                    ),
                    "draft": described(BOOLEAN, "Open it as a draft."),
                    "remote": described(
                        {"type": "string", "minLength": 1, "maxLength": 200},
                        "Remote to push to; default origin.",
                    ),
                },
            ),
            output_schema=PULL_REQUEST_RESULT,
            handler=_pull_request,
            risk=Risk.OPEN_WORLD,
            toolsets=SESSIONS,
            preview=lambda r: (
                f"pull request #{r['pull_request']['number']}: {r['pull_request']['url']}"
            ),
            acts_on=("session_id",),
        ),
    ]
