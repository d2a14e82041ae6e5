"""Progressive discovery (``--discovery search``): instead of every tool, ``tools/list``
advertises three, and a client finds and calls the rest through them:

- ``compozy__tool_search``: the tools this caller may use, native and of MCP servers, best
  match first, each with its one-line description and input schema;
- ``compozy__tool_info``: a tool's full contract;
- ``compozy__tool_call``: ``{"tool_id", "input"}`` calls any of them.

The first two are the native tools (through the one dispatch path, as any call);
``compozy__tool_call`` is the proxy's: it routes exactly as ``tools/call`` with that name and
input would, so results, errors, result views and policy filtering are the same. Only an
unknown ``tool_id`` differs: it is a tool error (the model sees it), where an unknown
``tools/call`` name is a JSON-RPC error.

``--discovery full`` (the default) advertises every tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.types import Tool, ToolAnnotations

from compozy_mcp.validation import InputCheck

TOOL_SEARCH = "compozy__tool_search"
TOOL_INFO = "compozy__tool_info"
TOOL_CALL = "compozy__tool_call"


TOOL_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_id": {
            "type": "string",
            "minLength": 1,
            "description": "The id of the tool to call, as compozy__tool_search returns it.",
        },
        "input": {
            "type": "object",
            "description": "The tool's input, as its input schema says (result_view included).",
        },
    },
    "required": ["tool_id"],
    "additionalProperties": False,
}
TOOL_CALL_CHECK = InputCheck(TOOL_CALL_SCHEMA)

TOOL_CALL_TOOL = Tool(
    name=TOOL_CALL,
    title="Tool call",
    description="Call any tool this caller may use, native or of an MCP server, by the id "
    "compozy__tool_search found, with its input. The result is the tool's own, exactly as if "
    "it had been called directly.",
    input_schema=TOOL_CALL_SCHEMA,
    # it may call anything: the cautious hints
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
)


def search_listing(visible: Sequence[Tool]) -> list[Tool]:
    """What ``tools/list`` advertises in search mode, from the native tools the caller may
    see (a policy that refuses search or info leaves them out; the call tool is always
    there, and checks each call)."""
    kept = [tool for tool in visible if tool.name in (TOOL_SEARCH, TOOL_INFO)]
    kept.sort(key=lambda tool: (TOOL_SEARCH, TOOL_INFO).index(tool.name))
    return [*kept, TOOL_CALL_TOOL]
