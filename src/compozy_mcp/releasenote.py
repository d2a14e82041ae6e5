"""The release note of result views, generated from the view definitions, never by hand.

The spec promises a note that "lists every tool whose default changed and the fields that
moved to the full view". A tool's default changed exactly when it has views; the fields that
moved are :attr:`~compozy_mcp.views.CompiledViews.moved_to_full`, derived at registration from
the same mask that produces compact results, so the note cannot drift from what tools return.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.views.mask import MovedField

TITLE = "Result views: native tools return compact results by default"
INTRO = (
    "Native tools with result views now return a compact record by default. Pass "
    '`"result_view": "full"` in a call\'s input to receive the complete record, unchanged '
    "from earlier releases. Every field of a compact result is in the full result at the same "
    "path with the same value, and the selector never changes what a tool does."
)
PATHS = (
    "Paths are relative to the tool's result; `[]` steps into the items of a list, and `.*` "
    "stands for keys the full schema leaves open."
)


LOOPS_TITLE = "Loops"
LOOPS = (
    "- A tool node selects its view in `params`: `result_view: compact` (the default) or "
    "`result_view: full`, a literal (a reference there fails lint with "
    "`result_view_not_literal`).",
    "- Loop validation (`compozy loop validate|create|run`, the loop tools, and before every "
    "start) proves each reference and each `produces` against the view its node selects: a "
    "field only the full view has fails with `result_view_field_requires_full` and names the "
    "fix; a field neither view has keeps `unresolvable_path`; a path into an open part of the "
    "full schema is a warning that it cannot be proven. To keep a node reading the complete "
    "record, add `result_view: full` to its params.",
    "- A run pins, per tool node, the contract of the view it selected, and calls the tool with "
    "that view pinned: a `tool.pre_call` hook that changes it fails the node with "
    "`tool_denied` / `result_view_pinned`. A pinned contract that is no longer the live one "
    "fails the node with `action_contract_stale`.",
    "- Runs started and Loop snapshots taken before views keep the contract they pinned and "
    "their nodes return the full record: they are translated to `full` on load for one "
    "release (#1462).",
)


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One tool whose default result changed."""

    tool_id: str
    moved: tuple[MovedField, ...]

    def payload(self) -> dict[str, Any]:
        moved = [{"path": m.path, "condition": m.condition} for m in self.moved]
        return {"tool_id": self.tool_id, "moved_to_full": moved}


def changes(tools: Iterable[RegisteredTool]) -> list[ToolChange]:
    """Every tool with views, in catalog order, with the fields only its full view has."""
    return [
        ToolChange(tool.id, tool.views.moved_to_full) for tool in tools if tool.views is not None
    ]


def _field_line(field: MovedField) -> str:
    note = f" ({field.condition})" if field.condition else ""
    return f"- `{field.path}`{note}"


def markdown(found: list[ToolChange]) -> str:
    lines = [f"## {TITLE}", "", INTRO, "", f"### Tools whose default changed ({len(found)})", ""]
    lines += ["| Tool | Fields moved to the full view |", "|---|---|"]
    lines += [f"| `{c.tool_id}` | {len(c.moved)} |" for c in found]
    lines += ["", "### Fields that moved to the full view", "", PATHS]
    for change in found:
        lines += ["", f"#### `{change.tool_id}`", ""]
        lines += [_field_line(field) for field in change.moved]
    lines += ["", f"### {LOOPS_TITLE}", "", *LOOPS]
    return "\n".join(lines) + "\n"


def text(found: list[ToolChange]) -> str:
    lines = [TITLE, ""]
    for change in found:
        lines.append(f"{change.tool_id}: {len(change.moved)} field(s) moved to the full view")
        for field in change.moved:
            note = f"  ({field.condition})" if field.condition else ""
            lines.append(f"  {field.path}{note}")
    lines += ["", f"{LOOPS_TITLE}:", *(f"  {line[2:]}" for line in LOOPS)]
    return "\n".join(lines) + "\n"


def payload(found: list[ToolChange]) -> dict[str, Any]:
    return {
        "title": TITLE,
        "tools": [change.payload() for change in found],
        "loops": [line[2:] for line in LOOPS],
    }
