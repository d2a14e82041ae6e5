"""The ``result_view`` selector: its values, its published schema, and the check run first."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from compozy_mcp.codes import Code
from compozy_mcp.errors import ResultViewInvalid, ResultViewNotAccepted

SELECTOR_FIELD = "result_view"


class ResultView(StrEnum):
    """Which view of a native tool's record a call returns. ``compact`` is the default."""

    COMPACT = "compact"
    FULL = "full"


DEFAULT_VIEW = ResultView.COMPACT
_VIEWS: dict[object, ResultView] = {view.value: view for view in ResultView}

#: The selector as every input schema of a tool with views lists it.
SELECTOR_SCHEMA: dict[str, Any] = {
    "type": "string",
    "enum": [ResultView.COMPACT.value, ResultView.FULL.value],
    "description": "compact (default) or full record; compozy__tool_info has both contracts.",
}


def select_view(
    tool_id: str,
    has_views: bool,
    tool_input: Mapping[str, Any],
    *,
    input_error_code: Code | None = None,
) -> ResultView | None:
    """Return the view a call selects, or ``None`` for a single-result tool.

    Runs before any other input check, so a bad selector is reported even when the rest of
    the input is wrong too; in every error case the tool does not run.
    """
    if SELECTOR_FIELD not in tool_input:
        return DEFAULT_VIEW if has_views else None
    if not has_views:
        raise ResultViewNotAccepted(tool_id, code=input_error_code)
    value = tool_input[SELECTOR_FIELD]
    # A bool is hashable and not a string; only exact strings select a view.
    view = _VIEWS.get(value) if isinstance(value, str) else None
    if view is None:
        raise ResultViewInvalid(tool_id, code=input_error_code)
    return view


def without_selector(tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """The input a handler receives: everything but the selector (a shallow copy)."""
    return {key: value for key, value in tool_input.items() if key != SELECTOR_FIELD}
