"""The inputs of the Host API's session and tool operations: the input schemas of the matching
native tools (without the selector, which only tool calls take), so that an error names the
tool whose input it breaks, exactly as a tool call would."""

from __future__ import annotations

import functools
from typing import Any

from compozy_mcp.validation import InputCheck

SESSION_LIST = "compozy__session_list"
SESSION_STATUS = "compozy__session_status"
SESSION_CREATE = "compozy__session_create"
SESSION_ARCHIVE = "compozy__session_archive"
SESSION_UNARCHIVE = "compozy__session_unarchive"
SESSION_DELETE = "compozy__session_delete"
TOOL_SEARCH = "compozy__tool_search"


@functools.cache
def input_schema(tool_id: str) -> dict[str, Any]:
    """A native tool's own input schema, without the selector the registry adds."""
    from compozy_mcp.native import native_tools

    for definition in native_tools():
        if definition.id == tool_id:
            return dict(definition.input_schema)
    raise KeyError(tool_id)


@functools.cache
def _own_input(tool_id: str) -> InputCheck:
    return InputCheck(input_schema(tool_id))


def check(tool_id: str, value: Any) -> Any:
    """``value`` as the tool would take it (integral floats made ints); the tool's own
    :class:`~compozy_mcp.errors.ToolInvalidInput` if it breaks its input schema."""
    return _own_input(tool_id).check(tool_id, value)
