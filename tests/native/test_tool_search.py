"""Issue 16, progressive discovery: ``compozy__tool_search`` ranks native and pass-through tools
by relevance and returns what a call needs (id, one-line description, input schema);
``compozy__tool_info`` describes a pass-through tool with the contracts its server declared;
both filter by the caller's policy (``tools`` for native tools, ``mcp_servers`` for the
others)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.errors import ResourceNotFound
from compozy_mcp.info.catalog import one_line
from compozy_mcp.info.external import ExternalTool
from compozy_mcp.jsonutil import schema_digest

pytestmark = pytest.mark.anyio

LOOKUP = ExternalTool(
    id="notes__lookup",
    server="notes",
    description="Read one note by its name.\n\nLonger text the search shows no more of.",
    input_schema={
        "type": "object",
        "properties": {
            "note": {"type": "string"},
            "result_view": {"type": "string", "enum": ["brief", "verbose"]},
        },
        "required": ["note"],
    },
    output_schema={"type": "object", "required": ["note"]},
    annotations={"readOnlyHint": True},
    title="Look a note up",
)
BUILD = ExternalTool(
    id="docs__build_docs",
    server="docs",
    description="Build the documentation site.",
    input_schema={"type": "object", "properties": {"steps": {"type": "integer"}}},
)


@dataclass
class Tools:
    """The external tools a proxy would attach."""

    found: list[ExternalTool] = field(default_factory=lambda: [LOOKUP, BUILD])
    version: int = 1

    def tools(self) -> Sequence[ExternalTool]:
        return self.found


@pytest.fixture
def external(app: App) -> Tools:
    tools = Tools()
    app.catalog.attach(tools)
    return tools


async def search(call: Caller, query: str, **kw: object) -> list[dict[str, object]]:
    found = await call.structured("compozy__tool_search", {"query": query}, **kw)
    hits: list[dict[str, object]] = found["tools"]
    return hits


async def test_a_search_hit_has_what_a_call_needs(call: Caller, app: App) -> None:
    hit = (await search(call, "session status"))[0]
    tool = app.dispatcher.registry.get("compozy__session_status")
    assert hit["id"] == "compozy__session_status"
    assert hit["input_schema"] == tool.input_schema
    assert hit["description"] == one_line(tool.description)
    assert hit["risk"] == "read"
    assert hit["has_result_views"] is True
    assert isinstance(hit["score"], float)


async def test_search_finds_pass_through_tools_with_their_own_schema(
    call: Caller, external: Tools
) -> None:
    hits = await search(call, "read a note")
    assert hits[0]["id"] == "notes__lookup"
    assert hits[0]["input_schema"] == LOOKUP.input_schema
    assert hits[0]["server"] == "notes"
    assert hits[0]["description"] == "Read one note by its name."
    assert "risk" not in hits[0]
    parameter = await search(call, "steps")
    assert parameter[0]["id"] == "docs__build_docs"


async def test_search_follows_the_tools_as_they_change(call: Caller, external: Tools) -> None:
    assert (await search(call, "documentation"))[0]["id"] == "docs__build_docs"
    external.found, external.version = [LOOKUP], 2
    assert await search(call, "documentation") == []


async def test_an_exact_tool_id_is_the_first_hit(call: Caller, external: Tools) -> None:
    assert (await search(call, "compozy__skill_view"))[0]["id"] == "compozy__skill_view"
    assert (await search(call, "notes__lookup"))[0]["id"] == "notes__lookup"
    assert await search(call, "zebra") == []


async def test_search_and_info_show_a_session_only_what_its_policy_allows(
    call: Caller, external: Tools
) -> None:
    parent = (await call.create())["id"]
    child = (
        await call.structured(
            "compozy__session_spawn",
            {
                "parent_session_id": parent,
                "agent_name": "worker",
                "ttl_seconds": 600,
                "tools": ["compozy__tool_*"],
                "mcp_servers": ["notes"],
            },
        )
    )["session_id"]
    scope = CallScope(session_id=child)
    ids = {hit["id"] for hit in await search(call, "session note documentation", scope=scope)}
    assert ids == {"notes__lookup"}
    info = await call.structured("compozy__tool_info", {"tool_id": "notes__lookup"}, scope=scope)
    assert info["tool"]["descriptor"]["server"] == "notes"
    with pytest.raises(ResourceNotFound):
        await call("compozy__tool_info", {"tool_id": "docs__build_docs"}, scope=scope)


async def test_tool_info_of_a_pass_through_tool_has_the_contracts_its_server_declared(
    call: Caller, external: Tools
) -> None:
    found = await call.structured("compozy__tool_info", {"tool_id": "notes__lookup"})
    assert found["tool"]["descriptor"] == {
        "id": "notes__lookup",
        "description": LOOKUP.description,
        "input_schema": LOOKUP.input_schema,
        "input_schema_digest": schema_digest(dict(LOOKUP.input_schema)),
        "output_schema": LOOKUP.output_schema,
        "output_schema_digest": schema_digest({"type": "object", "required": ["note"]}),
        "annotations": {"readOnlyHint": True},
        "title": "Look a note up",
        "server": "notes",
    }
    bare = await call.structured("compozy__tool_info", {"tool_id": "docs__build_docs"})
    assert "output_schema" not in bare["tool"]["descriptor"]


def test_a_long_description_is_cut_to_one_line_at_a_sentence() -> None:
    text = "First sentence here. " + "More words " * 40
    assert one_line(text, 60) == "First sentence here."
    assert one_line("one\ntwo\n\nthree") == "one two"
    assert one_line("x" * 300, 10) == "x" * 10 + "…"


async def test_a_server_schema_without_properties_is_searched_by_name_and_description(
    call: Caller, external: Tools
) -> None:
    odd = ExternalTool(
        id="odd__tool",
        server="odd",
        description="A peculiar gadget.",
        input_schema={"type": "object", "properties": 5},
    )
    external.found, external.version = [odd], 3
    assert (await search(call, "peculiar gadget"))[0]["id"] == "odd__tool"


async def test_search_previews_count_matches_in_english(call: Caller) -> None:
    found = await call("compozy__tool_search", {"query": "session", "limit": 2})
    assert found.preview == "2 matches"
    one = await call("compozy__tool_search", {"query": "session", "limit": 1})
    assert one.preview == "1 match"
    skills = await call("compozy__skill_search", {"query": "nothing-matches-this"})
    assert skills.preview == "0 matches"
