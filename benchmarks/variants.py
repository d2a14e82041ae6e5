"""The proxy as it advertised tools at earlier stages of the feature, for catalog figures.

Each variant is a real :class:`~compozy_mcp.proxy.server.ProxyServer` whose ``tools/list``
entries are replaced, so its catalog goes through the same SDK server and serializer:

- ``baseline``: before result views. Every tool advertises ``outputSchema`` = its full output
  schema; descriptions and input schemas carry no selector.
- ``views_with_schemas``: views, with output schemas still advertised. ``outputSchema`` is the
  compact contract (as ``output_schema`` is in the descriptor), and both view contracts are in
  ``_meta["compozy.dev/output_views"]``: MCP's ``Tool`` has no ``output_views`` field and the
  SDK drops unknown fields, so ``_meta`` is the only place a client could receive them.
- ``current``: the proxy unchanged (no ``outputSchema``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.types import Tool

from compozy_mcp.assembly import App
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.proxy._listing import mcp_tool, risk_annotations
from compozy_mcp.proxy.server import ProxyServer

META_OUTPUT_VIEWS = "compozy.dev/output_views"
VARIANTS = ("baseline", "views_with_schemas", "current")


def baseline_tool(tool: RegisteredTool) -> Tool:
    defn = tool.definition
    return Tool(
        name=tool.id,
        description=defn.description,
        input_schema=dict(defn.input_schema),
        output_schema=dict(defn.output_schema),
        annotations=risk_annotations(tool),
    )


def views_with_schemas_tool(tool: RegisteredTool) -> Tool:
    meta: dict[str, Any] | None = None
    if tool.views is not None:
        meta = {
            META_OUTPUT_VIEWS: {
                "compact": tool.views.compact.payload(),
                "full": tool.views.full.payload(),
            }
        }
    return Tool(
        name=tool.id,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=dict(tool.output_schema),
        annotations=risk_annotations(tool),
        _meta=meta,
    )


ADVERTISE: dict[str, Callable[[RegisteredTool], Tool]] = {
    "baseline": baseline_tool,
    "views_with_schemas": views_with_schemas_tool,
    "current": mcp_tool,
}


class VariantProxyServer(ProxyServer):
    """A ``ProxyServer`` whose ``tools/list`` advertises tools the way ``variant`` did."""

    def __init__(self, app: App, variant: str, *, page_size: int | None = None) -> None:
        self.variant = variant
        super().__init__(app, page_size=page_size)

    def advertise(self, tool: RegisteredTool) -> Tool:
        return ADVERTISE[self.variant](tool)
