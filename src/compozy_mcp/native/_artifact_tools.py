"""``compozy__tool_artifact_read``: read a truncated result back, one page at a time."""

from __future__ import annotations

from typing import Any

from compozy_mcp.artifacts import ARTIFACT_SCHEME, MAX_PAGE_BYTES
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.schemas import (
    BOOLEAN,
    COUNT,
    STRING,
    described,
    enum,
    nullable,
    obj,
    tool_input,
)

ARTIFACT_URI = {
    "type": "string",
    "pattern": f"^{ARTIFACT_SCHEME}art_[0-9a-f]{{64}}$",
    "description": "The artifact uri a truncated result names.",
}

PAGE = obj(
    {
        "artifact": obj({"uri": STRING, "mime_type": STRING, "bytes": COUNT, "sha256": STRING}),
        "offset": COUNT,
        "bytes": COUNT,
        "total_bytes": COUNT,
        "next_offset": nullable(COUNT),
        "eof": BOOLEAN,
    },
    {"data_base64": STRING, "data": STRING},
    order=("artifact", "offset", "bytes", "total_bytes", "data_base64", "data"),
)


async def _read(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    caller = call.scope.session_id
    may_read = None
    if caller is not None:  # a managed session reads what its own tree stored, nothing else
        access = call.services.sessions.access

        def may_read(owners: list[str]) -> bool:
            return any(owner and access.within(caller, owner) for owner in owners)

    return call.services.artifacts.read(
        call.tool_id,
        args["artifact_uri"],
        offset=args.get("offset", 0),
        limit=args.get("limit", MAX_PAGE_BYTES),
        encoding=args.get("encoding", "base64"),
        may_read=may_read,
    )


def _preview(page: dict[str, Any]) -> str:
    end = page["offset"] + page["bytes"]
    tail = "end of artifact" if page["eof"] else f"continue at offset {page['next_offset']}"
    return f"bytes {page['offset']}-{end} of {page['total_bytes']}; {tail}"


def artifact_tools() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            id="compozy__tool_artifact_read",
            description="Read a stored tool result (a truncated result's artifact) in pages of "
            f"up to {MAX_PAGE_BYTES} bytes; follow next_offset until eof.",
            input_schema=tool_input(
                {"artifact_uri": ARTIFACT_URI},
                {
                    "offset": described(COUNT, "Byte to start at: a page's next_offset."),
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_PAGE_BYTES,
                        "description": f"Page bytes; default {MAX_PAGE_BYTES}.",
                    },
                    "encoding": described(
                        enum("base64", "text"),
                        "base64 (default) or text: UTF-8 pages that never split a character.",
                    ),
                },
            ),
            output_schema=PAGE,
            handler=_read,
            risk=Risk.READ,
            toolsets=("compozy__bootstrap", "compozy__tool_artifacts"),
            preview=_preview,
            idempotent=True,
            budget_exempt=True,
        ),
    ]
