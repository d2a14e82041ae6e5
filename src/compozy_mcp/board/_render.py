"""Sessions into board cards: the columns, what each card shows, how long ago."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.sessions.record_schema import BOARD_COLUMNS
from compozy_mcp.store.tasks import TASK_STATES

#: the column a card needing the operator sits in
NEEDS_YOU = "needs_you"


def age(stamp: str | None, now: datetime) -> str:
    """``"12s"``, ``"5m"``, ``"3h"``, ``"2d"`` since an ISO-8601 ``stamp``; ``""`` if none."""
    if not stamp:
        return ""
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def model_of(session: dict[str, Any]) -> str:
    runtime = session.get("runtime") or {}
    for key in ("effective", "selected"):
        chosen = runtime.get(key) or {}
        model = chosen.get("model")
        if isinstance(model, str):
            return model
    return ""


def attention_text(session: dict[str, Any]) -> str:
    """Why a session needs the operator (its ``attention``'s reason), or ``""``."""
    attention = session.get("attention")
    if isinstance(attention, dict):
        return str(attention.get("reason") or attention.get("kind") or "")
    return str(attention or "")


def waiting_text(session: dict[str, Any]) -> str:
    """What a session waits on (an interaction's kind, a child session, ...), or ``""``."""
    waiting = session.get("waiting_on")
    if isinstance(waiting, dict):
        return str(waiting.get("interaction_kind") or waiting.get("kind") or "")
    return str(waiting or "")


#: characters of the last turn's summary a card shows (the session page shows the rest)
CARD_SUMMARY_CHARS = 160


def last_turn_text(turn: dict[str, Any] | None, now: datetime) -> dict[str, str]:
    """What a card says of the session's last turn: its status, the start of its summary and
    how long ago it ended (or started, while it runs); empty strings before the first turn."""
    if not turn:
        return {"turn_status": "", "summary": "", "turn_age": ""}
    summary = turn.get("summary") or {}
    text = " ".join(str(summary.get("text") or "").split())
    if len(text) > CARD_SUMMARY_CHARS:
        text = text[: CARD_SUMMARY_CHARS - 1] + "…"
    when = turn.get("ended_at") or turn.get("started_at") or turn.get("created_at")
    return {"turn_status": str(turn.get("status", "")), "summary": text, "turn_age": age(when, now)}


def card(
    session: dict[str, Any], now: datetime, turn: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What a card shows of a session and its last ``turn`` (every string rendered escaped by
    the template)."""
    pending = session.get("pending_interactions") or []
    children = session.get("children") or []
    return {
        **last_turn_text(turn, now),
        "id": session["id"],
        "name": session.get("name") or session["id"],
        "agent": session.get("agent_name", ""),
        "model": model_of(session),
        "badge": session.get("badge", ""),
        "column": session.get("board_column", "backlog"),
        "state": session.get("state", ""),
        "workspace": session.get("workspace_id", ""),
        "attention": attention_text(session),
        "waiting_on": waiting_text(session),
        "branch": session.get("branch") or "",
        "children": len(children),
        "pending": len(pending),
        "needs_you": session.get("board_column") == NEEDS_YOU or bool(pending),
        "archived": session.get("archived_at") is not None,
        "age": age(session.get("updated_at"), now),
    }


def columns(
    sessions: list[dict[str, Any]],
    now: datetime,
    last_turns: Mapping[str, dict[str, Any]] | None = None,
) -> list[tuple[str, list[Any]]]:
    """One ``(column, cards)`` per board column, in the board's order; ``last_turns``: each
    session's last turn (by session id) where it has one."""
    turns = last_turns or {}
    by_column: dict[str, list[Any]] = {name: [] for name in BOARD_COLUMNS}
    for session in sessions:
        shown = card(session, now, turns.get(session["id"]))
        by_column.setdefault(shown["column"], []).append(shown)
    return list(by_column.items())


#: the payload fields that hold what an event says, in the order they are looked for
_TEXT_FIELDS = ("text", "content", "summary", "message", "stop_reason")


#: what a tool call's event shows after its title, kind and status: ACP's field, and its label
_TOOL_CALL_PARTS = (("input", "raw_input"), ("result", "raw_output"), ("content", "content"))


def _tool_call_text(payload: dict[str, Any]) -> str:
    """A tool call (or its update): its title, kind and status, then its input and result."""
    named = ("title", "kind", "status", "tool_call_id")
    lines = [" · ".join(str(payload[name]) for name in named if payload.get(name))]
    for label, name in _TOOL_CALL_PARTS:
        if payload.get(name) not in (None, "", [], {}):
            lines.append(f"{label}: {jsonutil.dumps_pretty(payload[name])}")
    return "\n".join(line for line in lines if line)


def _plan_text(payload: dict[str, Any]) -> str:
    """A plan: an entry a line, with its status."""
    entries = [entry for entry in payload.get("entries") or [] if isinstance(entry, dict)]
    return "\n".join(f"[{entry.get('status', '')}] {entry.get('content', '')}" for entry in entries)


def _permission_text(payload: dict[str, Any]) -> str:
    """A permission request: what the agent asks, and the options it offers (by name)."""
    options = [o for o in payload.get("options") or [] if isinstance(o, dict)]
    names = ", ".join(str(o.get("name") or o.get("option_id", "")) for o in options)
    return f"{payload.get('title', '')} · options: {names}" if names else ""


def _commands_text(payload: dict[str, Any]) -> str:
    commands = [c for c in payload.get("available_commands") or [] if isinstance(c, dict)]
    return "commands: " + ", ".join(str(c.get("name", "")) for c in commands) if commands else ""


def _turn_text(payload: dict[str, Any]) -> str:
    return f"turn {payload['turn']}" if "turn" in payload else ""


#: the events the transcript describes in words rather than as their payload's JSON
_DESCRIBED: dict[str, Callable[[dict[str, Any]], str]] = {
    "tool_call": _tool_call_text,
    "tool_call_update": _tool_call_text,
    "plan": _plan_text,
    "permission_requested": _permission_text,
    "available_commands_update": _commands_text,
    "turn_started": _turn_text,
}


def transcript_line(event: dict[str, Any]) -> dict[str, str]:
    """An event as the transcript shows it: its kind and its text (a tool call's title, status,
    input and result; a plan's entries; else the payload as JSON when it has no text of its
    own)."""
    payload = event.get("payload") or {}
    kind = event["kind"]
    describe = _DESCRIBED.get(kind)
    shown = describe(payload) if describe is not None else ""
    if shown:
        return {"kind": kind, "text": shown}
    for name in _TEXT_FIELDS:
        value = payload.get(name)
        if isinstance(value, dict):  # an ACP content block: {"type": "text", "text": ...}
            value = value.get("text")
        if isinstance(value, str) and value:
            return {"kind": event["kind"], "text": value}
    return {"kind": event["kind"], "text": jsonutil.dumps(payload).decode()}


def transcript_lines(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The transcript of ``events``: one line per event, except that an agent's consecutive
    chunks of one kind (a message, a thought, streamed a few words at a time) are one line."""
    lines: list[dict[str, str]] = []
    for event in events:
        line = transcript_line(event)
        last = lines[-1] if lines else None
        if last is not None and line["kind"] == last["kind"] and line["kind"].endswith("_chunk"):
            last["text"] += line["text"]
        else:
            lines.append(line)
    return lines


def patch_text(diff: dict[str, Any]) -> str:
    """The patch of a ``compozy__session_diff`` result, wherever the record holds it."""
    result = diff.get("result", diff)
    structured = result.get("structured", result) if isinstance(result, dict) else {}
    patch = structured.get("patch") if isinstance(structured, dict) else None
    if isinstance(patch, str):
        return patch
    return jsonutil.dumps(structured).decode()


def task_columns(tasks: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Tasks by state, in the order work moves (each column in the list's claim order)."""
    by_state: dict[str, list[dict[str, Any]]] = {state: [] for state in TASK_STATES}
    for task in tasks:
        by_state.setdefault(task["state"], []).append(task)
    return list(by_state.items())
