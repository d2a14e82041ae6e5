"""The tool catalog: which tools a caller may see, their descriptors, and search over them.

Native tools come from the registry; a process that serves upstream MCP servers attaches their
tools (:class:`~compozy_mcp.info.external.ExternalTools`). A managed session sees the native
tools its policy's ``tools`` allow and the external tools of the servers its ``mcp_servers``
allow; the operator sees everything.

Search ranks with BM25F (:mod:`compozy_mcp.ranking`) over each tool's name (with its toolsets
or server), its description and its parameter names; the index is rebuilt when the external
tools change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.info.descriptors import descriptor
from compozy_mcp.info.external import ExternalTool, ExternalTools
from compozy_mcp.native.registry import RegisteredTool, ToolRegistry
from compozy_mcp.ranking import Bm25fIndex, FieldWeight
from compozy_mcp.sessions.model import PermissionPolicy
from compozy_mcp.sessions.policy import allows
from compozy_mcp.sessions.service import Sessions

#: names are short and say the most; parameter names say what a tool takes
SEARCH_FIELDS = {
    "name": FieldWeight(weight=3.0, b=0.3),
    "description": FieldWeight(weight=1.0, b=0.75),
    "parameters": FieldWeight(weight=1.5, b=0.5),
}
ONE_LINE = 240

Entry = RegisteredTool | ExternalTool


def one_line(text: str, limit: int = ONE_LINE) -> str:
    """The first paragraph of a description on one line, cut at a sentence end (or with an
    ellipsis) when longer than ``limit``."""
    first = " ".join(text.strip().split("\n\n", 1)[0].split())
    if len(first) <= limit:
        return first
    cut = first[:limit]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 0 else cut.rstrip() + "…"


def _document(entry: Entry) -> dict[str, str]:
    properties = entry.input_schema.get("properties")
    # a server's schema is its own: one that is not an object of properties has no names here
    parameters = " ".join(properties) if isinstance(properties, dict) else ""
    if isinstance(entry, ExternalTool):
        name = " ".join(filter(None, [entry.id, entry.title]))
    else:
        name = " ".join([entry.id, *entry.definition.toolsets])
    return {"name": name, "description": entry.description, "parameters": parameters}


class _SearchIndex:
    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self.index = Bm25fIndex([_document(e) for e in self.entries], SEARCH_FIELDS)


class ToolCatalog:
    def __init__(self, registry: ToolRegistry, sessions: Sessions) -> None:
        self.registry = registry
        self._sessions = sessions
        self._descriptors: dict[str, dict[str, Any]] = {}
        self._external: ExternalTools | None = None
        self._index: _SearchIndex | None = None
        self._index_version: int | None = None

    def attach(self, external: ExternalTools) -> None:
        """Serve ``external``'s tools too (a proxy or daemon that connects MCP servers)."""
        self._external = external
        self._index = None

    def _policy(self, scope: CallScope) -> PermissionPolicy | None:
        return self._sessions.policy(scope.session_id) if scope.session_id else None

    def visible(self, scope: CallScope = OPERATOR) -> list[RegisteredTool]:
        """Native tools the caller may see and call, in registry order.

        A session sees what its permission policy allows, except the operator's own tools
        (which it could never call); an operator sees everything. A session that does not
        exist sees nothing.
        """
        if scope.session_id is None:
            return list(self.registry)
        policy = self._policy(scope)
        if policy is None:
            return []
        return [
            tool
            for tool in self.registry
            if allows(policy.tools, tool.id) and not tool.definition.operator_only
        ]

    def find_visible(self, tool_id: str, scope: CallScope = OPERATOR) -> RegisteredTool | None:
        tool = self.registry.find(tool_id)
        if tool is None or scope.session_id is None:
            return tool
        policy = self._policy(scope)
        if policy is None or tool.definition.operator_only:
            return None
        return tool if allows(policy.tools, tool.id) else None

    def server_visible(self, server: str, scope: CallScope = OPERATOR) -> bool:
        """Whether the caller may use the tools of MCP server ``server``."""
        if scope.session_id is None:
            return True
        policy = self._policy(scope)
        return policy is not None and allows(policy.mcp_servers, server)

    def external_visible(self, scope: CallScope = OPERATOR) -> list[ExternalTool]:
        """External tools the caller may see, in the order their servers list them."""
        if self._external is None:
            return []
        tools = self._external.tools()
        if scope.session_id is None:
            return list(tools)
        policy = self._policy(scope)
        if policy is None:
            return []
        return [tool for tool in tools if allows(policy.mcp_servers, tool.server)]

    def find_external(self, tool_id: str, scope: CallScope = OPERATOR) -> ExternalTool | None:
        return next((t for t in self.external_visible(scope) if t.id == tool_id), None)

    def descriptor(self, tool: RegisteredTool) -> dict[str, Any]:
        """The tool's descriptor, built once (descriptors are immutable)."""
        cached = self._descriptors.get(tool.id)
        if cached is None:
            cached = self._descriptors[tool.id] = descriptor(tool)
        return cached

    def describe(self, tool_id: str, scope: CallScope = OPERATOR) -> dict[str, Any] | None:
        """The descriptor of a native or external tool the caller may see."""
        native = self.find_visible(tool_id, scope)
        if native is not None:
            return self.descriptor(native)
        external = self.find_external(tool_id, scope)
        return external.descriptor() if external is not None else None

    @staticmethod
    def summary(tool: RegisteredTool) -> dict[str, Any]:
        return {
            "id": tool.id,
            "description": tool.description,
            "risk": tool.risk.value,
            "has_result_views": tool.has_views,
            "toolsets": list(tool.definition.toolsets),
        }

    def _search_index(self) -> _SearchIndex:
        version = self._external.version if self._external is not None else None
        if self._index is None or version != self._index_version:
            external = self._external.tools() if self._external is not None else ()
            self._index = _SearchIndex([*self.registry, *external])
            self._index_version = version
        return self._index

    def _may_see(self, entry: Entry, policy: PermissionPolicy | None, scope: CallScope) -> bool:
        if scope.session_id is None:
            return True
        if policy is None:
            return False
        if isinstance(entry, ExternalTool):
            return allows(policy.mcp_servers, entry.server)
        return allows(policy.tools, entry.id) and not entry.definition.operator_only

    def search(
        self,
        query: str,
        scope: CallScope = OPERATOR,
        limit: int = 10,
        *,
        external: bool = True,
    ) -> list[dict[str, Any]]:
        """The tools best matching ``query``, best first: each hit's id, one-line description,
        input schema and score (BM25F), plus risk and views for native tools or the server for
        external ones. A query that is exactly a tool's id puts that tool first."""
        found = self._search_index()
        policy = self._policy(scope)
        exact = query.strip()
        ranked: list[tuple[bool, float, str, Entry]] = []
        for index, score in found.index.scores(query).items():
            entry = found.entries[index]
            if not external and isinstance(entry, ExternalTool):
                continue
            if self._may_see(entry, policy, scope):
                ranked.append((entry.id == exact, score, entry.id, entry))
        if not any(is_exact for is_exact, *_ in ranked):
            hit = self.find_visible(exact, scope) or (
                self.find_external(exact, scope) if external else None
            )
            if hit is not None:
                ranked.append((True, 0.0, hit.id, hit))
        ranked.sort(key=lambda item: (not item[0], -item[1], item[2]))
        return [_hit(entry, score) for _, score, _, entry in ranked[:limit]]


def _hit(entry: Entry, score: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": entry.id,
        "description": one_line(entry.description),
        "input_schema": dict(entry.input_schema),
    }
    if isinstance(entry, ExternalTool):
        out["server"] = entry.server
    else:
        out["risk"] = entry.risk.value
        out["has_result_views"] = entry.has_views
        out["toolsets"] = list(entry.definition.toolsets)
    out["score"] = round(score, 4)
    return out
