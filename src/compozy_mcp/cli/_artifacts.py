"""Reading a truncated result back whole: the pages of its artifact, as an agent is told to."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from compozy_mcp import jsonutil
from compozy_mcp.hostapi import operations as ops

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context
    from compozy_mcp.hostapi import HostClient


def is_truncated(structured: Any) -> bool:
    return (
        isinstance(structured, dict)
        and structured.get("truncated") is True
        and ("read_tool" in structured)
    )


def read_back(context: Context, truncated: dict[str, Any], *, session: str | None = None) -> Any:
    """The record a truncated result stands for, read page by page from its artifact."""
    read_tool = str(truncated["read_tool"])
    read_input = dict(truncated["read_input"], encoding="base64")
    chunks: list[bytes] = []

    async def read_all(host: HostClient) -> None:
        while True:
            page = (
                await host.call(
                    ops.INVOKE, {"tool_id": read_tool, "input": read_input}, session=session
                )
            )["result"]
            chunks.append(base64.b64decode(page["structured"]["data_base64"]))
            if page["structured"]["eof"]:
                return
            read_input["offset"] = page["structured"]["next_offset"]

    context.call(read_all)
    return jsonutil.loads(b"".join(chunks))
