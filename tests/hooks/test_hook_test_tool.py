"""Issue 13, item 5: ``compozy__hooks_test`` (``compozy hooks test``) runs one hook once on a
payload (given, or a sample built for a named tool) and shows the decision, the patch, the
re-validated input and stderr, without calling any tool or recording a run."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import Answer, Webhook, patch_answer, runs

from compozy_mcp.assembly import App
from compozy_mcp.errors import ToolInvalidInput

pytestmark = pytest.mark.anyio

TEST = "compozy__hooks_test"


async def _hook(call: Caller, server: Webhook, **extra: Any) -> None:
    await call(
        "compozy__hooks_create",
        {"id": "full", "event": "tool.pre_call", "url": server.url, **extra},
    )


def _ask_for_full(path: str, payload: dict[str, Any]) -> Answer:
    return patch_answer({"tool_input": {**payload["tool_input"], "result_view": "full"}})


async def test_a_sample_for_a_tool_with_views_shows_the_patch_and_the_checked_input(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = _ask_for_full
    await _hook(call, server, matcher={"tool": "compozy__session_status"})
    result = await call.structured(TEST, {"hook_id": "full"})
    assert result["payload"]["tool_id"] == "compozy__session_status"
    assert result["payload"]["tool_input"] == {"session_id": "sess-example"}
    assert result["payload"]["has_result_views"] is True
    assert {
        k: result[k] for k in ("outcome", "decision", "patch", "tool_input", "result_view")
    } == {
        "outcome": "ok",
        "decision": "allow",
        "patch": {"tool_input": {"session_id": "sess-example", "result_view": "full"}},
        "tool_input": {"session_id": "sess-example", "result_view": "full"},
        "result_view": "full",
    }
    # no tool ran: there is no session sess-example; and no run was recorded
    assert await runs(app) == []


async def test_the_same_hook_on_a_single_result_tool_shows_the_error_the_call_would_end_in(
    call: Caller, server: Webhook
) -> None:
    server.respond = _ask_for_full
    await _hook(call, server)
    result = await call.structured(TEST, {"hook_id": "full", "tool_id": "compozy__skill_view"})
    assert "has_result_views" not in result["payload"]
    assert (result["outcome"], result["decision"]) == ("patch_refused", "deny")
    assert result["error"] == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": 'tool "compozy__skill_view" returns a single result and does not accept '
        '"result_view"',
        "tool_id": "compozy__skill_view",
    }


async def test_a_given_payload_is_sent_as_it_is_and_a_pinned_view_is_checked(
    call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: patch_answer(
        {"tool_input": {"session_id": "s", "result_view": "compact"}}
    )
    await _hook(call, server)
    payload = {
        "event": "tool.pre_call",
        "tool_id": "compozy__session_status",
        "tool_call_id": "call-31",
        "has_result_views": True,
        "pinned_result_view": "full",
        "tool_input": {"session_id": "s", "result_view": "full"},
    }
    result = await call.structured(TEST, {"hook_id": "full", "payload": payload})
    assert server.payloads("/") == [payload]
    assert result["error"]["reason"] == "result_view_pinned"
    assert result["error"]["message"] == (
        'tool "compozy__session_status" result view is pinned to "full" by the caller'
    )


async def test_a_deny_and_a_failure_show_their_reasons(call: Caller, server: Webhook) -> None:
    server.respond = lambda path, payload: patch_answer({"deny": True, "deny_reason": "frozen"})
    await _hook(call, server, matcher={"tool": "compozy__session_stop"}, on_error="deny")
    denied = await call.structured(TEST, {"hook_id": "full"})
    assert (denied["outcome"], denied["decision"], denied["error"]["reason"]) == (
        "denied",
        "deny",
        "hook_denied",
    )
    server.respond = lambda path, payload: Answer(body=b"<html>oops</html>")
    failed = await call.structured(TEST, {"hook_id": "full"})
    assert (failed["outcome"], failed["decision"], failed["error"]["reason"]) == (
        "invalid_output",
        "deny",
        "hook_failed",
    )
    assert failed["detail"] == "printed output that is not JSON: '<html>oops</html>'"


async def test_post_call_and_post_error_samples(call: Caller, server: Webhook) -> None:
    server.respond = lambda path, payload: patch_answer({"title": "t"})
    await _hook(call, server, event="tool.post_call")
    post = await call.structured(TEST, {"hook_id": "full", "tool_id": "compozy__session_status"})
    assert post["payload"]["result_view"] == "compact"
    assert post["payload"]["tool_result"] == {"structured": {}, "preview": "(a sample result)"}
    assert (post["outcome"], post["decision"], post["patch"]) == ("ok", "none", {"title": "t"})
    error = await call.structured(
        TEST, {"hook_id": "full", "tool_id": "compozy__session_status", "event": "tool.post_error"}
    )
    assert error["payload"]["error"]["reason"] == "handler_failed"
    assert error["outcome"] == "invalid_output"  # a title is not a post_error patch


async def test_a_sample_takes_a_real_sessions_context(call: Caller, server: Webhook) -> None:
    server.respond = lambda path, payload: patch_answer({})
    await _hook(call, server)
    session = await call.create(name="Fix it")
    result = await call.structured(
        TEST,
        {
            "hook_id": "full",
            "tool_id": "compozy__session_status",
            "tool_input": {"session_id": session["id"]},
            "session_id": session["id"],
        },
    )
    assert result["payload"]["session_name"] == "Fix it"
    assert result["payload"]["agent_name"] == "general"


async def test_a_hook_matching_many_tools_needs_a_tool_for_its_sample(
    call: Caller, server: Webhook
) -> None:
    await _hook(call, server, matcher={"tool": "compozy__session_*"})
    with pytest.raises(ToolInvalidInput) as caught:
        await call(TEST, {"hook_id": "full"})
    assert 'matches the tools "compozy__session_*"' in caught.value.message
