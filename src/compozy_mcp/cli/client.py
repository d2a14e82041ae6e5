"""Where CLI commands send tool calls. In-process on the embedded store by default."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from compozy_mcp.calls import OPERATOR, CallScope


class ToolClient(Protocol):
    def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]:
        """Run a tool; return the envelope ``{"structured", "preview", ...}`` or raise."""
        ...

    def close(self) -> None: ...


class LocalClient:
    """Runs calls through this process's own dispatcher, on ``$COMPOZY_HOME/compozy.db``."""

    def __init__(self) -> None:
        from compozy_mcp.app import open_app

        self._app = open_app()

    def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]:
        scope = CallScope(session_id=session, actor="agent") if session else OPERATOR
        result = asyncio.run(self._app.dispatcher.call(tool_id, tool_input, scope=scope))
        return result.envelope()

    def close(self) -> None:
        self._app.close()


def open_client() -> ToolClient:
    return LocalClient()
