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
    return "\n".join(lines) + "\n"


def text(found: list[ToolChange]) -> str:
    lines = [TITLE, ""]
    for change in found:
        lines.append(f"{change.tool_id}: {len(change.moved)} field(s) moved to the full view")
        for field in change.moved:
            note = f"  ({field.condition})" if field.condition else ""
            lines.append(f"  {field.path}{note}")
    return "\n".join(lines) + "\n"


def payload(found: list[ToolChange]) -> dict[str, Any]:
    return {"title": TITLE, "tools": [change.payload() for change in found]}
