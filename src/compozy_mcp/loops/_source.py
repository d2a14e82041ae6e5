"""Reading a Loop document (YAML, or JSON, which YAML reads too) with the line and column of
every value, so that each lint item can point at its source."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compozy_mcp.loops._marks import Mark, Path, SourceError
from compozy_mcp.loops.limits import LoopLimits, exceeded
from compozy_mcp.reasons import Reason

__all__ = ["Mark", "Path", "Source", "SourceError", "from_object", "load"]


@dataclass(slots=True)
class Source:
    """A parsed document and where each of its values is."""

    data: Any
    marks: dict[Path, Mark] = field(default_factory=dict)

    def mark(self, path: Path) -> Mark | None:
        """The mark of ``path``, or of its nearest ancestor that has one."""
        while True:
            found = self.marks.get(path)
            if found is not None or not path:
                return found
            path = path[:-1]


def load(text: str, limits: LoopLimits | None = None) -> Source:
    """Parse ``text``; raises :class:`SourceError` with the position of a syntax error, and
    :class:`~compozy_mcp.errors.LimitExceeded` for a document past ``limits``."""
    limits = limits or LoopLimits()
    if len(text) > limits.source_bytes or len(text.encode()) > limits.source_bytes:
        raise exceeded(
            "the Loop document is too large",
            "loop_source_bytes",
            limits.source_bytes,
            Reason.SOURCE_TOO_LARGE,
        )
    # PyYAML is imported by the first document read, not by every process that may read one
    # (a daemon with no Loop file never holds it)
    from compozy_mcp.loops._yaml_read import read

    data, marks = read(text, limits)
    return Source(data, marks)


def from_object(data: Mapping[str, Any]) -> Source:
    """A document given as an object (no source text: no positions)."""
    return Source(dict(data))
