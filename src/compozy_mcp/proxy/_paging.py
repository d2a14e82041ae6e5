"""``tools/list`` pages over a fixed list of tools: cursors are start offsets, the first page
has none. ``page_size`` ``None`` serves the whole list in one page: SDK clients re-list before
calling a tool they have not seen, and only read the first page to do it."""

from __future__ import annotations

from collections.abc import Sequence

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, ListToolsResult, PaginatedRequestParams, Tool


class Pages:
    __slots__ = ("_pages",)

    def __init__(self, tools: Sequence[Tool], page_size: int | None = None) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        size = page_size or max(1, len(tools))
        starts = list(range(0, max(1, len(tools)), size))
        self._pages: dict[str, ListToolsResult] = {}
        for index, start in enumerate(starts):
            cursor = "" if index == 0 else str(start)
            following = str(starts[index + 1]) if index + 1 < len(starts) else None
            self._pages[cursor] = ListToolsResult(
                tools=list(tools[start : start + size]), next_cursor=following
            )

    def page(self, params: PaginatedRequestParams | None) -> ListToolsResult:
        """The page a ``tools/list`` request asks for; an unknown cursor is ``-32602``."""
        cursor = params.cursor if params is not None and params.cursor is not None else ""
        found = self._pages.get(cursor)
        if found is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
        return found
