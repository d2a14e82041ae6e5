"""Spec, "The selector" and the first three rows of "Errors", through the dispatch path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.codes import Code
from compozy_mcp.config import Settings
from compozy_mcp.errors import ToolInvalidInput
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.store import SQLiteStore
from compozy_mcp.views import Fields, ResultView, ViewSpec, select_view

pytestmark = pytest.mark.anyio

UNKNOWN_VIEW = 'tool "compozy__session_status" input "result_view" must be one of "compact", "full"'
SINGLE_RESULT = (
    'tool "compozy__skill_view" returns a single result and does not accept "result_view"'
)

calls: list[dict[str, Any]] = []


async def _counting(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    calls.append(args)
    return {"id": "x", "detail": "full only"}


OUTPUT = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "detail": {"type": "string"}},
    "required": ["id", "detail"],
    "additionalProperties": False,
}
INPUT = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


def _tool(tool_id: str, *, views: bool, code: Code = Code.TOOL_INVALID_INPUT) -> ToolDefinition:
    return ToolDefinition(
        id=tool_id,
        description="Counts its calls.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_counting,
        risk=Risk.READ,
        toolsets=("test",),
        views=ViewSpec(Fields.of("id")) if views else None,
        input_error_code=code,
    )


@pytest.fixture
def counting_app(settings: Settings, clock: FixedClock) -> Iterator[App]:
    calls.clear()
    extra = [
        _tool("test__viewed", views=True),
        _tool("test__single", views=False),
        _tool("test__legacy_viewed", views=True, code=Code.INVALID_REQUEST),
        _tool("test__legacy_single", views=False, code=Code.INVALID_REQUEST),
    ]
    with open_app(settings, store=SQLiteStore.memory(), clock=clock, extra_tools=extra) as app:
        yield app


async def _error(app: App, tool_id: str, tool_input: Any) -> ToolInvalidInput:
    with pytest.raises(ToolInvalidInput) as caught:
        await app.dispatcher.call(tool_id, tool_input)
    return caught.value


@pytest.mark.parametrize("value", ["summary", "FULL", "", "compact "])
async def test_errors_row_unknown_result_view_value(app: App, value: str) -> None:
    error = await _error(app, "compozy__session_status", {"session_id": "s", "result_view": value})
    assert (error.code, error.reason, error.message) == (
        "tool_invalid_input",
        "schema_invalid",
        UNKNOWN_VIEW,
    )


@pytest.mark.parametrize("value", [1, True, None, ["full"], {"view": "full"}, 0.5])
async def test_errors_row_result_view_is_not_a_string(app: App, value: Any) -> None:
    error = await _error(app, "compozy__session_status", {"session_id": "s", "result_view": value})
    assert (error.code, error.reason, error.message) == (
        "tool_invalid_input",
        "schema_invalid",
        UNKNOWN_VIEW,
    )


@pytest.mark.parametrize("value", ["full", "compact", "nonsense", 3])
async def test_errors_row_result_view_sent_to_a_single_result_tool(app: App, value: Any) -> None:
    error = await _error(app, "compozy__skill_view", {"name": "x", "result_view": value})
    assert (error.code, error.reason, error.message) == (
        "tool_invalid_input",
        "schema_invalid",
        SINGLE_RESULT,
    )


async def test_single_result_message_names_the_real_tool(app: App) -> None:
    error = await _error(app, "compozy__tool_info", {"tool_id": "x", "result_view": "full"})
    assert error.message == (
        'tool "compozy__tool_info" returns a single result and does not accept "result_view"'
    )


async def test_selector_is_checked_before_the_rest_of_the_input(app: App) -> None:
    # session_id is missing and an unknown field is present: the selector error still wins.
    error = await _error(app, "compozy__session_status", {"bogus": 1, "result_view": "wide"})
    assert error.message == UNKNOWN_VIEW


@pytest.mark.parametrize(
    ("tool_id", "tool_input"),
    [
        ("test__viewed", {"n": 1, "result_view": "wide"}),
        ("test__viewed", {"n": 1, "result_view": 7}),
        ("test__single", {"n": 1, "result_view": "full"}),
        ("test__viewed", {"n": "one"}),
        ("test__viewed", {}),
        ("test__single", {"n": 1, "extra": True}),
    ],
)
async def test_in_every_error_case_the_tool_does_not_run(
    counting_app: App, tool_id: str, tool_input: dict[str, Any]
) -> None:
    await _error(counting_app, tool_id, tool_input)
    assert calls == []


async def test_result_view_is_optional_and_compact_by_default(counting_app: App) -> None:
    result = await counting_app.dispatcher.call("test__viewed", {"n": 1})
    assert result.view is ResultView.COMPACT
    assert result.structured == {"id": "x"}


async def test_full_returns_the_handler_record_unchanged(counting_app: App) -> None:
    result = await counting_app.dispatcher.call("test__viewed", {"n": 1, "result_view": "full"})
    assert result.structured == {"id": "x", "detail": "full only"}


async def test_the_handler_never_sees_the_selector(counting_app: App) -> None:
    await counting_app.dispatcher.call("test__viewed", {"n": 1, "result_view": "full"})
    await counting_app.dispatcher.call("test__viewed", {"n": 2, "result_view": "compact"})
    assert calls == [{"n": 1}, {"n": 2}]


@pytest.mark.parametrize(
    ("tool_id", "tool_input", "message"),
    [
        (
            "test__legacy_viewed",
            {"n": 1, "result_view": "x"},
            'tool "test__legacy_viewed" input "result_view" must be one of "compact", "full"',
        ),
        (
            "test__legacy_viewed",
            {"n": 1, "result_view": False},
            'tool "test__legacy_viewed" input "result_view" must be one of "compact", "full"',
        ),
        (
            "test__legacy_single",
            {"n": 1, "result_view": "full"},
            'tool "test__legacy_single" returns a single result and does not accept "result_view"',
        ),
    ],
)
async def test_tools_reporting_invalid_request_keep_that_code_for_the_first_three_rows(
    counting_app: App, tool_id: str, tool_input: dict[str, Any], message: str
) -> None:
    error = await _error(counting_app, tool_id, tool_input)
    assert (error.code, error.reason, error.message) == (
        "invalid_request",
        "schema_invalid",
        message,
    )
    assert calls == []


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        ({}, 'tool "compozy__session_status" input "session_id" is required'),
        ({"session_id": 5}, 'tool "compozy__session_status" input "session_id" must be a string'),
        (
            {"session_id": "s", "verbose": True},
            'tool "compozy__session_status" input "verbose" is not an input of this tool',
        ),
    ],
)
async def test_other_input_errors_share_the_code_and_name_the_field(
    app: App, tool_input: dict[str, Any], message: str
) -> None:
    error = await _error(app, "compozy__session_status", tool_input)
    assert (error.code, error.reason, error.message) == (
        "tool_invalid_input",
        "schema_invalid",
        message,
    )


async def test_input_that_is_not_an_object_is_refused(app: App) -> None:
    error = await _error(app, "compozy__session_status", ["session_id"])
    assert error.message == 'tool "compozy__session_status" input must be a JSON object'


def test_select_view_accepts_exactly_the_two_values() -> None:
    assert select_view("t", True, {"result_view": "full"}) is ResultView.FULL
    assert select_view("t", True, {"result_view": "compact"}) is ResultView.COMPACT
    assert select_view("t", True, {}) is ResultView.COMPACT
    assert select_view("t", False, {}) is None
