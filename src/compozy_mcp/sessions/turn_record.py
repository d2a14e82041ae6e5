"""The public record of a turn, built from its stored row."""

from __future__ import annotations

from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store.base import TranscriptTurn

#: characters of the final message a compact turn keeps (``summary.text``)
SUMMARY_CHARS = 500
#: characters of the prompt a turn record shows
PROMPT_CHARS = 2000
TERMINAL = ("completed", "cancelled", "failed")
#: what the compact view of a turn keeps: identity, state, the cut prompt and final message
COMPACT_TURN_FIELDS = (
    "session_id",
    "turn_id",
    "turn",
    "epoch",
    "status",
    "prompt",
    "summary",
    "created_at",
    "stop_reason",
    "failure",
    "started_at",
    "ended_at",
)


def turn_record(turn: TranscriptTurn) -> dict[str, Any]:
    """The complete record of a turn (``compozy__session_history``, ``_prompt``, ``_wait``)."""
    doc: dict[str, Any] = jsonutil.loads(turn.doc) if turn.doc else {}
    final = turn.final_message or ""
    prompt = turn.text
    # a long message is cut to its answer: the text after the agent's last tool call
    answer = final[int(doc.get("answer_from", 0)) :] if len(final) > SUMMARY_CHARS else final
    out: dict[str, Any] = {
        "session_id": turn.session_id,
        "turn_id": turn.turn_id or f"turn-{turn.turn}",
        "turn": turn.turn,
        "epoch": turn.epoch,
        "status": turn.status,
        "prompt": {"text": prompt[:PROMPT_CHARS], "truncated": len(prompt) > PROMPT_CHARS},
        "summary": {"text": answer[:SUMMARY_CHARS], "truncated": len(final) > SUMMARY_CHARS},
        "created_at": turn.created_at,
    }
    if turn.stop_reason is not None:
        out["stop_reason"] = turn.stop_reason
    if doc.get("failure"):
        out["failure"] = doc["failure"]
    if turn.started_at is not None:
        out["started_at"] = turn.started_at
    if turn.ended_at is not None:
        out["ended_at"] = turn.ended_at
    out["final_message"] = final
    out["chunks"] = doc.get("chunks", [])
    out["thoughts"] = doc.get("thoughts", [])
    out["tool_calls"] = doc.get("tool_calls", [])
    out["plan"] = doc.get("plan", [])
    if doc.get("usage"):
        out["usage"] = doc["usage"]
    if doc.get("timings"):
        out["timings"] = doc["timings"]
    return out
