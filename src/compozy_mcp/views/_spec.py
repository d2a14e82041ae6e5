"""A tool's views: the compact mask, the follow-up fields it must keep, and derived contracts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp.errors import ToolRegistrationError
from compozy_mcp.jsonutil import schema_digest
from compozy_mcp.reasons import Reason
from compozy_mcp.views.mask import (
    Fields,
    MovedField,
    Node,
    derive_schema,
    keeps_path,
    moved_to_full,
)
from compozy_mcp.views.selector import ResultView


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """How a tool's compact view is cut from its full record.

    ``follow_up`` lists the dotted paths (``[]`` for array items) that a follow-up call takes as
    input, such as ``session.id`` or ``session.runtime.selection_revision``; registration fails
    if the compact mask drops one of them.
    """

    compact: Fields
    follow_up: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ViewContract:
    schema: Mapping[str, Any]
    digest: str

    def payload(self) -> dict[str, Any]:
        return {"schema": self.schema, "digest": self.digest}


@dataclass(frozen=True, slots=True)
class CompiledViews:
    """The checked views of one tool: both contracts and the mask that produces compact."""

    mask: Node
    compact: ViewContract
    full: ViewContract
    moved_to_full: tuple[MovedField, ...]

    def contract(self, view: ResultView) -> ViewContract:
        return self.compact if view is ResultView.COMPACT else self.full


def _split(path: str) -> list[str]:
    """``"sessions[].id"`` -> ``["sessions", "[]", "id"]``."""
    return [step for step in path.replace("[]", ".[]").split(".") if step]


def _declares(schema: Mapping[str, Any], steps: list[str]) -> bool:
    node: Any = schema
    for step in steps:
        if not isinstance(node, Mapping):
            return False
        node = node.get("items") if step == "[]" else node.get("properties", {}).get(step)
        if node is None:
            return False
    return True


def compile_views(tool_id: str, spec: ViewSpec, full_schema: Mapping[str, Any]) -> CompiledViews:
    """Check a view against the rules and derive its contracts; raise ``ToolRegistrationError``."""
    compact_schema = derive_schema(tool_id, full_schema, spec.compact)
    for path in spec.follow_up:
        steps = _split(path)
        if not _declares(full_schema, steps):
            raise ToolRegistrationError(
                tool_id,
                f'follow-up field "{path}" is not declared by the full output schema',
                reason=Reason.VIEW_FOLLOW_UP_UNKNOWN,
            )
        if not keeps_path(spec.compact, steps):
            raise ToolRegistrationError(
                tool_id,
                f'the compact view drops "{path}", which a follow-up call takes as input',
                reason=Reason.VIEW_FOLLOW_UP_DROPPED,
            )
    return CompiledViews(
        mask=spec.compact,
        compact=ViewContract(compact_schema, schema_digest(dict(compact_schema))),
        full=ViewContract(full_schema, schema_digest(dict(full_schema))),
        moved_to_full=tuple(moved_to_full(full_schema, spec.compact)),
    )
