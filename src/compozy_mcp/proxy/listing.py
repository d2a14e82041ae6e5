"""What ``tools/list`` advertises for a native tool: name, description, input schema and
annotations derived from the risk class. Never ``outputSchema``: contracts are served on demand
by ``compozy__tool_info`` (spec, "Managed-session MCP clients")."""

from __future__ import annotations

from mcp.types import Tool, ToolAnnotations

from compozy_mcp.native.registry import RegisteredTool, Risk


def risk_annotations(tool: RegisteredTool) -> ToolAnnotations:
    """MCP hints for a risk class, each sent explicitly so no client relies on defaults.

    ``destructiveHint`` and ``idempotentHint`` mean something only when ``readOnlyHint`` is
    false (MCP spec), so read-only tools carry just ``readOnlyHint`` and ``openWorldHint``.
    """
    risk = tool.risk
    open_world = risk is Risk.OPEN_WORLD
    if risk is Risk.READ:
        return ToolAnnotations(read_only_hint=True, open_world_hint=open_world)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=risk is Risk.DESTRUCTIVE,
        idempotent_hint=tool.definition.idempotent,
        open_world_hint=open_world,
    )


def mcp_tool(tool: RegisteredTool) -> Tool:
    return Tool(
        name=tool.id,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=risk_annotations(tool),
    )
