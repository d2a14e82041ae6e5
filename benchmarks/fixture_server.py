"""Upstream compozy's native tool catalog (269 tools; ``fixtures/``, MIT, copied unchanged)
served by a test MCP server, for the catalog-bytes and search-quality benchmarks.

The fixture holds each tool's name, toolsets and risk class, not its description or input
schema, so both are written here from those, the same way for every tool:

- the description says what the name says, in words (``window_close`` -> "Close a window."),
  then the toolset and what the risk class means;
- the input schema follows the verb: a list takes ``limit`` and ``cursor``; a search also a
  ``query``; a create takes a ``name`` and a ``description``; an update or set an id and
  ``fields``; every other verb the id of what it acts on.

Tools are served under their upstream name (``session_status``), so through the proxy they
are ``fixture__session_status``. A call echoes the tool and its input.

Served in-process as an extension (``build``), or on stdio: ``python -m
benchmarks.fixture_server``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

FIXTURE = Path(__file__).parent / "fixtures" / "compozy-native-tool-catalog.json"
SERVER = "fixture"
ENTRY_POINT = "benchmarks.fixture_server:build"

#: verbs that take a page of things
LISTS = {"list", "search", "history", "logs", "events", "runs", "messages", "requests"}
#: how each verb reads in a description; {it} is the thing, {things} its plural
PHRASES = {
    "list": "List {things}.",
    "search": "Search {things} by a query.",
    "history": "Show the history of {things}.",
    "logs": "Show the logs of {it}.",
    "events": "List the events of {it}.",
    "runs": "List the runs of {it}.",
    "messages": "List the messages of {it}.",
    "requests": "List the pending requests of {it}.",
    "get": "Get {it}.",
    "show": "Show {it}.",
    "read": "Read {it}.",
    "info": "Describe {it}.",
    "describe": "Describe {it}.",
    "inspect": "Inspect {it} in detail.",
    "status": "Report the status of {it}.",
    "health": "Report the health of {it}.",
    "diff": "Show what changed in {it}.",
    "preview": "Preview {it} without applying it.",
    "validate": "Validate {it}.",
    "create": "Create {it}.",
    "delete": "Delete {it}.",
    "remove": "Remove {it}.",
    "update": "Update {it}.",
    "set": "Set {it}.",
    "unset": "Unset {it}.",
    "enable": "Enable {it}.",
    "disable": "Disable {it}.",
    "cancel": "Cancel {it}.",
    "kill": "Kill {it} at once.",
    "pause": "Pause {it}.",
    "resume": "Resume {it}.",
    "retry": "Retry {it}.",
    "approve": "Approve {it}.",
    "trigger": "Trigger {it} now.",
    "reload": "Reload {it}.",
    "promote": "Promote {it}.",
    "subscribe": "Subscribe to {it}.",
    "resize": "Resize {it}.",
    "reorder": "Reorder {things}.",
}
CREATES = {"create"}
CHANGES = {"update", "set"}
RISK_SENTENCE = {
    "read": "Read-only.",
    "mutating": "Changes state.",
    "destructive": "Destructive: it cannot be undone.",
    "open_world": "Reaches services outside this machine.",
}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 500, "description": "At most this many."}
CURSOR = {"type": "string", "description": "next_cursor of the previous page."}


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _plural(word: str) -> str:
    return word if word.endswith("s") else word + "s"


def _parts(entry: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The verb of a name (its last word, when it is one: a known verb, or any last word of a
    tool that changes something) and the words of its object."""
    words = entry["native_name"].split("_")
    if len(words) > 1 and (words[-1] in PHRASES or entry["risk"] != "read"):
        return words[-1], words[:-1]
    return None, words


def description(entry: dict[str, Any]) -> str:
    verb, words = _parts(entry)
    thing = " ".join([*words[:-1], _singular(words[-1])])
    things = " ".join([*words[:-1], _plural(words[-1])])
    if verb is None:
        text = f"Show {' '.join(words)}." if entry["risk"] == "read" else f"{things.capitalize()}."
    else:
        article = "an" if thing[0] in "aeiou" else "a"
        phrase = PHRASES.get(verb, verb.capitalize() + " {it}.")
        text = phrase.format(it=f"{article} {thing}", things=things)
    toolset = entry["toolsets"][0].split("__", 1)[-1].replace("_", " ")
    return f"{text} Part of the {toolset} tools. {RISK_SENTENCE[entry['risk']]}"


def input_schema(entry: dict[str, Any]) -> dict[str, Any]:
    verb, words = _parts(entry)
    noun = _singular(words[-1])
    ident = {"type": "string", "description": f"The {noun}'s id."}
    properties: dict[str, Any]
    required: list[str] = []
    if verb in LISTS:
        properties = {"limit": LIMIT, "cursor": CURSOR}
        if verb == "search":
            properties = {"query": {"type": "string", "description": "Words to look for."}}
            properties |= {"limit": LIMIT}
            required = ["query"]
    elif verb in CREATES:
        properties = {
            "name": {"type": "string", "description": f"The new {noun}'s name."},
            "description": {"type": "string", "description": "What it is for."},
        }
        required = ["name"]
    elif verb in CHANGES:
        properties = {
            f"{noun}_id": ident,
            "fields": {"type": "object", "description": "The fields to change and their values."},
        }
        required = [f"{noun}_id", "fields"]
    elif verb is None and entry["risk"] == "read":
        properties = {"limit": LIMIT}
    else:
        properties = {f"{noun}_id": ident}
        required = [f"{noun}_id"]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def hints(entry: dict[str, Any]) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=entry["read_only"],
        destructive_hint=entry["destructive"],
        open_world_hint=entry["open_world"],
    )


@cache
def entries() -> tuple[dict[str, Any], ...]:
    loaded: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return tuple(loaded)


def tools() -> list[Tool]:
    return [
        Tool(
            name=entry["native_name"],
            description=description(entry),
            input_schema=input_schema(entry),
            annotations=hints(entry),
        )
        for entry in entries()
    ]


def build() -> Server[Any]:
    listed = tools()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        echo = {"tool": params.name, "input": params.arguments or {}}
        return CallToolResult(content=[TextContent(text=json.dumps(echo))], structured_content=echo)

    return Server(SERVER, version="0.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve_stdio)
