"""Tool descriptors: the contract of a tool as ``compozy__tool_info`` and the API publish it.

For a tool with views, ``output_schema`` and ``output_schema_digest`` describe the compact
view and ``output_views`` carries both contracts; a single-result tool has ``output_schema``
only (spec, "Discovering both contracts"). Their schema is
:data:`compozy_mcp.native.contract_tools.DESCRIPTOR_SCHEMA`.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.native.registry import RegisteredTool, Risk


def risk_flags(risk: Risk) -> dict[str, bool]:
    return {
        "read_only": risk is Risk.READ,
        "destructive": risk is Risk.DESTRUCTIVE,
        "open_world": risk is Risk.OPEN_WORLD,
    }


def descriptor(tool: RegisteredTool, *, id_key: str = "id") -> dict[str, Any]:
    """The descriptor of a tool. ``id_key`` is ``"tool_id"`` for HTTP ``ToolDescriptorPayload``."""
    out: dict[str, Any] = {
        id_key: tool.id,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "input_schema_digest": tool.input_schema_digest,
        "output_schema": tool.output_schema,
        "output_schema_digest": tool.output_schema_digest,
    }
    if tool.views is not None:
        out["output_views"] = {
            "compact": tool.views.compact.payload(),
            "full": tool.views.full.payload(),
        }
    out["risk"] = tool.risk.value
    out.update(risk_flags(tool.risk))
    out["idempotent"] = tool.definition.idempotent
    out["toolsets"] = list(tool.definition.toolsets)
    out["has_result_views"] = tool.has_views
    return out
