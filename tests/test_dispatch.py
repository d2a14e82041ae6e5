"""The one dispatch path: permissions, hooks (spec "Hooks"), the result budget and artifacts."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp import jsonutil
from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.errors import (
    ResourceNotFound,
    ResultViewNotAccepted,
    ResultViewPinned,
    ToolBackendFailed,
    ToolDenied,
    ToolInvalidInput,
    ToolNotFound,
)
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.registry import Risk, ToolDefinition
from compozy_mcp.store import SQLiteStore
from compozy_mcp.views import Fields, ViewSpec

pytestmark = pytest.mark.anyio

BUDGET = 4096


async def _big(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    rows = [{"id": f"row-{i}", "text": "é" * args["size"]} for i in range(args["rows"])]
    return {"rows": rows, "detail": "x" * 100}


async def _broken(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    raise ValueError("the disk is on fire")


BIG = ToolDefinition(
    id="test__big",
    description="Returns as much as asked.",
    input_schema={
        "type": "object",
        "properties": {"rows": {"type": "integer"}, "size": {"type": "integer"}},
    },
    output_schema={
        "type": "object",
        "properties": {"rows": {"type": "array"}, "detail": {"type": "string"}},
    },
    handler=_big,
    risk=Risk.READ,
    toolsets=("test",),
    views=ViewSpec(Fields.of("rows")),
)
BROKEN = ToolDefinition(
    id="test__broken",
    description="Always fails.",
    input_schema={"type": "object", "properties": {}},
    output_schema={"type": "object"},
    handler=_broken,
    risk=Risk.READ,
    toolsets=("test",),
)


@pytest.fixture
def small_app(settings: Settings, clock: FixedClock) -> Iterator[App]:
    with open_app(
        settings.with_budget(BUDGET),
        store=SQLiteStore.memory(),
        clock=clock,
        extra_tools=[BIG, BROKEN],
    ) as app:
        yield app


async def _read_all(app: App, uri: str, limit: int, encoding: str = "base64") -> bytes:
    data, offset, pages = b"", 0, 0
    while True:
        page = (
            await app.dispatcher.call(
                "compozy__tool_artifact_read",
                {
                    "artifact_uri": uri,
                    "offset": offset,
                    "limit": limit,
                    "encoding": encoding,
                },
            )
        ).structured
        chunk = (
            page["data"].encode() if encoding == "text" else base64.b64decode(page["data_base64"])
        )
        assert (page["offset"], page["bytes"]) == (offset, len(chunk))
        data += chunk
        pages += 1
        if page["eof"]:
            assert page["next_offset"] is None
            return data
        offset = page["next_offset"]
        assert pages < 10_000


async def test_a_result_within_budget_is_returned_whole(small_app: App) -> None:
    result = await small_app.dispatcher.call("test__big", {"rows": 2, "size": 3})
    assert not result.truncated
    assert result.structured_json == jsonutil.dumps(result.structured)
    assert result.envelope() == {"structured": result.structured, "preview": result.preview}


@pytest.mark.parametrize("encoding", ["base64", "text"])
async def test_an_oversized_result_becomes_an_artifact_and_nothing_is_lost(
    small_app: App, encoding: str
) -> None:
    result = await small_app.dispatcher.call(
        "test__big", {"rows": 40, "size": 50, "result_view": "full"}
    )
    assert result.truncated
    structured = result.structured
    assert structured["truncated"] is True
    assert structured["bytes"] > BUDGET == structured["budget_bytes"]
    assert structured["read_tool"] == "compozy__tool_artifact_read"
    uri = structured["artifacts"][0]["uri"]
    assert structured["read_input"] == {"artifact_uri": uri, "offset": 0, "limit": 65536}
    assert "compozy__tool_artifact_read" in result.preview
    assert result.envelope()["artifacts"] == structured["artifacts"]
    # pages of an awkward size split multi-byte characters; joined, they are the record
    data = await _read_all(small_app, uri, limit=1001, encoding=encoding)
    assert jsonutil.loads(data) == await _untruncated(small_app, rows=40, size=50)


async def _untruncated(app: App, **args: Any) -> Any:
    with open_app(
        app.settings.with_budget(16 * 1024 * 1024), store=SQLiteStore.memory(), extra_tools=[BIG]
    ) as roomy:
        return (
            await roomy.dispatcher.call("test__big", {**args, "result_view": "full"})
        ).structured


async def test_truncation_applies_to_the_selected_view(small_app: App) -> None:
    compact = await small_app.dispatcher.call("test__big", {"rows": 40, "size": 50})
    assert compact.structured["result_view"] == "compact"
    data = await _read_all(small_app, compact.structured["artifacts"][0]["uri"], limit=65536)
    assert "detail" not in jsonutil.loads(data)


async def test_the_artifact_reader_is_never_truncated_itself(small_app: App) -> None:
    big = await small_app.dispatcher.call("test__big", {"rows": 40, "size": 200})
    page = await small_app.dispatcher.call(
        "compozy__tool_artifact_read", {"artifact_uri": big.structured["artifacts"][0]["uri"]}
    )
    assert not page.truncated
    assert page.structured["bytes"] > BUDGET


async def test_an_unknown_artifact_is_not_found(small_app: App) -> None:
    with pytest.raises(ResourceNotFound):
        await small_app.dispatcher.call(
            "compozy__tool_artifact_read",
            {"artifact_uri": "compozy://tool-artifacts/art_" + "0" * 64},
        )
    with pytest.raises(ToolInvalidInput, match='input "artifact_uri" must match'):
        await small_app.dispatcher.call(
            "compozy__tool_artifact_read", {"artifact_uri": "/etc/passwd"}
        )


async def test_an_unknown_tool_is_tool_not_found(app: App) -> None:
    with pytest.raises(ToolNotFound) as caught:
        await app.dispatcher.call("compozy__nope", {})
    assert (caught.value.code, caught.value.reason) == ("tool_not_found", "tool_unknown")


async def test_a_failing_handler_becomes_a_typed_backend_error_that_hides_its_text(
    small_app: App, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ToolBackendFailed) as caught:
        await small_app.dispatcher.call("test__broken", {})
    error_id = caught.value.details["error_id"]
    assert caught.value.message == (
        'tool "test__broken" failed unexpectedly; the server log has the details '
        f"(error id {error_id})"
    )
    # the caller never sees the exception's class or text; the log has both, under the id
    assert "ValueError" not in caught.value.message
    assert "disk is on fire" not in str(caught.value.payload(redact=False))
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged
    assert "the disk is on fire" in str(logged[0].exc_info)


async def test_a_session_may_call_only_what_its_policy_allows(call: Caller) -> None:
    root = (await call.create())["id"]
    child = (
        await call.structured(
            "compozy__session_spawn",
            {
                "parent_session_id": root,
                "agent_name": "g",
                "ttl_seconds": 60,
                "tools": ["compozy__session_status", "compozy__tool_*"],
            },
        )
    )["session_id"]
    scope = CallScope(session_id=child)
    await call("compozy__session_status", {"session_id": child}, scope=scope)
    await call("compozy__tool_list", {}, scope=scope)
    with pytest.raises(ToolDenied) as caught:
        await call("compozy__session_stop", {"session_id": child}, scope=scope)
    assert caught.value.reason == "permission_denied"
    listed = await call.structured("compozy__tool_list", {}, scope=scope)
    assert "compozy__session_stop" not in [t["id"] for t in listed["tools"]]
    with pytest.raises(ResourceNotFound):
        await call("compozy__tool_info", {"tool_id": "compozy__session_stop"}, scope=scope)
    with pytest.raises(ToolDenied) as caught:
        await call("compozy__tool_list", {}, scope=CallScope(session_id="sess-ghost"))
    assert caught.value.reason == "scope_session_unknown"


# --- hooks ------------------------------------------------------------------------------


class Recorder:
    def __init__(self, patch: dict[str, Any] | None = None, *, only: str = "tool.pre_call") -> None:
        self.events: list[dict[str, Any]] = []
        self.patch = patch
        self.only = only

    async def __call__(self, event: dict[str, Any]) -> dict[str, Any] | None:
        self.events.append(event)
        return self.patch if event["event"] == self.only else None


async def test_post_call_says_which_view_the_result_holds(app: App, call: Caller) -> None:
    sid = (await call.create(session_id="sess-example"))["id"]
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__session_status", {"session_id": sid})
    post = hook.events[-1]
    assert post["event"] == "tool.post_call"
    assert post["tool_id"] == "compozy__session_status"
    assert post["tool_call_id"].startswith("call-")
    assert post["has_result_views"] is True
    assert post["tool_input"] == {"session_id": "sess-example"}
    assert post["result_view"] == "compact"
    assert post["tool_result"]["structured"]["session"]["id"] == "sess-example"
    assert post["tool_result"]["preview"].startswith("sess-example")
    assert hook.events[0]["event"] == "tool.pre_call"
    assert hook.events[0]["has_result_views"] is True


async def test_a_tool_without_views_has_no_result_view_in_its_events(
    app: App, call: Caller
) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__tool_info", {"tool_id": "compozy__session_status"})
    assert all("has_result_views" not in e and "result_view" not in e for e in hook.events)


async def test_a_pre_call_patch_to_full_gives_the_agent_the_full_record_too(
    app: App, call: Caller
) -> None:
    sid = (await call.create())["id"]
    app.dispatcher.add_hook(Recorder({"tool_input": {"session_id": sid, "result_view": "full"}}))
    result = await call("compozy__session_status", {"session_id": sid})
    assert "supervision" in result.structured["session"]


async def test_a_patch_adding_the_selector_to_a_single_result_tool_fails(
    app: App, call: Caller
) -> None:
    app.dispatcher.add_hook(Recorder({"tool_input": {"name": "x", "result_view": "full"}}))
    with pytest.raises(ResultViewNotAccepted):
        await call("compozy__skill_view", {"name": "x"})


async def test_a_hook_changing_a_pinned_view_fails_with_result_view_pinned(
    app: App, call: Caller
) -> None:
    sid = (await call.create())["id"]
    hook = Recorder({"tool_input": {"session_id": sid, "result_view": "compact"}})
    app.dispatcher.add_hook(hook)
    with pytest.raises(ResultViewPinned) as caught:
        await app.dispatcher.call(
            "compozy__session_status", {"session_id": sid, "result_view": "full"}, pin_view=True
        )
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        "tool_denied",
        "result_view_pinned",
        'tool "compozy__session_status" result view is pinned to "full" by the caller',
    )
    assert hook.events[0]["pinned_result_view"] == "full"


async def test_a_patch_keeping_the_pinned_view_passes(app: App, call: Caller) -> None:
    sid = (await call.create())["id"]
    app.dispatcher.add_hook(Recorder({"tool_input": {"session_id": sid, "result_view": "full"}}))
    result = await app.dispatcher.call(
        "compozy__session_status", {"session_id": sid, "result_view": "full"}, pin_view=True
    )
    assert "supervision" in result.structured["session"]


async def test_a_hook_can_deny_a_call(app: App, call: Caller) -> None:
    app.dispatcher.add_hook(Recorder({"deny": True, "deny_reason": "frozen"}))
    with pytest.raises(ToolDenied, match="frozen") as caught:
        await call.create()
    assert caught.value.reason == "hook_denied"


async def test_post_error_carries_the_typed_error(app: App, call: Caller) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    with pytest.raises(ResourceNotFound):
        await call("compozy__session_status", {"session_id": "sess-missing"})
    assert hook.events[-1]["event"] == "tool.post_error"
    assert hook.events[-1]["error"]["reason"] == "session_not_found"
