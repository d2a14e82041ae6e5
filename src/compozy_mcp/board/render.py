"""Sessions into board cards: the columns, what each card shows, how long ago."""

from __future__ import annotations

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


def card(session: dict[str, Any], now: datetime) -> dict[str, Any]:
    """What a card shows of a session (every string rendered escaped by the template)."""
    pending = session.get("pending_interactions") or []
    children = session.get("children") or []
    return {
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


def columns(sessions: list[dict[str, Any]], now: datetime) -> list[tuple[str, list[Any]]]:
    """One ``(column, cards)`` per board column, in the board's order."""
    by_column: dict[str, list[Any]] = {name: [] for name in BOARD_COLUMNS}
    for session in sessions:
        shown = card(session, now)
        by_column.setdefault(shown["column"], []).append(shown)
    return list(by_column.items())


#: the payload fields that hold what an event says, in the order they are looked for
_TEXT_FIELDS = ("text", "content", "summary", "message", "stop_reason")


def transcript_line(event: dict[str, Any]) -> dict[str, str]:
    """An event as the transcript shows it: its kind and its text (the payload as JSON when it
    has no text of its own: a tool call's input and result, a plan)."""
    payload = event.get("payload") or {}
    for name in _TEXT_FIELDS:
        value = payload.get(name)
        if isinstance(value, dict):  # an ACP content block: {"type": "text", "text": ...}
            value = value.get("text")
        if isinstance(value, str) and value:
            return {"kind": event["kind"], "text": value}
    return {"kind": event["kind"], "text": jsonutil.dumps(payload).decode()}


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
