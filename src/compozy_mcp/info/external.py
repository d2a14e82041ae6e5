"""Tools that are not native: the tools of upstream MCP servers and of extensions, served
through the proxy unchanged as ``<server>__<tool>``.

The catalog sees them through :class:`ExternalTools`, which the process that connects the
servers provides (:mod:`compozy_mcp.upstream`); nothing here knows MCP. Their schemas are
theirs: no selector is added, none is checked, and their own ``outputSchema`` is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from compozy_mcp.jsonutil import integral, schema_digest


@dataclass(frozen=True, slots=True)
class ExternalTool:
    #: ``<server>__<name>``, the name clients call it by
    id: str
    server: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    #: the server's MCP annotations (``readOnlyHint``, ...), as it sent them
    annotations: Mapping[str, Any] | None = None
    title: str | None = None

    def descriptor(self) -> dict[str, Any]:
        """What ``compozy__tool_info`` says of it: its own contracts, as the server declared
        them, and the server it belongs to."""
        # integral numbers as integers (jsonutil.integral): the same JSON numbers, printed alike
        # by every library, so a digest recomputed from the descriptor matches
        input_schema = integral(dict(self.input_schema))
        out: dict[str, Any] = {
            "id": self.id,
            "description": self.description,
            "input_schema": input_schema,
            "input_schema_digest": schema_digest(input_schema),
        }
        if self.output_schema is not None:
            output_schema = integral(dict(self.output_schema))
            out["output_schema"] = output_schema
            out["output_schema_digest"] = schema_digest(output_schema)
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        if self.title:
            out["title"] = self.title
        out["server"] = self.server
        return out


class ExternalTools(Protocol):
    """The external tools a process serves right now."""

    @property
    def version(self) -> int:
        """Changes whenever :meth:`tools` does."""
        ...

    def tools(self) -> Sequence[ExternalTool]: ...
