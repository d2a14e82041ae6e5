"""The contract tools, ``compozy__tool_*``: a tool's contracts on demand (``tool_info``), the
catalog a caller may use (``tool_list``) and search over it (``tool_search``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compozy_mcp.cursors import cursor_schema, decode_cursor, encode_cursor
from compozy_mcp.errors import ResourceNotFound
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolDefinition, count_preview
from compozy_mcp.schemas import (
    BOOLEAN,
    NUMBER,
    OPEN_OBJECT,
    STRING,
    array,
    described,
    enum,
    obj,
    strings,
    tool_input,
)
from compozy_mcp.views import KEEP, Each, Fields, ViewSpec

CATALOG = ("compozy__bootstrap", "compozy__catalog")
TOOL_CURSOR = "t"
TOOL_ID_INPUT = described(STRING, "A tool id, such as compozy__session_status.")

#: the descriptor of a tool, as tool_info, tool_list and the HTTP API publish it
VIEW_CONTRACT = obj({"schema": OPEN_OBJECT, "digest": STRING})
DESCRIPTOR_SCHEMA = obj(
    {
        "id": STRING,
        "description": STRING,
        "input_schema": OPEN_OBJECT,
        "input_schema_digest": STRING,
        "output_schema": OPEN_OBJECT,
        "output_schema_digest": STRING,
        "risk": enum(*(risk.value for risk in Risk)),
        "read_only": BOOLEAN,
        "destructive": BOOLEAN,
        "open_world": BOOLEAN,
        "idempotent": BOOLEAN,
        "toolsets": strings(),
        "has_result_views": BOOLEAN,
    },
    {"output_views": obj({"compact": VIEW_CONTRACT, "full": VIEW_CONTRACT})},
    order=(
        "id",
        "description",
        "input_schema",
        "input_schema_digest",
        "output_schema",
        "output_schema_digest",
        "output_views",
    ),
)


#: the descriptor of a tool of an upstream MCP server or an extension: its own contracts, as
#: its server declared them (no selector, no views), and the server's name
EXTERNAL_DESCRIPTOR_SCHEMA = obj(
    {
        "id": STRING,
        "description": STRING,
        "input_schema": OPEN_OBJECT,
        "input_schema_digest": STRING,
        "server": STRING,
    },
    {
        "output_schema": OPEN_OBJECT,
        "output_schema_digest": STRING,
        "annotations": OPEN_OBJECT,
        "title": STRING,
    },
    order=(
        "id",
        "description",
        "input_schema",
        "input_schema_digest",
        "output_schema",
        "output_schema_digest",
        "annotations",
        "title",
        "server",
    ),
)

ANY_DESCRIPTOR = {"anyOf": [DESCRIPTOR_SCHEMA, EXTERNAL_DESCRIPTOR_SCHEMA]}


async def _tool_info(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    found = call.services.catalog.describe(args["tool_id"], call.scope)
    if found is None:
        raise ResourceNotFound(call.tool_id, "tool", args["tool_id"])
    return {"tool": {"descriptor": found}}


#: one tool_search hit: what an agent needs to call the tool (native tools add their risk and
#: views, tools of MCP servers their server)
SEARCH_HIT = obj(
    {"id": STRING, "description": STRING, "input_schema": OPEN_OBJECT, "score": NUMBER},
    {
        "risk": enum(*(r.value for r in Risk)),
        "has_result_views": BOOLEAN,
        "toolsets": strings(),
        "server": STRING,
    },
    order=("id", "description", "input_schema", "risk", "has_result_views", "toolsets", "server"),
)
TOOL_LIST_ITEM = DESCRIPTOR_SCHEMA
TOOL_LIST_VIEWS = ViewSpec(
    Fields(
        {
            "tools": Each(Fields.of("id", "description", "risk", "has_result_views")),
            "next_cursor": KEEP,
        }
    ),
    follow_up=("tools[].id", "next_cursor"),
)


async def _tool_list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    catalog = call.services.catalog
    tools: Sequence[RegisteredTool] = catalog.visible(call.scope)
    if "toolset" in args:
        tools = [t for t in tools if args["toolset"] in t.definition.toolsets]
    if "risk" in args:
        tools = [t for t in tools if t.risk.value == args["risk"]]
    cursor = args.get("cursor")
    start = decode_cursor(call.tool_id, TOOL_CURSOR, cursor) if cursor is not None else 0
    limit = args.get("limit", 100)
    page = tools[start : start + limit]
    out: dict[str, Any] = {"tools": [catalog.descriptor(t) for t in page]}
    if start + limit < len(tools):
        out["next_cursor"] = encode_cursor(TOOL_CURSOR, start + limit)
    return out


async def _tool_search(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    found = call.services.catalog.search(args["query"], call.scope, args.get("limit", 10))
    return {"query": args["query"], "tools": found}


def contract_tools() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            id="compozy__tool_info",
            description="Read a tool's contract: input schema, output schema and digests; for "
            "tools with views, both the compact and the full contract (output_views). Tools of "
            "MCP servers (<server>__<tool>) have the contracts their server declared.",
            input_schema=tool_input({"tool_id": TOOL_ID_INPUT}),
            output_schema=obj({"tool": obj({"descriptor": ANY_DESCRIPTOR})}),
            handler=_tool_info,
            risk=Risk.READ,
            toolsets=CATALOG,
            preview=lambda r: r["tool"]["descriptor"]["id"],
            idempotent=True,
            answers_at_once=True,
        ),
        ToolDefinition(
            id="compozy__tool_list",
            description="List the tools this caller may use, optionally by toolset or risk.",
            input_schema=tool_input(
                optional={
                    "toolset": described(STRING, "Only tools of this toolset."),
                    "risk": described(enum(*(r.value for r in Risk)), "Only this risk class."),
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 500,
                        "description": "Page size; default 100.",
                    },
                    "cursor": cursor_schema(TOOL_CURSOR),
                }
            ),
            output_schema=obj({"tools": array(TOOL_LIST_ITEM)}, {"next_cursor": STRING}),
            handler=_tool_list,
            risk=Risk.READ,
            toolsets=CATALOG,
            views=TOOL_LIST_VIEWS,
            preview=count_preview("tools", "tool"),
            idempotent=True,
            max_result_bytes=1024 * 1024,
            answers_at_once=True,
        ),
        ToolDefinition(
            id="compozy__tool_search",
            description="Find the tools this caller may use, native and of MCP servers, for a "
            "task in a few words: best match first (BM25 over names, descriptions and parameter "
            "names), each with its one-line description and input schema, ready to call.",
            input_schema=tool_input(
                {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 500,
                        "description": "What the tool should do, in words.",
                    }
                },
                {
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "description": "Most hits; default 10.",
                    }
                },
            ),
            output_schema=obj({"query": STRING, "tools": array(SEARCH_HIT)}),
            handler=_tool_search,
            risk=Risk.READ,
            toolsets=CATALOG,
            preview=count_preview("tools", "match", "matches"),
            idempotent=True,
            answers_at_once=True,
        ),
    ]
