"""The agent and turn tools: ``compozy__agent_list``, ``compozy__session_prompt``,
``_prompt_cancel``, ``_wait``, ``_history``, ``_events``, ``_clear`` and
``compozy__command_list``. Answering an agent's permission request is
``compozy__session_approve`` (``native/approval_tools.py``), which hands interactions of kind
``permission`` to the runtime (``runtime/answers.py``).

Who may act: every tool that takes a ``session_id`` acts on that session, so a managed
session may name only itself or a descendant (``acts_on``; ``sessions/access.py``), never its
parent or a sibling; the operator names any. ``compozy__agent_list`` reads definitions only.
"""

from __future__ import annotations

from typing import Any

import anyio

from compozy_mcp.calls import PROGRESS, Progress
from compozy_mcp.errors import ResourceNotFound, ToolBackendFailed, ToolError
from compozy_mcp.native.context import AgentAdmin, ToolCall
from compozy_mcp.native.registry import Handler, Risk, ToolDefinition, count_preview
from compozy_mcp.native.session_tools import (
    GENERATION,
    PROMPT,
    SESSION_VIEWS,
    TRANSCRIPT_EPOCH,
    _fences,
    _session_preview,
)
from compozy_mcp.reasons import Reason
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    NUMBER,
    OPEN_OBJECT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    nullable,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.sessions.record_schema import SESSION_ID, SESSION_RESULT
from compozy_mcp.sessions.turn_record import COMPACT_TURN_FIELDS, PROMPT_CHARS, SUMMARY_CHARS
from compozy_mcp.views import KEEP, Each, Fields, ViewSpec

SESSIONS = ("compozy__sessions",)
AGENTS = ("compozy__agents",)
TURN_STATUSES = ("queued", "running", "completed", "cancelled", "failed")
TEXT_CUT = obj({"text": STRING, "truncated": BOOLEAN})

TURN_RECORD = obj(
    {
        "session_id": STRING,
        "turn_id": STRING,
        "turn": COUNT,
        "epoch": COUNT,
        "status": enum(*TURN_STATUSES),
        "prompt": described(TEXT_CUT, f"The prompt, cut at {PROMPT_CHARS} characters."),
        "summary": described(
            TEXT_CUT,
            f"The agent's final message, cut at {SUMMARY_CHARS} characters (a longer one: its "
            "answer after the last tool call).",
        ),
        "created_at": TIMESTAMP,
        "final_message": STRING,
        "chunks": strings(),
        "thoughts": strings(),
        "tool_calls": array(OPEN_OBJECT),
        "plan": array(OPEN_OBJECT),
    },
    {
        "stop_reason": described(
            STRING,
            "end_turn, max_tokens, max_turn_requests, refusal, cancelled (ACP), or "
            "agent_start_failed, agent_crashed, agent_error, forked, runtime_shutdown, "
            "daemon_restarted",
        ),
        "failure": described(
            obj({"kind": STRING, "summary": STRING}),
            "Why a failed turn failed, as the agent or its start said it.",
        ),
        "started_at": TIMESTAMP,
        "ended_at": TIMESTAMP,
        "usage": OPEN_OBJECT,
        "timings": obj({"duration_ms": NUMBER}, {"first_update_ms": NUMBER}),
    },
    order=COMPACT_TURN_FIELDS,  # the compact fields first, in record order
)
TURN_COMPACT = Fields.of(*COMPACT_TURN_FIELDS)
TURN_VIEWS = ViewSpec(Fields({"turn": TURN_COMPACT}), follow_up=("turn.session_id", "turn.turn_id"))
TURN_RESULT = obj({"turn": TURN_RECORD})

TIMEOUT = described(
    {"type": "integer", "minimum": 1, "maximum": 3600},
    "Seconds to wait for the turn to end (with wait; default 600); the turn goes on after it.",
)


def _agents(call: ToolCall) -> AgentAdmin:
    agents = call.services.agents
    if agents is None:
        raise ToolBackendFailed(call.tool_id, "this process runs no agents")
    return agents


def _turn_preview(result: dict[str, Any]) -> str:
    turn = result["turn"]
    text = f"turn {turn['turn']} {turn['status']}"
    if "stop_reason" in turn:
        text += f" ({turn['stop_reason']})"
    summary = turn["summary"]["text"]
    if summary:
        text += f": {summary[:80]}"
    return text


