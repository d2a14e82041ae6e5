"""Issue 17, item 5: what the model reads. Every input property of every registered native
tool (nested ones too) has a description, every tool a title, and closed value sets are enums.
The walk covers whatever :func:`build_registry` registers, so a tool added later is held to
the same rule; ``tests/proxy/test_catalog.py`` checks the same on the wire."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from compozy_mcp.native import build_registry
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolDefinition, register
from compozy_mcp.schemas import STRING, described, enum, obj, tool_input

REGISTRY = build_registry()


def undescribed(schema: Any, path: str = "") -> Iterator[str]:
    """The path of every property under ``schema`` without a description."""
    if not isinstance(schema, dict):
        return
    for name, prop in schema.get("properties", {}).items():
        where = f"{path}.{name}" if path else name
        if not isinstance(prop, dict) or not str(prop.get("description", "")).strip():
            yield where
        yield from undescribed(prop, where)
    for key in ("items", "additionalProperties"):
        yield from undescribed(schema.get(key), f"{path}[]")
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            yield from undescribed(branch, path)


@pytest.mark.parametrize("tool", list(REGISTRY), ids=lambda tool: tool.id)
def test_every_input_property_has_a_description(tool: RegisteredTool) -> None:
    assert list(undescribed(tool.input_schema)) == []


@pytest.mark.parametrize("tool", list(REGISTRY), ids=lambda tool: tool.id)
def test_every_tool_has_a_title(tool: RegisteredTool) -> None:
    assert tool.title.strip()
    assert tool.title != tool.id


def test_the_walk_finds_a_missing_description_at_any_depth() -> None:
    async def handler(call: Any, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    tool = register(
        ToolDefinition(
            id="test__undescribed",
            description="A tool with gaps.",
            input_schema=tool_input(
                {"top": STRING},
                {
                    "nested": described(obj({"inner": STRING}), "An object."),
                    "ok": described(STRING, "Fine."),
                },
            ),
            output_schema=obj({}),
            handler=handler,
            risk=Risk.READ,
            toolsets=("test",),
        )
    )
    assert sorted(undescribed(tool.input_schema)) == ["nested.inner", "top"]
    assert tool.title == "Undescribed"


def test_closed_sets_are_enums() -> None:
    """States, session types, risk classes, hook events, sources and modes: a model picks
    from the schema rather than from prose."""
    closed = {
        ("compozy__session_list", "state"),
        ("compozy__session_create", "type"),
        ("compozy__tool_list", "risk"),
        ("compozy__hooks_list", "event"),
        ("compozy__hooks_list", "source"),
        ("compozy__hooks_create", "mode"),
        ("compozy__hooks_create", "on_error"),
        ("compozy__tool_artifact_read", "encoding"),
    }
    by_id = {tool.id: tool for tool in REGISTRY}
    for tool_id, name in closed:
        prop = by_id[tool_id].input_schema["properties"][name]
        assert prop.get("enum"), (tool_id, name)
    assert enum("a", "b")["enum"] == ["a", "b"]


def test_providers_and_models_are_listed_by_a_tool() -> None:
    """Providers are agent definitions, which agents.yaml may add to: not a closed set. The
    schema names the tool that lists them with their models and efforts."""
    by_id = {tool.id: tool for tool in REGISTRY}
    for tool_id in ("compozy__session_create", "compozy__session_runtime_set"):
        properties = by_id[tool_id].input_schema["properties"]
        assert "compozy__agent_list" in properties["provider"]["description"]
    assert "compozy__agent_list" in by_id
