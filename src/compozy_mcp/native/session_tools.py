"""The session tools: ``compozy__session_*``."""

from __future__ import annotations

from typing import Any

from compozy_mcp.cursors import cursor_schema
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Handler, Risk, ToolDefinition
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
from compozy_mcp.sessions.ledger import Fences
from compozy_mcp.sessions.lifecycle import SESSION_CURSOR, SessionFilter
from compozy_mcp.sessions.model import Selection
from compozy_mcp.sessions.record_schema import (
    SESSION_COMPACT,
    SESSION_ID,
    SESSION_RECORD,
    SESSION_RESULT,
    SESSION_STATES,
)
from compozy_mcp.sessions.spawning import SpawnRequest, request_digest
from compozy_mcp.validation import LINE_OF_TEXT
from compozy_mcp.views import KEEP, Each, Fields, ViewSpec

SESSIONS = ("compozy__sessions",)

#: Fields that follow-up calls take as input; compact must keep them.
SESSION_FOLLOW_UP = (
    "session.id",
    "session.transcript_epoch",
    "session.runtime.generation",
    "session.runtime.selection_revision",
)
SESSION_VIEWS = ViewSpec(Fields({"session": SESSION_COMPACT}), follow_up=SESSION_FOLLOW_UP)

FENCE_DOC = "The session's {} as last read; pass 0 when the record omits it."
TRANSCRIPT_EPOCH = described(COUNT, FENCE_DOC.format("transcript_epoch"))
GENERATION = described(COUNT, FENCE_DOC.format("runtime.generation"))
SELECTION_REVISION = described(COUNT, FENCE_DOC.format("runtime.selection_revision"))
AGENT_NAME = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}
NAME = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": LINE_OF_TEXT}
PROMPT = {"type": "string", "minLength": 1, "maxLength": 100_000}
SELECTION_INPUT = {
    "provider": described(
        {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$"},
        "The agent that runs the session: claude, codex, gemini, echo, or one defined in "
        "agents.yaml (compozy__agent_list lists them with their models).",
    ),
    "model": described(STRING, "One of the agent's models; default: its default model."),
    "reasoning_effort": described(STRING, "One of the agent's reasoning efforts."),
}
WORKSPACE_ID = described(STRING, "Workspace id; default ws_default.")
PROFILE_ID = described(STRING, "Profile id; default prof_default.")
BRANCH = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "Git branch the session works on; with worktree, the new branch to create (default "
    "compozy/<name>).",
)
WORKTREE = described(
    BOOLEAN,
    "Work in a git worktree of its own (under $COMPOZY_HOME/worktrees), on a new branch.",
)
BASE = described(
    {"type": "string", "minLength": 1, "maxLength": 200},
    "With worktree: the commit or branch to start from; default the workspace's HEAD.",
)
LIMIT = {"type": "integer", "minimum": 1, "maximum": 200, "description": "Page size; default 50."}
NEEDS_PROVIDER = {"dependentRequired": {"model": ["provider"], "reasoning_effort": ["provider"]}}
NEEDS_PROVIDER_OR_WORKTREE = {
    "dependentRequired": {**NEEDS_PROVIDER["dependentRequired"], "base": ["worktree"]}
}


def _session_preview(result: dict[str, Any]) -> str:
    session = result["session"]
    return f"{session['id']} {session['state']} ({session['badge']})"


def _fences(args: dict[str, Any], *names: str) -> Fences:
    return {name: int(args[name]) for name in names}


def _session_tool(
    name: str,
    description: str,
    handler: Handler,
    input_schema: dict[str, Any],
    *,
    risk: Risk = Risk.MUTATING,
    idempotent: bool = False,
    acts_on: tuple[str, ...] = ("session_id",),
    answers_at_once: bool = False,
) -> ToolDefinition:
    return ToolDefinition(
        id=f"compozy__session_{name}",
        description=description,
        input_schema=input_schema,
        output_schema=SESSION_RESULT,
        handler=handler,
        risk=risk,
        toolsets=SESSIONS,
        views=SESSION_VIEWS,
        preview=_session_preview,
        idempotent=idempotent,
        acts_on=acts_on,
        answers_at_once=answers_at_once,
    )


ONLY_SESSION_ID = tool_input({"session_id": SESSION_ID})


