"""A call of an upstream MCP server's tool, as the dispatcher's hooks see it
(:class:`compozy_mcp.dispatch.ExternalCall`): the input as the server takes it, the result as
it sends it (the MCP ``CallToolResult``, by its wire names), its JSON-RPC error as it sends it."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from compozy_mcp.errors import ToolDenied
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.asking import Asker
from compozy_mcp.upstream.connection import Progress
from compozy_mcp.upstream.supervisor import Upstream


class UpstreamCall:
    def __init__(
        self,
        upstream: Upstream,
        tool_id: str,
        own_name: str,
        *,
        progress: Progress,
        meta: dict[str, Any] | None,
        asker: Asker,
    ) -> None:
        self.upstream = upstream
        self.tool_id = tool_id
        self.own_name = own_name
        self._progress = progress
        self._meta = meta
        self._asker = asker

    @property
    def read_only(self) -> bool:
        """What the server's annotations say (``readOnlyHint``); unsaid is not read-only."""
        tool = next((tool for tool in self.upstream.tools if tool.name == self.own_name), None)
        annotations = tool.annotations if tool is not None else None
        return bool(annotations is not None and annotations.read_only_hint)

    async def forward(self, tool_input: dict[str, Any] | None) -> types.CallToolResult:
        return await self.upstream.call(
            self.tool_id,
            self.own_name,
            tool_input,
            progress=self._progress,
            meta=self._meta,
            asker=self._asker,
        )

    def result_payload(self, result: types.CallToolResult) -> dict[str, Any]:
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    def patched(
        self, result: types.CallToolResult, tool_result: dict[str, Any]
    ) -> types.CallToolResult:
        try:
            return types.CallToolResult.model_validate(tool_result)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(step) for step in first["loc"]) or "$"
            raise ToolDenied(
                self.tool_id,
                f'a tool_result patch of "{self.tool_id}" is not an MCP tool result: {where}: '
                f"{first['msg']}",
                reason=Reason.PATCH_NOT_APPLICABLE,
            ) from None

    def error_payload(self, error: Exception) -> dict[str, Any] | None:
        if not isinstance(error, MCPError):
            return None
        dumped: dict[str, Any] = error.error.model_dump(mode="json", exclude_none=True)
        return dumped
