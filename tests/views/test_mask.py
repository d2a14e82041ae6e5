"""Projection and the compact schema, both derived from one mask; the subset rule."""

from __future__ import annotations

from typing import Any

import pytest

from compozy_mcp.errors import ToolRegistrationError
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition, register
from compozy_mcp.views import KEEP, Each, Fields, ListRule, ViewSpec, compile_views, project
from compozy_mcp.views.mask import MovedField, derive_schema, moved_to_full

FULL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "item": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "state": {"type": "string"},
                "policy": {"type": "object", "properties": {"tools": {"type": "array"}}},
                "optional": {"type": "string"},
                "nullable": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}},
            },
            "required": ["id", "state", "policy"],
            "additionalProperties": True,
        },
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "diag": {"type": "object"}},
                "required": ["name", "diag"],
            },
        },
    },
    "required": ["item", "rows"],
    "additionalProperties": False,
}
CLEAN = ListRule(lambda rows: all(r["diag"] == {} for r in rows), "when every diag is empty")
MASK = Fields(
    {
        "item": Fields.of("id", "state", "optional", "nullable"),
        "rows": Each(Fields.of("name", "diag"), drop_when={"diag": CLEAN}),
    }
)


def _record(**item: Any) -> dict[str, Any]:
    base = {"id": "a", "state": "on", "policy": {"tools": ["*"]}, "extra": 1}
    return {"item": {**base, **item}, "rows": [{"name": "r", "diag": {"w": 1}}]}


def test_compact_keeps_the_masked_fields_in_record_order() -> None:
    record = _record()
    assert project(record, MASK) == {
        "item": {"id": "a", "state": "on"},
        "rows": [{"name": "r", "diag": {"w": 1}}],
    }


def test_projection_never_copies_kept_values_nor_mutates_the_record() -> None:
    record = _record(nullable={"a": "x"})
    before = repr(record)
    compact = project(record, Fields({"item": Fields.of("nullable"), "rows": KEEP}))
    assert compact["item"]["nullable"] is record["item"]["nullable"]
    assert compact["rows"] is record["rows"]
    assert repr(record) == before


def test_optional_fields_appear_only_when_set() -> None:
    assert "optional" not in project(_record(), MASK)["item"]
    assert project(_record(optional="o"), MASK)["item"]["optional"] == "o"


def test_null_values_are_kept_as_null_under_a_nested_mask() -> None:
    mask = Fields({"item": Fields({"nullable": Fields.of("a")})})
    assert project(_record(nullable=None), mask) == {"item": {"nullable": None}}


def test_list_rule_drops_a_field_from_every_item_only_when_it_holds_over_the_whole_list() -> None:
    clean = {
        "item": _record()["item"],
        "rows": [{"name": "a", "diag": {}}, {"name": "b", "diag": {}}],
    }
    assert project(clean, MASK)["rows"] == [{"name": "a"}, {"name": "b"}]
    mixed = {
        "item": clean["item"],
        "rows": [{"name": "a", "diag": {}}, {"name": "b", "diag": {"x": 1}}],
    }
    assert project(mixed, MASK)["rows"] == mixed["rows"]


def test_compact_schema_is_derived_from_the_full_schema_by_the_same_mask() -> None:
    schema = derive_schema("t__x", FULL_SCHEMA, MASK)
    item = schema["properties"]["item"]
    assert list(item["properties"]) == ["id", "state", "optional", "nullable"]
    assert item["required"] == ["id", "state"]
    assert item["additionalProperties"] is False
    # kept sub-schemas are the full schema's own objects
    assert item["properties"]["id"] is FULL_SCHEMA["properties"]["item"]["properties"]["id"]
    # a conditionally dropped field is not required in compact
    assert schema["properties"]["rows"]["items"]["required"] == ["name"]


def test_moved_to_full_lists_what_compact_leaves_out() -> None:
    assert moved_to_full(FULL_SCHEMA, MASK) == [
        MovedField("item.policy"),
        MovedField("item.*"),
        MovedField("rows[].*"),
        MovedField("rows[].diag", "omitted when every diag is empty"),
    ]


