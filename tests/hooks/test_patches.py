"""Spec, "Hooks": a tool.pre_call hook patching ``tool_input`` with ``result_view: "full"``, and
the three consequences; upstream §6's patch rules (identity fields, the tool id, post_call's
title and result, post_error's message). Issue 13, item 3.

Hooks here are webhooks served by a thread (the run log records them) or in-process hooks."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import Answer, Recorder, Webhook, patch_answer, runs

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.errors import (
    HookDenied,
    ResultViewNotAccepted,
    ResultViewPinned,
    ToolDenied,
    ToolInvalidInput,
)

pytestmark = pytest.mark.anyio

STATUS = "compozy__session_status"
#: the spec's patch, literally
SPEC_PATCH = {"tool_input": {"session_id": "sess-example", "result_view": "full"}}


async def _hook(call: Caller, server: Webhook, hook_id: str, event: str, **extra: Any) -> None:
    await call(
        "compozy__hooks_create",
        {"id": hook_id, "event": event, "url": server.at(f"/{hook_id}"), **extra},
    )


async def test_consequence_1_a_pre_call_patch_to_full_gives_the_calling_agent_the_full_record(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-example")
    server.respond = lambda path, payload: patch_answer(SPEC_PATCH)
    await _hook(call, server, "full", "tool.pre_call", matcher={"tool": STATUS})
    result = await call(STATUS, {"session_id": "sess-example"})
    assert result.view == "full"
    assert {"supervision", "available_commands"} <= set(result.structured["session"])
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["patch_applied"]) == ("ok", "allow", True)
    assert run["patch"] == SPEC_PATCH


async def test_consequence_1_the_post_call_hook_then_sees_the_full_record_too(
    app: App, call: Caller
) -> None:
    await call.create(session_id="sess-example")
    hook = Recorder(pre_call=SPEC_PATCH)
    app.dispatcher.add_hook(hook)
    await call(STATUS, {"session_id": "sess-example"})
    (post,) = hook.of("post_call")
    assert post["result_view"] == "full"
    assert post["tool_input"] == SPEC_PATCH["tool_input"]
    assert "supervision" in post["tool_result"]["structured"]["session"]


async def test_consequence_2_without_views_the_patched_call_fails_with_the_single_result_error(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: patch_answer(
        {"tool_input": {**payload["tool_input"], "result_view": "full"}}
    )
    await _hook(call, server, "full", "tool.pre_call")
    with pytest.raises(ResultViewNotAccepted) as caught:
        await call("compozy__skill_view", {"name": "x"})
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        "tool_invalid_input",
        "schema_invalid",
        'tool "compozy__skill_view" returns a single result and does not accept "result_view"',
    )
    (payload,) = server.payloads("/full")
    assert "has_result_views" not in payload
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["patch_applied"]) == (
        "patch_refused",
        "deny",
        False,
    )
    assert run["detail"] == caught.value.message


async def test_consequence_3_a_patch_changing_a_pinned_view_fails_with_result_view_pinned(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-example")
    server.respond = lambda path, payload: patch_answer(
        {"tool_input": {"session_id": "sess-example", "result_view": "compact"}}
    )
    await _hook(call, server, "compact", "tool.pre_call")
    with pytest.raises(ResultViewPinned) as caught:
        await app.dispatcher.call(
            STATUS, {"session_id": "sess-example", "result_view": "full"}, pin_view=True
        )
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        "tool_denied",
        "result_view_pinned",
        'tool "compozy__session_status" result view is pinned to "full" by the caller',
    )
    (payload,) = server.payloads("/compact")
    assert payload["pinned_result_view"] == "full"
    (run,) = await runs(app)
    assert run["outcome"] == "patch_refused"


async def test_consequence_3_the_migration_recipe_skips_pinned_calls_and_they_run_as_pinned(
    app: App, call: Caller
) -> None:
    """The recipe of docs/hooks.md: ask for full unless the call carries pinned_result_view."""
    await call.create(session_id="sess-example")

    async def recipe(payload: dict[str, Any]) -> dict[str, Any] | None:
        if payload["event"] != "tool.pre_call" or not payload.get("has_result_views"):
            return None
        if "pinned_result_view" in payload:
            return None
        return {"tool_input": {**payload["tool_input"], "result_view": "full"}}

    app.dispatcher.add_hook(recipe)
    pinned = await app.dispatcher.call(STATUS, {"session_id": "sess-example"}, pin_view=True)
    assert pinned.view == "compact"
    unpinned = await call(STATUS, {"session_id": "sess-example"})
    assert unpinned.view == "full"
    # a single-result tool is left alone (has_result_views is absent)
    await call("compozy__tool_info", {"tool_id": STATUS})


async def test_a_patch_leaving_the_selector_out_of_a_pinned_call_keeps_the_pinned_view(
    app: App, call: Caller
) -> None:
    await call.create(session_id="sess-example")
    app.dispatcher.add_hook(Recorder(pre_call={"tool_input": {"session_id": "sess-example"}}))
    result = await app.dispatcher.call(
        STATUS, {"session_id": "sess-example", "result_view": "full"}, pin_view=True
    )
    assert result.view == "full"


async def test_a_patched_input_is_checked_again_against_the_schema(app: App, call: Caller) -> None:
    app.dispatcher.add_hook(Recorder(pre_call={"tool_input": {"session_id": 7}}))
    with pytest.raises(ToolInvalidInput, match='input "session_id" must be a string'):
        await call(STATUS, {"session_id": "sess-example"})


async def test_identity_fields_cannot_change_scope_mismatch(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-a")
    await call.create(session_id="sess-b")
    server.respond = lambda path, payload: patch_answer(
        {"session_id": "sess-b", "tool_input": payload["tool_input"]}
    )
    await _hook(call, server, "impostor", "tool.pre_call")
    with pytest.raises(ToolDenied) as caught:
        await call(STATUS, {"session_id": "sess-a"}, scope=scope_of("sess-a"))
    assert (caught.value.code, caught.value.reason) == ("tool_denied", "scope_mismatch")
    assert caught.value.message == (
        'tool "compozy__session_status" hook "impostor" changed "session_id"; a hook may not '
        "change who makes a call"
    )
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"]) == ("patch_refused", "deny")


@pytest.mark.parametrize(
    ("patch", "because"),
    [
        ({"tool_id": "compozy__session_stop"}, 'a hook may not change the tool id (to "compozy'),
        ({"read_only": False}, "a hook may not change the tool's risk (read_only)"),
    ],
)
async def test_the_tool_id_and_its_risk_cannot_change_hook_denied(
    app: App, call: Caller, patch: dict[str, Any], because: str
) -> None:
    await call.create(session_id="sess-example")
    app.dispatcher.add_hook(Recorder(pre_call=patch))
    with pytest.raises(HookDenied) as caught:
        await call(STATUS, {"session_id": "sess-example"})
    assert (caught.value.code, caught.value.reason) == ("tool_denied", "hook_denied")
    assert because in caught.value.message


async def test_a_hook_may_echo_the_payload_back_with_its_changes(app: App, call: Caller) -> None:
    await call.create(session_id="sess-example")

    async def echo(payload: dict[str, Any]) -> dict[str, Any] | None:
        if payload["event"] != "tool.pre_call":
            return None
        return {**payload, "tool_input": {**payload["tool_input"], "result_view": "full"}}

    app.dispatcher.add_hook(echo)
    result = await call(STATUS, {"session_id": "sess-example"})
    assert result.view == "full"


async def test_a_field_the_event_does_not_take_is_output_that_is_not_a_patch(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-example")
    # a common mistake: result_view at the top, not inside tool_input
    server.respond = lambda path, payload: patch_answer({"result_view": "full"})
    await _hook(call, server, "typo", "tool.pre_call")
    result = await call(STATUS, {"session_id": "sess-example"})
    assert result.view == "compact"
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"]) == ("invalid_output", "allow")
    assert run["detail"] == (
        'patch field "result_view" is not one tool.pre_call takes (deny, deny_reason, tool_input)'
    )


async def test_post_call_may_replace_the_title_and_the_result(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-example")
    server.respond = lambda path, payload: patch_answer(
        {
            "title": "Checked sess-example",
            "tool_result": {"structured": {"session": {"id": "sess-example"}}, "preview": "ok"},
        }
    )
    await _hook(call, server, "rewrite", "tool.post_call")
    result = await call(STATUS, {"session_id": "sess-example"})
    assert result.envelope() == {
        "structured": {"session": {"id": "sess-example"}},
        "preview": "ok",
        "title": "Checked sess-example",
    }
    assert result.structured_json == b'{"session":{"id":"sess-example"}}'
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["patch_applied"]) == ("ok", "none", True)


async def test_a_replaced_result_is_held_to_the_result_budget(app: App, call: Caller) -> None:
    budget = app.settings.max_result_bytes
    big = {"tool_result": {"structured": {"blob": "x" * (budget + 10)}}}
    app.dispatcher.add_hook(Recorder(post_call=big))
    result = await call("compozy__session_create", {"agent_name": "general"})
    assert result.truncated
    assert result.structured["read_tool"] == "compozy__tool_artifact_read"


async def test_a_post_call_deny_stops_later_hooks_and_the_result_stands(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: (
        patch_answer({"deny": True, "deny_reason": "enough"})
        if path == "/stopper"
        else patch_answer({"title": "never"})
    )
    await _hook(call, server, "stopper", "tool.post_call")
    await _hook(call, server, "second", "tool.post_call")
    result = await call("compozy__session_create", {"agent_name": "general"})
    assert result.structured["session"]["id"]
    assert result.title is None
    assert [path for path, _, _ in server.received] == ["/stopper"]
    (run,) = await runs(app)
    assert (run["hook_id"], run["outcome"], run["decision"]) == ("stopper", "denied", "deny")
    assert run["detail"] == "denied: enough"


async def test_post_error_may_replace_the_message_keeping_code_and_reason(
    app: App, call: Caller
) -> None:
    app.dispatcher.add_hook(Recorder(post_error={"error": "no such session; list them first"}))
    with pytest.raises(ToolInvalidInput) as caught:
        await call(STATUS, {"session_id": 7})
    assert caught.value.message != "no such session; list them first"  # pre-dispatch errors
    from compozy_mcp.errors import ResourceNotFound

    with pytest.raises(ResourceNotFound) as missing:
        await call(STATUS, {"session_id": "sess-missing"})
    assert missing.value.message == "no such session; list them first"
    assert (missing.value.code, missing.value.reason) == ("not_found", "session_not_found")


async def test_pre_call_hooks_chain_each_sees_the_input_the_last_one_left(
    app: App, call: Caller
) -> None:
    await call.create(session_id="sess-example")
    first = Recorder(pre_call=SPEC_PATCH)
    second = Recorder()
    app.dispatcher.add_hook(first)
    app.dispatcher.add_hook(second)
    await call(STATUS, {"session_id": "sess-example"})
    assert first.of("pre_call")[0]["tool_input"] == {"session_id": "sess-example"}
    assert second.of("pre_call")[0]["tool_input"] == SPEC_PATCH["tool_input"]


async def test_empty_output_and_null_fields_are_no_patch(
    app: App, call: Caller, server: Webhook
) -> None:
    await call.create(session_id="sess-example")
    answers = iter([Answer(body=b""), Answer(body=b"  \n"), patch_answer({"tool_input": None})])
    server.respond = lambda path, payload: next(answers)
    await _hook(call, server, "quiet", "tool.pre_call")
    for _ in range(3):
        result = await call(STATUS, {"session_id": "sess-example"})
        assert result.view == "compact"
    assert [(r["outcome"], r["patch_applied"]) for r in await runs(app)] == [("ok", False)] * 3
