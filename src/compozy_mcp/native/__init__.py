"""Native tools: definitions, handlers and the registry that checks them."""

from __future__ import annotations

import functools

from compozy_mcp.native.registry import RegisteredTool, Risk, ToolDefinition, ToolRegistry, register


def native_tools() -> list[ToolDefinition]:
    """Every native tool, in catalog order."""
    from compozy_mcp.native._artifact_tools import artifact_tools
    from compozy_mcp.native._heartbeat_tools import heartbeat_tools
    from compozy_mcp.native._hook_tools import hook_tools
    from compozy_mcp.native._skill_tools import skill_tools
    from compozy_mcp.native._task_tools import task_tools
    from compozy_mcp.native.agent_tools import agent_tools
    from compozy_mcp.native.approval_tools import approval_tools
    from compozy_mcp.native.contract_tools import contract_tools
    from compozy_mcp.native.loop_tools import loop_tools
    from compozy_mcp.native.session_tools import session_tools
    from compozy_mcp.native.worktree_tools import worktree_tools

    return [
        *session_tools(),
        *agent_tools(),
        *contract_tools(),
        *skill_tools(),
        *artifact_tools(),
        *hook_tools(),
        *approval_tools(),
        *loop_tools(),
        *worktree_tools(),
        *task_tools(),
        *heartbeat_tools(),
    ]


@functools.cache
def _registered_native_tools() -> tuple[RegisteredTool, ...]:
    """The native tools, registered once per process. Registration is pure (the same
    definitions give the same contracts; nothing changes a registered tool) and costs tens of
    milliseconds (schema digests, view contracts), which every app, in every CLI command and
    every test, would otherwise pay again."""
    return tuple(register(definition) for definition in native_tools())


def build_registry(extra: list[ToolDefinition] | None = None) -> ToolRegistry:
    """A registry of the native tools (and ``extra`` ones); raises on any invalid tool."""
    registry = ToolRegistry()
    for tool in _registered_native_tools():
        registry.add_registered(tool)
    for definition in extra or []:
        registry.add(definition)
    return registry


__all__ = ["Risk", "ToolDefinition", "ToolRegistry", "build_registry", "native_tools"]
