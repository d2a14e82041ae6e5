"""The fast input check never accepts what jsonschema refuses, over every native tool's schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.tiers import examples

from compozy_mcp.native import build_registry
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.validation import fast_checker

REGISTRY = build_registry()
#: inputs of these tools nest objects (a hook definition, a payload): jsonschema checks them
#: alone, which is fine off the hot path
NOT_FLAT = {
    "compozy__hooks_create",
    "compozy__hooks_update",
    "compozy__hooks_test",
    "compozy__tool_approvals_set",
    # a Loop document (text or object) and gate answers (a list of objects)
    "compozy__loop_validate",
    "compozy__loop_create",
    "compozy__loop_run",
    "compozy__loop_approve",
}
TOOLS = [tool for tool in REGISTRY if tool.id not in NOT_FLAT]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70_000),
    st.floats(allow_nan=False),
    st.sampled_from(["", " ", "compact", "full", "claude", "sess-1", "a" * 300, "\u00e9", "-x"]),
    st.text(max_size=8),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=3), SCALARS, max_size=2),
)


@st.composite
def inputs(draw: st.DrawFn, tool: RegisteredTool) -> Any:
    names = list(tool.input_schema["properties"])
    chosen = (
        draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True)) if names else []
    )
    value: dict[str, Any] = {name: draw(VALUES) for name in chosen}
    if draw(st.booleans()):
        value[draw(st.text(max_size=4))] = draw(VALUES)
    return value if draw(st.integers(0, 20)) else draw(VALUES)


def test_only_the_tools_with_nested_inputs_lack_a_fast_check() -> None:
    assert {tool.id for tool in REGISTRY if tool.input_check.fast is None} == NOT_FLAT


@pytest.mark.parametrize("tool", TOOLS, ids=[t.id for t in TOOLS])
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_the_fast_check_accepts_only_what_jsonschema_accepts(
    tool: RegisteredTool, data: st.DataObject
) -> None:
    check = tool.input_check
    assert check.fast is not None
    instance = data.draw(inputs(tool))
    if check.fast(instance):
        assert check.validator.is_valid(instance), instance


@pytest.mark.parametrize(
    ("tool_id", "tool_input"),
    [
        ("compozy__session_status", {"session_id": "s", "result_view": "full"}),
        ("compozy__session_create", {"agent_name": "general", "provider": "claude"}),
        ("compozy__session_spawn", {"agent_name": "g", "ttl_seconds": 60, "tools": ["a", "b"]}),
        (
            "compozy__tool_artifact_read",
            {"artifact_uri": "compozy://tool-artifacts/art_" + "0" * 64},
        ),
    ],
)
def test_the_fast_check_accepts_ordinary_valid_input(
    tool_id: str, tool_input: dict[str, Any]
) -> None:
    check = REGISTRY.get(tool_id).input_check.fast
    assert check is not None
    assert check(tool_input)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"agent_name": "g", "ttl_seconds": 60, "tools": ["a", "a"]},
        {"agent_name": "g", "ttl_seconds": 1.5},
        {"agent_name": "g", "ttl_seconds": True},
        {"agent_name": "g", "ttl_seconds": 0},
        {"agent_name": "g", "ttl_seconds": 60, "model": "m"},
        {"agent_name": "g"},
        {"agent_name": "g", "ttl_seconds": 60, "surprise": 1},
    ],
)
def test_the_fast_check_hands_doubtful_input_to_jsonschema(tool_input: dict[str, Any]) -> None:
    check = REGISTRY.get("compozy__session_spawn").input_check.fast
    assert check is not None
    assert not check(tool_input)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "object"}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
        {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 1]}}},
        {"type": "array"},
    ],
)
def test_schemas_outside_the_subset_get_no_fast_check(schema: dict[str, Any]) -> None:
    assert fast_checker(schema) is None
