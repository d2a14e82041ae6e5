"""A ``tool.pre_call`` patch of a native tool's input, checked as the call checks its input.

The spec's consequences (Hooks): the patched input is checked again, selector first, so a patch
asking for ``result_view: "full"`` gives the caller the full record, and on a single-result tool
fails with the single-result error; on a call whose caller pinned the view (a Loop node), a
patch that selects another view fails with ``result_view_pinned``. A patch that leaves the
selector out of a pinned call keeps the pinned view: it did not ask to change it.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.errors import ResultViewPinned
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.views import SELECTOR_FIELD, ResultView


def patched_input(
    tool: RegisteredTool, raw: Any, pinned: ResultView | None
) -> tuple[dict[str, Any], ResultView | None]:
    tool_input = tool.object_input(raw)
    if pinned is not None and SELECTOR_FIELD not in tool_input:
        tool_input = {**tool_input, SELECTOR_FIELD: pinned.value}
    view = tool.selected_view(tool_input)
    if pinned is not None and view is not pinned:
        raise ResultViewPinned(tool.id, pinned.value)
    return tool.check_input(tool_input), view
