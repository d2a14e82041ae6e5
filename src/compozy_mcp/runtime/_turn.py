"""One turn as it streams: the agent's updates folded into the turn's record (message, thoughts,
tool calls, plan, usage) and into the raw event stream."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store.base import TranscriptTurn


def _dump(update: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = update.model_dump(mode="json", exclude_none=True, by_alias=False)
    return dumped


class TurnRecorder:
    """Folds a turn's updates; ``snapshot`` and ``outcome`` give the stored turn."""

    def __init__(self, turn: TranscriptTurn) -> None:
        self.turn = turn
        self.message: list[str] = []
        #: the message's segments: a tool call after some text starts a new one
        self.segments: list[str] = []
        self._segment: list[str] = []
        self.thoughts: list[str] = []
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.plan: list[dict[str, Any]] = []
        self.usage: dict[str, Any] | None = None
        self._started = time.monotonic()
        self._first_update: float | None = None

    def fold(self, update: Any) -> tuple[str, dict[str, Any]]:
        """Fold one ACP session update; returns its event ``(kind, payload)``."""
        payload = _dump(update)
        kind = str(payload.pop("session_update", type(update).__name__))
        if self._first_update is None:
            self._first_update = time.monotonic()
        if kind == "agent_message_chunk":
            text = str(payload.get("content", {}).get("text", ""))
            self.message.append(text)
            self._segment.append(text)
        elif kind == "agent_thought_chunk":
            self.thoughts.append(str(payload.get("content", {}).get("text", "")))
        elif kind in ("tool_call", "tool_call_update"):
            self._close_segment()
            call = self.tool_calls.setdefault(str(payload["tool_call_id"]), {})
            call.update(payload)
        elif kind == "plan":
            self.plan = list(payload.get("entries", []))
        elif kind == "usage_update":
            self.usage = {**(self.usage or {}), "context_used": payload.get("used")}
        return kind, payload

    def _close_segment(self) -> None:
        text = "".join(self._segment)
        if text.strip():
            self.segments.append(text)
        self._segment = []

    def final_message(self) -> tuple[str, int]:
        """The message's segments joined by a blank line (the narration before each tool call
        never runs into the next), and where the last one (the answer) starts."""
        segments = list(self.segments)
        tail = "".join(self._segment)
        if tail.strip():
            segments.append(tail)
        if not segments:
            return "", 0
        final = "\n\n".join(segments)
        return final, len(final) - len(segments[-1])

    def _doc(self) -> dict[str, Any]:
        now = time.monotonic()
        timings = {"duration_ms": round((now - self._started) * 1000, 1)}
        if self._first_update is not None:
            timings["first_update_ms"] = round((self._first_update - self._started) * 1000, 1)
        return {
            "chunks": self.message,
            "thoughts": self.thoughts,
            "tool_calls": list(self.tool_calls.values()),
            "plan": self.plan,
            "usage": self.usage,
            "timings": timings,
        }

    def outcome(
        self,
        status: str,
        stop_reason: str,
        ended_at: str,
        usage: dict[str, Any] | None = None,
        failure: str | None = None,
    ) -> TranscriptTurn:
        """The turn as it ended; ``failure``: what the agent said when it failed."""
        if usage:
            self.usage = {**(self.usage or {}), **usage}
        final, answer_from = self.final_message()
        doc = self._doc()
        if answer_from:
            doc["answer_from"] = answer_from
        if failure is not None:
            doc["failure"] = {"kind": stop_reason, "summary": failure}
        return replace(
            self.turn,
            status=status,
            stop_reason=stop_reason,
            final_message=final,
            ended_at=ended_at,
            doc=jsonutil.dumps(doc).decode(),
        )
