"""What ``tools/list`` advertises for a native tool: name, description, input schema and
annotations derived from the risk class. Never ``outputSchema``: contracts are served on demand
by ``compozy__tool_info`` (spec, "Managed-session MCP clients")."""

from __future__ import annotations

from mcp.types import Tool, ToolAnnotations

from compozy_mcp.native.registry import RegisteredTool, Risk


def risk_annotations(tool: RegisteredTool) -> ToolAnnotations:
    """MCP hints for a risk class.

    The hints whose MCP defaults are the unsafe ones are always explicit: ``destructiveHint``
    and ``openWorldHint`` default to true, so read-only tools say ``destructiveHint: false``
    too rather than leave clients to remember it means something only when ``readOnlyHint`` is
    false. ``idempotentHint`` (default false, the cautious answer) means something only for
    tools that write, so read-only tools, idempotent by nature, leave it out: every byte of
    the listing stays in the model's context.
    """
    risk = tool.risk
    read_only = risk is Risk.READ
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=risk is Risk.DESTRUCTIVE,
        idempotent_hint=None if read_only else tool.definition.idempotent,
        open_world_hint=risk is Risk.OPEN_WORLD,
    )


def mcp_tool(tool: RegisteredTool) -> Tool:
    return Tool(
        name=tool.id,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=risk_annotations(tool),
    )
