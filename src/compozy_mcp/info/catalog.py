"""The tool catalog: which tools a caller may see, their descriptors, and search over them."""

from __future__ import annotations

import re
from typing import Any

from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.info.descriptors import descriptor
from compozy_mcp.native.registry import RegisteredTool, ToolRegistry
from compozy_mcp.sessions.policy import allows
from compozy_mcp.sessions.service import Sessions

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class ToolCatalog:
    def __init__(self, registry: ToolRegistry, sessions: Sessions) -> None:
        self.registry = registry
        self._sessions = sessions
        self._descriptors: dict[str, dict[str, Any]] = {}

    def visible(self, scope: CallScope = OPERATOR) -> list[RegisteredTool]:
        """Tools the caller may see and call, in registry order.

        A session sees what its permission policy allows; an operator sees everything. A
        session that does not exist sees nothing.
        """
        if scope.session_id is None:
            return list(self.registry)
        policy = self._sessions.policy(scope.session_id)
        if policy is None:
            return []
        return [tool for tool in self.registry if allows(policy.tools, tool.id)]

    def find_visible(self, tool_id: str, scope: CallScope = OPERATOR) -> RegisteredTool | None:
        tool = self.registry.find(tool_id)
        if tool is None or scope.session_id is None:
            return tool
        policy = self._sessions.policy(scope.session_id)
        return tool if policy is not None and allows(policy.tools, tool.id) else None

    def descriptor(self, tool: RegisteredTool) -> dict[str, Any]:
        """The tool's descriptor, built once (descriptors are immutable)."""
        cached = self._descriptors.get(tool.id)
        if cached is None:
            cached = self._descriptors[tool.id] = descriptor(tool)
        return cached

    @staticmethod
    def summary(tool: RegisteredTool) -> dict[str, Any]:
        return {
            "id": tool.id,
            "description": tool.description,
            "risk": tool.risk.value,
            "has_result_views": tool.has_views,
            "toolsets": list(tool.definition.toolsets),
        }

    def search(
        self, query: str, scope: CallScope = OPERATOR, limit: int = 10
    ) -> list[dict[str, Any]]:
        """Tools ranked by how well id, toolsets and description match the query's words."""
        terms = words(query)
        scored: list[tuple[int, str, RegisteredTool]] = []
        for tool in self.visible(scope):
            id_words = set(words(tool.id))
            set_words = {w for ts in tool.definition.toolsets for w in words(ts)}
            text_words = set(words(tool.description))
            score = 0
            for term in terms:
                score += 3 * (term in id_words) + 2 * (term in set_words) + (term in text_words)
                if term not in id_words and any(w.startswith(term) for w in id_words):
                    score += 1
            if query.strip() == tool.id:
                score += 10
            if score:
                scored.append((score, tool.id, tool))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [{**self.summary(tool), "score": score} for score, _, tool in scored[:limit]]
