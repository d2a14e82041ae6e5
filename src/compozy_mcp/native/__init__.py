"""Native tools: definitions, handlers and the registry that checks them."""

from __future__ import annotations

from compozy_mcp.native.registry import Risk, ToolDefinition, ToolRegistry


def native_tools() -> list[ToolDefinition]:
    """Every native tool, in catalog order."""
    from compozy_mcp.native.artifact_tools import artifact_tools
    from compozy_mcp.native.contract_tools import contract_tools
    from compozy_mcp.native.hook_tools import hook_tools
    from compozy_mcp.native.session_tools import session_tools
    from compozy_mcp.native.skill_tools import skill_tools

    return [
        *session_tools(),
        *contract_tools(),
        *skill_tools(),
        *artifact_tools(),
        *hook_tools(),
    ]


def build_registry(extra: list[ToolDefinition] | None = None) -> ToolRegistry:
    """A registry of the native tools (and ``extra`` ones); raises on any invalid tool."""
    registry = ToolRegistry()
    for definition in [*native_tools(), *(extra or [])]:
        registry.add(definition)
    return registry


__all__ = ["Risk", "ToolDefinition", "ToolRegistry", "build_registry", "native_tools"]
