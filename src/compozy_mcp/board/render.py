"""Sessions into board cards: the columns, what each card shows, how long ago."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from compozy_mcp.sessions.record_schema import BOARD_COLUMNS

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
        "attention": session.get("attention") or "",
        "waiting_on": session.get("waiting_on") or "",
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
