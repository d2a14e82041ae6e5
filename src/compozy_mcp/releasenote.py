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
    "Native tools with result views return a compact record by default. Pass "
    '`"result_view": "full"` in a call\'s input to receive the complete record. Every field '
    "of a compact result is in the full result at the same path with the same value, and the "
    "selector never changes what a tool does."
)
PATHS = (
    "Paths are relative to the tool's result; `[]` steps into the items of a list, and `.*` "
    "stands for keys the full schema leaves open. Tools that return the same record move the "
    "same fields: they are listed together, once."
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


@dataclass(frozen=True, slots=True)
class ChangeGroup:
    """Tools that moved exactly the same fields (the 13 tools returning a session record)."""

    tool_ids: tuple[str, ...]
    moved: tuple[MovedField, ...]

    def payload(self) -> dict[str, Any]:
        moved = [{"path": m.path, "condition": m.condition} for m in self.moved]
        return {"tool_ids": list(self.tool_ids), "moved_to_full": moved}


def groups(found: list[ToolChange]) -> list[ChangeGroup]:
    """``found`` grouped by the fields they moved, each group where its first tool is in
    catalog order."""
    by_moved: dict[tuple[MovedField, ...], list[str]] = {}
    for change in found:
        by_moved.setdefault(change.moved, []).append(change.tool_id)
    return [ChangeGroup(tuple(ids), moved) for moved, ids in by_moved.items()]


def _names(tool_ids: tuple[str, ...]) -> str:
    return ", ".join(f"`{tool_id}`" for tool_id in tool_ids)


def _field_line(field: MovedField) -> str:
    note = f" ({field.condition})" if field.condition else ""
    return f"- `{field.path}`{note}"


def markdown(found: list[ToolChange]) -> str:
    grouped = groups(found)
    lines = [f"## {TITLE}", "", INTRO, "", f"### Tools with a compact default ({len(found)})", ""]
    lines += ["| Tools | Fields moved to the full view |", "|---|---|"]
    lines += [f"| {_names(g.tool_ids)} | {len(g.moved)} |" for g in grouped]
    lines += ["", "### Fields that moved to the full view", "", PATHS]
    for group in grouped:
        lines += ["", f"#### {_names(group.tool_ids)}", ""]
        lines += [_field_line(field) for field in group.moved]
    lines += ["", f"### {LOOPS_TITLE}", "", *LOOPS]
    return "\n".join(lines) + "\n"


def text(found: list[ToolChange]) -> str:
    lines = [TITLE, ""]
    for group in groups(found):
        count = len(group.moved)
        lines.append(f"{count} field{'s' if count != 1 else ''} moved to the full view in:")
        lines += [f"  {tool_id}" for tool_id in group.tool_ids]
        for field in group.moved:
            note = f"  ({field.condition})" if field.condition else ""
            lines.append(f"    {field.path}{note}")
        lines.append("")
    lines += [f"{LOOPS_TITLE}:", *(f"  {line[2:]}" for line in LOOPS)]
    return "\n".join(lines).rstrip("\n") + "\n"


def payload(found: list[ToolChange]) -> dict[str, Any]:
    return {
        "title": TITLE,
        "groups": [group.payload() for group in groups(found)],
        "tools": [change.payload() for change in found],
        "loops": [line[2:] for line in LOOPS],
    }
