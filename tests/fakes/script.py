"""What a fake model answers, decided from the request: the same words always give the same
reply, whichever API carries them.

- ``tool:SUFFIX {json}`` (once or more in the prompt): a call of the tool whose name ends with
  ``SUFFIX`` (``session_status`` finds ``mcp__compozy__compozy__session_status``), with the JSON
  as its input; after the results come back, the reply ``tools done: N result(s), B bytes``.
- ``slow``: the reply ``tick 1 tick 2 ...`` streamed a chunk every 0.1 s for 20 s (a turn to
  cancel).
- anything else: the reply ``fake reply: <the prompt's last line>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SLOW_CHUNKS = 200
SLOW_SECONDS = 0.1
_TOOL = re.compile(r"tool:([A-Za-z0-9_-]+)(\s*\{.*?\})?(?=\s+tool:|\s*$)", re.S)


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """Text chunks, or tool calls; ``delay`` between chunks."""

    chunks: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    delay: float = 0.0
    results_seen: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


def _find(suffix: str, tools: list[str]) -> str | None:
    matches = [name for name in tools if name.endswith(suffix)]
    return min(matches, key=len) if matches else None


def decide(prompt: str, tools: list[str], results: list[str]) -> Reply:
    """The reply to a request whose last user text is ``prompt``, offering ``tools`` (their
    names as the model sees them), after ``results`` (tool results in this exchange so far)."""
    directives = _TOOL.findall(prompt)
    if directives and not results:
        calls = []
        for suffix, raw in directives:
            name = _find(suffix, tools)
            if name is None:
                return Reply(chunks=(f"no tool ends with {suffix}",))
            arguments = json.loads(raw) if raw.strip() else {}
            calls.append(ToolCall(name, arguments))
        return Reply(tool_calls=tuple(calls))
    if directives:
        size = sum(len(r.encode()) for r in results)
        plural = "" if len(results) == 1 else "s"
        return Reply(chunks=(f"tools done: {len(results)} result{plural}, {size} bytes",))
    if "slow" in prompt.lower():
        return Reply(chunks=tuple(f"tick {n + 1} " for n in range(SLOW_CHUNKS)), delay=SLOW_SECONDS)
    last = prompt.strip().splitlines()[-1] if prompt.strip() else ""
    return Reply(chunks=("fake reply: ", last))