# --- agents -----------------------------------------------------------------------------------

AGENT_RECORD = obj(
    {
        "name": STRING,
        "provider": STRING,
        "description": STRING,
        "command": strings(),
        "models": strings(),
        "reasoning_efforts": strings(),
        "source": enum("builtin", "home", "workspace"),
        "env_keys": strings(),
    },
    {
        "default_model": STRING,
        "default_reasoning_effort": STRING,
        "package": described(STRING, "The npm package (name@version) that provides its command."),
        "models_from": described(
            enum("agent"),
            "agent: the models and efforts are those the agent announced when it last started "
            "(its definition lists none)",
        ),
    },
    order=("name", "provider", "description", "command", "models", "default_model"),
)
AGENT_PROBLEM = obj({"source": STRING, "message": STRING}, {"agent": STRING})
AGENT_LIST_VIEWS = ViewSpec(
    Fields(
        {
            "agents": Each(
                Fields.of(
                    "name",
                    "provider",
                    "description",
                    "models",
                    "default_model",
                    "reasoning_efforts",
                    "default_reasoning_effort",
                    "models_from",
                )
            ),
            "problems": KEEP,
        }
    ),
    follow_up=("agents[].name", "agents[].models", "agents[].reasoning_efforts"),
)


async def _agent_list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    workspace_path = None
    if "workspace_id" in args:
        workspace = call.services.sessions.workspaces.workspace(args["workspace_id"])
        if workspace is None:
            raise ResourceNotFound(call.tool_id, "workspace", args["workspace_id"])
        workspace_path = workspace.path
    catalog = _agents(call).agents(workspace_path)
    return {
        "agents": [catalog.agents[name].record() for name in sorted(catalog.agents)],
        "problems": catalog.problems,
    }


# --- turns ------------------------------------------------------------------------------------


