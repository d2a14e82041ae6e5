"""Pinned contracts: what a run keeps of each tool node's view, and the check that the live
tool still has it.

A run pins, per tool node, ``{tool_id, view, input_schema_digest, output_schema_digest}`` of
the view the node selected (``view`` is ``null`` for a single-result tool). Before the node
runs, the pinned digests are compared with the live descriptor; a difference fails the node
with ``action_contract_stale`` (upstream §7): the run started against a contract that is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compozy_mcp.errors import ActionContractStale
from compozy_mcp.loops._lint import selected_view
from compozy_mcp.loops._model import Definition
from compozy_mcp.native.registry import RegisteredTool, ToolRegistry
from compozy_mcp.views import ResultView

Contract = dict[str, Any]


def live_contract(tool: RegisteredTool, view: str | None) -> Contract:
    if tool.views is not None and view is not None:
        output = tool.views.contract(ResultView(view)).digest
    else:
        output = tool.output_schema_digest
    return {
        "tool_id": tool.id,
        "view": view,
        "input_schema_digest": tool.input_schema_digest,
        "output_schema_digest": output,
    }


def pin(definition: Definition, tools: ToolRegistry) -> dict[str, Contract]:
    """The contract of every tool node of a (linted) definition, by node id."""
    pinned: dict[str, Contract] = {}
    for node in definition.nodes.values():
        if not node.is_tool:
            continue
        tool = tools.get(node.kind)
        pinned[node.id] = live_contract(tool, selected_view(tool, node.params))
    return pinned


def check(node_id: str, pinned: Mapping[str, Any], tools: ToolRegistry) -> RegisteredTool:
    """The live tool, if it still has the contract ``pinned``; else :class:`ActionContractStale`."""
    tool_id = str(pinned["tool_id"])
    tool = tools.find(tool_id)
    if tool is None:
        raise ActionContractStale(node_id, tool_id, pinned, "the tool is no longer registered")
    view = pinned.get("view")
    if view is not None and not tool.has_views:
        raise ActionContractStale(node_id, tool_id, pinned, "the tool no longer has views")
    live = live_contract(tool, view)
    for key in ("input_schema_digest", "output_schema_digest"):
        if live[key] != pinned.get(key):
            raise ActionContractStale(
                node_id, tool_id, pinned, f"{key.replace('_', ' ')} is now {live[key][:12]}…"
            )
    return tool