@pytest.mark.parametrize(
    ("mask", "reason"),
    [
        (Fields({"item": Fields.of("id", "secret")}), "view_field_unknown"),
        (Fields({"missing": KEEP}), "view_field_unknown"),
        (Fields({"item": Fields({"id": Fields.of("x")})}), "view_not_object"),
        (Fields({"item": Each(KEEP)}), "view_not_array"),
        (
            Fields({"rows": Each(Fields.of("name"), drop_when={"nope": CLEAN})}),
            "view_field_unknown",
        ),
    ],
)
def test_a_view_that_breaks_the_subset_rule_fails_registration(mask: Fields, reason: str) -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        compile_views("t__x", ViewSpec(mask), FULL_SCHEMA)
    assert caught.value.reason == reason


def test_a_view_that_drops_a_follow_up_field_fails_registration() -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        compile_views("t__x", ViewSpec(MASK, follow_up=("item.policy",)), FULL_SCHEMA)
    assert caught.value.reason == "view_follow_up_dropped"
    with pytest.raises(ToolRegistrationError) as caught:
        compile_views("t__x", ViewSpec(MASK, follow_up=("item.nope",)), FULL_SCHEMA)
    assert caught.value.reason == "view_follow_up_unknown"


def test_follow_up_fields_kept_by_the_mask_register() -> None:
    views = compile_views("t__x", ViewSpec(MASK, follow_up=("item.id", "rows[].name")), FULL_SCHEMA)
    assert views.compact.digest != views.full.digest


async def _noop(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return {}


def _definition(**overrides: Any) -> ToolDefinition:
    fields: dict[str, Any] = {
        "id": "test__tool",
        "description": "A test tool.",
        "input_schema": {"type": "object", "properties": {}},
        "output_schema": FULL_SCHEMA,
        "handler": _noop,
        "risk": Risk.READ,
        "toolsets": ("test",),
        "views": ViewSpec(MASK),
    }
    fields.update(overrides)
    return ToolDefinition(**fields)


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"views": ViewSpec(Fields.of("nope"))}, "view_field_unknown"),
        (
            {"input_schema": {"type": "object", "properties": {"result_view": {"type": "string"}}}},
            "selector_reserved",
        ),
        ({"input_schema": {"type": "array"}}, "schema_invalid"),
        ({"output_schema": {"type": "array"}}, "schema_invalid"),
        ({"id": "NoNamespace"}, "tool_id_invalid"),
        ({"input_error_code": "weird"}, "registration_invalid"),
        ({"scope_session_field": "parent"}, "registration_invalid"),
    ],
)
def test_a_tool_that_breaks_the_rules_does_not_load(overrides: dict[str, Any], reason: str) -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        register(_definition(**overrides))
    assert caught.value.reason == reason


def test_tools_with_views_publish_the_selector_and_the_compact_contract() -> None:
    tool = register(_definition())
    assert tool.input_schema["properties"]["result_view"]["enum"] == ["compact", "full"]
    assert tool.output_schema is tool.views.compact.schema if tool.views else False
    assert tool.description.endswith('pass result_view "full" for the complete record.')


def test_single_result_tools_do_not_list_the_selector() -> None:
    tool = register(_definition(views=None))
    assert "result_view" not in tool.input_schema["properties"]
    assert tool.output_schema is FULL_SCHEMA


def test_an_omit_empty_object_is_left_out_when_it_keeps_none_of_its_keys() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"type": "string"},
            "payload": {
                "type": "object",
                "properties": {"status": {"type": "string"}},
                "additionalProperties": True,
            },
        },
        "required": ["kind", "payload"],
        "additionalProperties": False,
    }
    mask = Fields({"kind": KEEP, "payload": Fields(Fields.of("status").fields, omit_empty=True)})
    assert project({"kind": "chunk", "payload": {"text": "hi"}}, mask) == {"kind": "chunk"}
    ended = {"kind": "end", "payload": {"status": "failed", "text": "x"}}
    assert project(ended, mask) == {"kind": "end", "payload": {"status": "failed"}}
    compact = derive_schema("t", schema, mask)
    assert compact["required"] == ["kind"]  # the payload may be left out
    assert compact["properties"]["payload"]["additionalProperties"] is False