async def _status(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"session": await call.services.sessions.status(call.info, args["session_id"])}


async def _create(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    record = await call.services.sessions.create(
        call.info,
        agent_name=args["agent_name"],
        session_id=args.get("session_id"),
        name=args.get("name"),
        workspace_id=args.get("workspace_id"),
        profile_id=args.get("profile_id"),
        session_type=args.get("type", "user"),
        branch=args.get("branch"),
        provider=args.get("provider"),
        model=args.get("model"),
        reasoning_effort=args.get("reasoning_effort"),
        worktree=args.get("worktree", False),
        base=args.get("base"),
    )
    return {"session": record}


async def _archive(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"session": await call.services.sessions.archive(call.info, args["session_id"])}


async def _unarchive(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"session": await call.services.sessions.unarchive(call.info, args["session_id"])}


async def _rename(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    name = args["name"].strip()
    return {"session": await call.services.sessions.rename(call.info, args["session_id"], name)}


async def _stop(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "session": await call.services.sessions.stop(
            call.info, args["session_id"], args.get("reason")
        )
    }


async def _delete(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": await call.services.sessions.delete(call.info, args["session_id"])}


DELETED = obj(
    {
        "deleted": obj(
            {
                "session_id": STRING,
                "sessions": strings(),
                "transcript_turns": COUNT,
                "artifacts": COUNT,
            }
        )
    }
)


async def _runtime_set(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    selection = Selection(
        provider=args["provider"],
        model=args.get("model"),
        reasoning_effort=args.get("reasoning_effort"),
    )
    fences = _fences(args, "selection_revision", "generation")
    return {
        "session": await call.services.sessions.runtime_set(
            call.info, args["session_id"], selection, fences
        )
    }


async def _runtime_clear(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {"session": await call.services.sessions.runtime_clear(call.info, args["session_id"])}


async def _rewind(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    fences = _fences(args, "transcript_epoch", "generation")
    record = await call.services.sessions.rewind(
        call.info, args["session_id"], args.get("to_turn", 0), fences
    )
    return {"session": record}


async def _continue(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    fences = _fences(args, "transcript_epoch", "generation")
    record = await call.services.sessions.continue_(
        call.info, args["session_id"], args.get("prompt"), fences
    )
    return {"session": record}


async def _fork(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    record = await call.services.sessions.fork(
        call.info,
        args["session_id"],
        fences=_fences(args, "transcript_epoch"),
        at_turn=args.get("at_turn"),
        name=args.get("name"),
    )
    return {"session": record}


SESSION_PAGE = obj({"sessions": array(SESSION_RECORD)}, {"next_cursor": STRING})
SESSION_LIST_VIEWS = ViewSpec(
    Fields({"sessions": Each(SESSION_COMPACT), "next_cursor": KEEP}),
    follow_up=("sessions[].id", "next_cursor"),
)


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    page = await call.services.sessions.list_sessions(call.info, SessionFilter(**args))
    out: dict[str, Any] = {"sessions": page.records}
    if page.next_cursor is not None:
        out["next_cursor"] = page.next_cursor
    return out


def _list_preview(result: dict[str, Any]) -> str:
    count = len(result["sessions"])
    more = "; more with next_cursor" if "next_cursor" in result else ""
    return f"{count} session{'s' if count != 1 else ''}{more}"


SPAWN_PERMISSION_INPUT = {
    kind: strings(
        uniqueItems=True, description=f"Narrow the child's {kind}; default: the parent's."
    )
    for kind in ("tools", "skills", "mcp_servers", "workspace_paths")
}
SPAWN_RESULT = obj(
    {
        "session_id": STRING,
        "spawn_role": STRING,
        "spawn_depth": {"type": "integer", "minimum": 1},
        "ttl_expires_at": TIMESTAMP,
        "permissions": obj(
            {
                "tools": strings(),
                "skills": strings(),
                "mcp_servers": strings(),
                "workspace_paths": strings(),
            }
        ),
    },
    {
        "prompt": obj(
            {
                "prompt_id": STRING,
                "turn": {"type": "integer", "minimum": 1},
                "status": enum("queued"),
            }
        ),
        "worktree": obj({"worktree_id": STRING, "branch": STRING}),
    },
)
SPAWN_VIEWS = ViewSpec(
    Fields.of("session_id", "spawn_role", "spawn_depth", "ttl_expires_at", "prompt", "worktree"),
    follow_up=("session_id",),
)


async def _spawn(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    request = SpawnRequest(
        parent_session_id=args.get("parent_session_id"),
        agent_name=args["agent_name"],
        ttl_seconds=args["ttl_seconds"],
        name=args.get("name"),
        spawn_role=args.get("spawn_role", "worker"),
        prompt=args.get("prompt"),
        worktree=args.get("worktree", False),
        branch=args.get("branch"),
        base=args.get("base"),
        tools=args.get("tools"),
        skills=args.get("skills"),
        mcp_servers=args.get("mcp_servers"),
        workspace_paths=args.get("workspace_paths"),
        auto_stop_on_parent=args.get("auto_stop_on_parent", True),
        notify_creator=args.get("notify_creator", False),
        idempotency_key=args.get("idempotency_key"),
        digest=request_digest({k: v for k, v in args.items() if k != "idempotency_key"}),
    )
    return await call.services.sessions.spawn(
        call.info,
        request,
        provider=args.get("provider"),
        model=args.get("model"),
        reasoning_effort=args.get("reasoning_effort"),
    )


def session_tools() -> list[ToolDefinition]:
    return [
        _session_tool(
            "create",
            "Create a session for an agent, in the default workspace and profile unless given. "
            "provider/model/reasoning_effort record a runtime selection; runtime_set or "
            "continue binds it.",
            _create,
            tool_input(
                {"agent_name": described(AGENT_NAME, "Agent that runs the session.")},
                {
                    "session_id": {
                        "type": "string",
                        "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$",
                        "description": "Id for the new session; generated when omitted.",
                    },
                    "name": described(NAME, "Display name."),
                    "workspace_id": WORKSPACE_ID,
                    "profile_id": PROFILE_ID,
                    "type": described(enum("user", "automation"), "Session type; default user."),
                    "branch": BRANCH,
                    "worktree": WORKTREE,
                    "base": BASE,
                    **SELECTION_INPUT,
                },
                **NEEDS_PROVIDER_OR_WORKTREE,
            ),
            acts_on=(),  # session_id names the new session
        ),
        _session_tool(
            "status",
            "Read one session.",
            _status,
            ONLY_SESSION_ID,
            risk=Risk.READ,
            idempotent=True,
            answers_at_once=True,
        ),
        ToolDefinition(
            id="compozy__session_list",
            description="List sessions, newest first. Archived sessions are listed only with "
            "archived: true. Pass next_cursor back as cursor for the next page.",
            input_schema=tool_input(
                optional={
                    "workspace_id": described(STRING, "Only this workspace's sessions."),
                    "state": described(enum(*SESSION_STATES), "Only sessions in this state."),
                    "archived": described(BOOLEAN, "List archived sessions instead."),
                    "parent_session_id": described(STRING, "Only children of this session."),
                    "agent_name": described(STRING, "Only this agent's sessions."),
                    "limit": LIMIT,
                    "cursor": cursor_schema(SESSION_CURSOR),
                }
            ),
            output_schema=SESSION_PAGE,
            handler=_list,
            risk=Risk.READ,
            toolsets=SESSIONS,
            views=SESSION_LIST_VIEWS,
            preview=_list_preview,
            idempotent=True,
            acts_on=("parent_session_id",),
            answers_at_once=True,
        ),
        _session_tool(
            "archive",
            "Archive a session (it stays readable; list it with archived: true).",
            _archive,
            ONLY_SESSION_ID,
            idempotent=True,
        ),
        _session_tool(
            "unarchive",
            "Return an archived session to the board.",
            _unarchive,
            ONLY_SESSION_ID,
            idempotent=True,
        ),
        _session_tool(
            "rename",
            "Rename a session.",
            _rename,
            tool_input({"session_id": SESSION_ID, "name": described(NAME, "New display name.")}),
            idempotent=True,
        ),
        _session_tool(
            "stop",
            "Stop a session: unbind its runtime and cancel pending interactions. Children "
            "spawned with auto_stop_on_parent stop too.",
            _stop,
            tool_input(
                {"session_id": SESSION_ID}, {"reason": described(NAME, "Recorded as stop_detail.")}
            ),
            risk=Risk.DESTRUCTIVE,
            idempotent=True,
        ),
        ToolDefinition(
            id="compozy__session_delete",
            description="Delete an archived session and all its descendants, with their "
            "transcripts and the artifacts only they stored. Cannot be undone.",
            input_schema=ONLY_SESSION_ID,
            output_schema=DELETED,
            handler=_delete,
            risk=Risk.DESTRUCTIVE,
            toolsets=SESSIONS,
            preview=lambda r: f"deleted {len(r['deleted']['sessions'])} session(s)",
            acts_on=("session_id",),
        ),
        ToolDefinition(
            id="compozy__session_spawn",
            description="Spawn a child session of the calling session (or parent_session_id), "
            "within the parent's spawn budget, depth and TTL; the child's permissions never "
            "exceed the parent's.",
            input_schema=tool_input(
                {
                    "agent_name": described(AGENT_NAME, "Agent that runs the child."),
                    "ttl_seconds": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Time to live, within the parent's budget.",
                    },
                },
                {
                    "parent_session_id": described(STRING, "Parent; default: the caller."),
                    "name": described(NAME, "Display name."),
                    "spawn_role": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 64,
                        "description": "The child's role, such as reviewer.",
                    },
                    **SELECTION_INPUT,
                    "prompt": described(PROMPT, "First prompt, queued for the child."),
                    "worktree": WORKTREE,
                    "branch": BRANCH,
                    "base": BASE,
                    **SPAWN_PERMISSION_INPUT,
                    "auto_stop_on_parent": described(BOOLEAN, "Stop when the parent stops."),
                    "notify_creator": described(BOOLEAN, "Notify the parent when it ends."),
                    "idempotency_key": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "description": "A retry with the same key returns the first child.",
                    },
                },
                **NEEDS_PROVIDER_OR_WORKTREE,
            ),
            output_schema=SPAWN_RESULT,
            handler=_spawn,
            risk=Risk.MUTATING,
            toolsets=SESSIONS,
            views=SPAWN_VIEWS,
            preview=lambda r: f"{r['session_id']} spawned at depth {r['spawn_depth']}",
            acts_on=("parent_session_id",),
            scope_session_field="parent_session_id",
        ),
        _session_tool(
            "fork",
            "Fork a session into a new one with a copy of its transcript (up to at_turn).",
            _fork,
            tool_input(
                {"session_id": SESSION_ID, "transcript_epoch": TRANSCRIPT_EPOCH},
                {
                    "at_turn": described(COUNT, "Copy turns up to this one; default all."),
                    "name": described(NAME, "The fork's display name."),
                },
            ),
        ),
        _session_tool(
            "rewind",
            "Rewind a session's transcript to to_turn (default 0: clear it). Increments "
            "transcript_epoch; a bound runtime is replaced.",
            _rewind,
            tool_input(
                {
                    "session_id": SESSION_ID,
                    "transcript_epoch": TRANSCRIPT_EPOCH,
                    "generation": GENERATION,
                },
                {"to_turn": described(COUNT, "Keep turns before this one; default 0.")},
            ),
            risk=Risk.DESTRUCTIVE,
        ),
        _session_tool(
            "continue",
            "Continue a session: resume it if stopped, bind its selected runtime, and send an "
            "optional prompt.",
            _continue,
            tool_input(
                {
                    "session_id": SESSION_ID,
                    "transcript_epoch": TRANSCRIPT_EPOCH,
                    "generation": GENERATION,
                },
                {"prompt": described(PROMPT, "Prompt to send once bound.")},
            ),
        ),
        _session_tool(
            "runtime_set",
            "Select and bind a session's runtime (provider, model, reasoning effort).",
            _runtime_set,
            tool_input(
                {
                    "session_id": SESSION_ID,
                    "provider": SELECTION_INPUT["provider"],
                    "selection_revision": SELECTION_REVISION,
                    "generation": GENERATION,
                },
                {
                    "model": SELECTION_INPUT["model"],
                    "reasoning_effort": SELECTION_INPUT["reasoning_effort"],
                },
            ),
        ),
        _session_tool(
            "runtime_clear",
            "Clear a session's runtime selection and unbind its runtime.",
            _runtime_clear,
            ONLY_SESSION_ID,
            idempotent=True,
        ),
    ]
