"""Issue 23, item 3: hooks on every tool. ``tool.pre_call``, ``tool.post_call`` and
``tool.post_error`` fire for the tools of upstream MCP servers too, matched by the same globs
(``notes__*``): ``has_result_views`` is absent and ``result_view`` never inspected (the tool's own
``result_view`` input passes as sent), the input and the result are as the server takes and sends
them, a deny refuses the call, a ``tool_input`` patch is what the server gets."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from tests.conftest import Caller
from tests.hooks.support import Recorder, patch_answer, runs, webhook
from tests.proxy.support import tool_error
from tests.upstream.servers import notes
from tests.upstream.support import extension, raw_call, serving

from compozy_mcp.assembly import App

pytestmark = pytest.mark.anyio

LOOKUP = {"note": "plan", "result_view": "verbose"}
VERBOSE = {"note": "plan", "view": "verbose", "text": "the whole text of plan"}


async def test_pre_and_post_call_fire_with_the_input_and_result_as_the_server_has_them(
    app: App,
) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
        result = await raw_call(client, "notes__lookup", LOOKUP)
    assert result.structured_content == VERBOSE
    (pre,) = hook.of("pre_call")
    (post,) = hook.of("post_call")
    for event in (pre, post):
        assert event["tool_id"] == "notes__lookup"
        assert event["tool_input"] == LOOKUP  # its own result_view, not compozy's selector
        assert "has_result_views" not in event
        assert "result_view" not in event
        assert event["read_only"] is True  # the server's readOnlyHint
    assert pre["tool_call_id"] == post["tool_call_id"]
    sent = {key: post["tool_result"][key] for key in ("content", "structuredContent", "isError")}
    assert sent == {
        "content": [{"type": "text", "text": notes_json(VERBOSE)}],
        "structuredContent": VERBOSE,
        "isError": False,
    }


def notes_json(record: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(record).decode()


async def test_a_pre_call_deny_refuses_the_upstream_call(app: App) -> None:
    hook = Recorder(pre_call={"deny": True, "deny_reason": "no notes today"})
    app.dispatcher.add_hook(hook)
    async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
        error = tool_error(await raw_call(client, "notes__lookup", LOOKUP))
    assert (error["code"], error["reason"], error["tool_id"]) == (
        "tool_denied",
        "hook_denied",
        "notes__lookup",
    )
    assert "no notes today" in error["message"]
    assert hook.of("post_call") == []  # the server was never called


async def test_a_tool_input_patch_is_what_the_server_gets(app: App) -> None:
    hook = Recorder(pre_call={"tool_input": {"note": "other"}})
    app.dispatcher.add_hook(hook)
    async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
        result = await raw_call(client, "notes__lookup", LOOKUP)
    assert result.structured_content == {"note": "other", "view": "brief"}
    assert hook.of("post_call")[0]["tool_input"] == {"note": "other"}


async def test_a_post_call_tool_result_patch_replaces_the_servers_result(app: App) -> None:
    replaced = {"content": [{"type": "text", "text": "redacted"}], "isError": False}
    app.dispatcher.add_hook(Recorder(post_call={"tool_result": replaced}))
    async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
        result = await raw_call(client, "notes__lookup", LOOKUP)
    got = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert {key: got[key] for key in replaced} == replaced
    assert "structuredContent" not in got


async def test_an_error_result_is_a_post_call_and_a_jsonrpc_error_a_post_error(app: App) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
        failed = await raw_call(client, "notes__fail", {})
        with pytest.raises(MCPError) as rejected:
            await client.call_tool("notes__reject", {})
    assert failed.is_error is True
    (post,) = hook.of("post_call")
    assert post["tool_result"]["isError"] is True
    # the caller gets the server's JSON-RPC error as it sent it; the hook sees it too
    assert rejected.value.error.code == notes.REJECT_CODE
    (error,) = hook.of("post_error")
    assert error["tool_id"] == "notes__reject"
    assert error["error"] == {
        "code": notes.REJECT_CODE,
        "message": "rejected on purpose",
        "data": {"why": "a test"},
    }


async def test_hooks_match_upstream_tools_by_the_same_globs(app: App, call: Caller) -> None:
    with webhook() as server:
        server.respond = lambda path, payload: patch_answer({"tool_input": {"note": "glob"}})
        await call.structured(
            "compozy__hooks_create",
            {
                "id": "notes-audit",
                "event": "tool.pre_call",
                "url": server.url,
                "matcher": {"tool": "notes__*"},
            },
        )
        async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
            result = await raw_call(client, "notes__lookup", LOOKUP)
            await raw_call(client, "compozy__tool_list", {})
        assert result.structured_content == {"note": "glob", "view": "brief"}
        assert [payload["tool_id"] for _, payload, _ in server.received] == ["notes__lookup"]
    (run,) = await runs(app, hook_id="notes-audit")
    assert (run["tool_id"], run["outcome"], run["patch_applied"]) == ("notes__lookup", "ok", True)


async def test_a_title_patch_on_an_upstream_result_is_refused_and_recorded(
    app: App, call: Caller
) -> None:
    with webhook() as server:
        server.respond = lambda path, payload: patch_answer({"title": "Renamed"})
        await call.structured(
            "compozy__hooks_create",
            {"id": "titler", "event": "tool.post_call", "url": server.url},
        )
        async with serving(app, [extension()]) as proxy, Client(proxy.server) as client:
            result = await raw_call(client, "notes__lookup", LOOKUP)
    assert result.structured_content == VERBOSE  # the result stands
    (run,) = [r for r in await runs(app, hook_id="titler") if r["tool_id"] == "notes__lookup"]
    assert (run["outcome"], run["patch_applied"]) == ("patch_refused", False)
    assert "has no title a hook could set" in run["detail"]
