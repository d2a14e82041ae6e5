"""Loop lint's report: the items found, each placed at its line and column in the document
(a position inside a template's text when the problem is there)."""

from __future__ import annotations

from compozy_mcp.loops import _refs as refs
from compozy_mcp.loops._model import ERROR, LintItem, Node, locate
from compozy_mcp.loops._source import Path, Source


class LintReport:
    """The items of one lint, in the order they were found."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.items: list[LintItem] = []

    def add(
        self,
        code: str,
        message: str,
        node: Node | None,
        where: Path,
        *,
        path: str | None = None,
        severity: str = ERROR,
        at: tuple[int | None, int | None] | None = None,
    ) -> None:
        line, column = at if at is not None else locate(self.source, where)
        self.items.append(
            LintItem(code, message, severity, node.id if node else None, path, line, column)
        )

    def text_position(self, where: Path, text: str, offset: int) -> tuple[int | None, int | None]:
        """Where ``offset`` of the text at ``where`` is in the document."""
        mark = self.source.mark(where)
        if mark is None:
            return None, None
        if self.source.marks.get(where) is None:
            return mark.line, mark.column
        return mark.at(*refs.position(text, offset))