async def _prompt(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    agents = _agents(call)
    wait = bool(args.get("wait", False))
    session_id = args["session_id"]
    turn_id = await agents.prompt(call.info, session_id, args["prompt"], wait=wait)
    if not wait:
        return {"turn": await agents.turn(call.info, session_id, turn_id)}
    timeout = float(args.get("timeout_seconds", 600))
    reporter = PROGRESS.get()
    reported = anyio.Event()
    if reporter is None:
        reported.set()
    async with anyio.create_task_group() as tasks:
        if reporter is not None:
            tasks.start_soon(_report_turn, agents, session_id, turn_id, reporter, reported)
        try:
            record = await agents.wait_turn(call.info, session_id, turn_id, timeout)
        except anyio.get_cancelled_exc_class():
            # the caller gave up on the request (MCP cancellation): the turn stops too
            with anyio.CancelScope(shield=True):
                await agents.cancel(call.info, session_id)
            raise
        # the last updates (turn_ended) may still be on their way to the reporter
        with anyio.move_on_after(1.0):
            await reported.wait()
        tasks.cancel_scope.cancel()
    return {"turn": record}


async def _report_turn(
    agents: AgentAdmin,
    session_id: str,
    turn_id: str,
    reporter: Progress,
    reported: anyio.Event,
) -> None:
    """The turn as it streams, as progress: one step per update, the message text (or the
    update's kind) as the progress message; ``reported`` is set after the turn's end."""
    steps = 0
    async for event in agents.follow(session_id):
        if event.get("turn_id") != turn_id:
            continue
        steps += 1
        content = event.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        await reporter(float(steps), None, text or str(event["kind"]))
        if event["kind"] == "turn_ended":
            reported.set()
            return


async def _wait(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    agents = _agents(call)
    session_id = args["session_id"]
    turn_id = args.get("turn_id")
    if turn_id is None:
        turn_id = agents.latest_turn_id(call.info, session_id)
        if turn_id is None:
            # nothing to wait for is the caller's to know, not a failure of compozy's (a 500)
            raise ToolError(
                call.tool_id,
                f'session "{session_id}" has no turns yet: send one with compozy__session_prompt',
                code=ResourceNotFound.code,
                reason=Reason.TURN_NOT_FOUND,
            )
    timeout = float(args.get("timeout_seconds", 600))
    return {"turn": await agents.wait_turn(call.info, session_id, turn_id, timeout)}


async def _cancel(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await _agents(call).cancel(call.info, args["session_id"])


HISTORY_VIEWS = ViewSpec(
    Fields({"session_id": KEEP, "turns": Each(TURN_COMPACT), "next_cursor": KEEP}),
    follow_up=("session_id", "turns[].turn_id", "next_cursor"),
)


async def _history(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return _agents(call).history(
        call.info, args["session_id"], int(args.get("cursor", 0)), int(args.get("limit", 20))
    )


#: What an event's payload may carry that a caller must not miss (the rest of it, the agent's
#: own update, stays open): a turn's end and failure, a tool call's state, a permission request
#: and its answer. Compact keeps these keys, and leaves the payload out when it has none of them.
EVENT_PAYLOAD = obj(
    optional={
        "status": described(
            STRING,
            "turn_ended: the turn's status (" + ", ".join(TURN_STATUSES) + "); tool_call and "
            "tool_call_update: the tool call's status.",
        ),
        "stop_reason": described(STRING, "turn_ended: why the turn stopped."),
        "detail": described(STRING, "turn_ended: what failed, when the turn failed."),
        "tool_call_id": described(STRING, "tool_call and tool_call_update: the call's id."),
        "interaction_id": described(
            STRING,
            "permission_requested and permission_answered: the input of compozy__session_approve.",
        ),
        "title": described(
            STRING, "permission_requested: what the agent asks to do; tool_call: the call."
        ),
        "options": described(
            array(obj({"option_id": STRING}, {"name": STRING, "kind": STRING}, closed=False)),
            "permission_requested: the answers offered; option_id is the decision of "
            "compozy__session_approve.",
        ),
        "outcome": described(
            enum("answered", "cancelled", "timed_out"), "permission_answered: how it ended."
        ),
        "option_id": described(
            nullable(STRING), "permission_answered: the option chosen (null: none)."
        ),
    },
    closed=False,
)
EVENT_RECORD = obj(
    {"seq": COUNT, "kind": STRING, "at": TIMESTAMP, "payload": EVENT_PAYLOAD},
    {"turn_id": STRING},
    order=("seq", "kind", "at", "turn_id", "payload"),
)
EVENT_PAYLOAD_COMPACT = Fields(
    {
        **dict.fromkeys(
            ("status", "stop_reason", "detail", "tool_call_id", "interaction_id", "title"), KEEP
        ),
        "options": Each(Fields.of("option_id")),
        "outcome": KEEP,
        "option_id": KEEP,
    },
    omit_empty=True,
)
EVENTS_VIEWS = ViewSpec(
    Fields(
        {
            "session_id": KEEP,
            "events": Each(
                Fields.of("seq", "kind", "at", "turn_id", payload=EVENT_PAYLOAD_COMPACT)
            ),
            "next_cursor": KEEP,
        }
    ),
    follow_up=(
        "session_id",
        "events[].turn_id",
        "events[].payload.interaction_id",
        "events[].payload.options[].option_id",
        "next_cursor",
    ),
)


async def _events(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return _agents(call).events(
        call.info, args["session_id"], int(args.get("cursor", 0)), int(args.get("limit", 100))
    )


async def _clear(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    fences = _fences(args, "transcript_epoch", "generation")
    return {"session": await call.services.sessions.clear(call.info, args["session_id"], fences)}


COMMAND_RECORD = obj({"name": STRING, "description": STRING}, {"input": obj({"hint": STRING})})


async def _commands(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    record = await call.services.sessions.status(call.info, args["session_id"])
    return {"session_id": args["session_id"], "commands": record.get("available_commands", [])}


def _on_session(
    tool_id: str,
    description: str,
    handler: Handler,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    *,
    risk: Risk,
    **extra: Any,
) -> ToolDefinition:
    """A tool that acts on the session its ``session_id`` names (who may: ``acts_on``)."""
    return ToolDefinition(
        id=tool_id,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        handler=handler,
        risk=risk,
        toolsets=SESSIONS,
        acts_on=("session_id",),
        **extra,
    )


def agent_tools() -> list[ToolDefinition]:
    session_id = {"session_id": SESSION_ID}
    cursor = described(COUNT, "next_cursor of the previous page; 0 or absent: from the start.")
    return [
        ToolDefinition(
            id="compozy__agent_list",
            description="List the agents a session's runtime can select (provider in "
            "runtime_set), with their models and reasoning efforts.",
            input_schema=tool_input(
                optional={
                    "workspace_id": described(
                        STRING, "Include the agents defined in this workspace's files."
                    )
                }
            ),
            output_schema=obj({"agents": array(AGENT_RECORD), "problems": array(AGENT_PROBLEM)}),
            handler=_agent_list,
            risk=Risk.READ,
            toolsets=AGENTS,
            views=AGENT_LIST_VIEWS,
            preview=count_preview("agents", "agent"),
            idempotent=True,
        ),
        _on_session(
            "compozy__session_prompt",
            "Send a prompt to the session's agent as its next turn (binding the "
            "agent first when none runs). With wait, returns once the turn ended or "
            "timeout_seconds passed; otherwise at once with the queued turn.",
            _prompt,
            tool_input(
                {
                    "session_id": SESSION_ID,
                    "prompt": described(PROMPT, "What to ask the session's agent."),
                },
                {
                    "wait": described(BOOLEAN, "Wait for the turn to end (default false)."),
                    "timeout_seconds": TIMEOUT,
                },
            ),
            TURN_RESULT,
            risk=Risk.MUTATING,
            views=TURN_VIEWS,
            preview=_turn_preview,
        ),
        _on_session(
            "compozy__session_prompt_cancel",
            "Cancel the session's running turn and every queued one.",
            _cancel,
            tool_input(session_id),
            obj(
                {"session_id": STRING, "queued_cancelled": COUNT},
                {"running_turn_id": {"type": ["string", "null"]}},
            ),
            risk=Risk.MUTATING,
        ),
        _on_session(
            "compozy__session_wait",
            "Wait for a turn (default: the latest) to end; returns it as it is "
            "when timeout_seconds passes.",
            _wait,
            tool_input(
                session_id,
                {
                    "turn_id": described(STRING, "Default: the latest turn."),
                    "timeout_seconds": TIMEOUT,
                },
            ),
            TURN_RESULT,
            risk=Risk.READ,
            views=TURN_VIEWS,
            preview=_turn_preview,
            idempotent=True,
        ),
        _on_session(
            "compozy__session_history",
            "A session's turns, oldest first: prompt, status, stop reason and the "
            "agent's final message (full adds chunks, thoughts, tool calls, plan, usage).",
            _history,
            tool_input(
                session_id,
                {
                    "cursor": cursor,
                    "limit": described(
                        {"type": "integer", "minimum": 1, "maximum": 100},
                        "Turns per page (default 20).",
                    ),
                },
            ),
            obj({"session_id": STRING, "turns": array(TURN_RECORD)}, {"next_cursor": COUNT}),
            risk=Risk.READ,
            views=HISTORY_VIEWS,
            preview=count_preview("turns", "turn"),
            idempotent=True,
        ),
        _on_session(
            "compozy__session_events",
            "The raw update stream of a session's agent since cursor (message "
            "chunks, tool calls, plans, permission requests, turn ends); full adds payloads.",
            _events,
            tool_input(
                session_id,
                {
                    "cursor": cursor,
                    "limit": described(
                        {"type": "integer", "minimum": 1, "maximum": 500},
                        "Events per page (default 100).",
                    ),
                },
            ),
            obj({"session_id": STRING, "events": array(EVENT_RECORD), "next_cursor": COUNT}),
            risk=Risk.READ,
            views=EVENTS_VIEWS,
            preview=count_preview("events", "event"),
            idempotent=True,
        ),
        _on_session(
            "compozy__session_clear",
            "Start a new conversation: earlier turns stay in the history but leave "
            "the agent's context. Increments transcript_epoch; a bound agent is replaced.",
            _clear,
            tool_input(
                {
                    "session_id": SESSION_ID,
                    "transcript_epoch": TRANSCRIPT_EPOCH,
                    "generation": GENERATION,
                }
            ),
            SESSION_RESULT,
            risk=Risk.DESTRUCTIVE,
            views=SESSION_VIEWS,
            preview=_session_preview,
        ),
        _on_session(
            "compozy__command_list",
            "The commands the session's agent announced (slash commands).",
            _commands,
            tool_input(session_id),
            obj({"session_id": STRING, "commands": array(COMMAND_RECORD)}),
            risk=Risk.READ,
            preview=count_preview("commands", "command"),
            idempotent=True,
        ),
    ]
