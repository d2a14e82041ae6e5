"""Spec, "Hooks": the payloads. tool.post_call says which view the result holds;
``has_result_views`` is on the tool reference of all three events; ``tool_result`` is the
envelope with the record under ``structured``; upstream §6 adds the session context and a
timestamp. Issue 13, item 2."""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import SPEC_POST_CALL, Recorder, as_in_the_spec, patch_answer, webhook

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.errors import ResourceNotFound

pytestmark = pytest.mark.anyio

#: the spec's example, literally (the call id is the dispatcher's, so it is checked by shape)
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


async def test_the_post_call_payload_is_the_spec_example(app: App, call: Caller) -> None:
    await call.create(session_id="sess-example")
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__session_status", {"session_id": "sess-example"})
    (post,) = hook.of("post_call")
    assert as_in_the_spec(post) == SPEC_POST_CALL
    assert re.fullmatch(r"call-[0-9a-f]{12}", post["tool_call_id"])
    # the record under "structured" is the compact record the caller got, whole
    assert "supervision" not in post["tool_result"]["structured"]["session"]
    # the payload begins with the spec's fields, in the spec's order
    assert list(post)[: len(SPEC_POST_CALL)] == list(SPEC_POST_CALL)
    assert TIMESTAMP.match(post["timestamp"])


async def test_has_result_views_is_on_the_tool_reference_of_all_three_events(
    app: App, call: Caller
) -> None:
    await call.create(session_id="sess-example")
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__session_status", {"session_id": "sess-example"})
    with pytest.raises(ResourceNotFound):
        await call("compozy__session_status", {"session_id": "sess-missing"})
    assert [e["event"] for e in hook.events] == [
        "tool.pre_call",
        "tool.post_call",
        "tool.pre_call",
        "tool.post_error",
    ]
    assert all(e["has_result_views"] is True for e in hook.events)
    # result_view is on post_call only
    assert ["result_view" in e for e in hook.events] == [False, True, False, False]
    error = hook.of("post_error")[0]["error"]
    assert (error["code"], error["reason"]) == ("not_found", "session_not_found")


async def test_a_single_result_tool_has_neither_has_result_views_nor_result_view(
    app: App, call: Caller
) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__tool_info", {"tool_id": "compozy__session_status"})
    with pytest.raises(ResourceNotFound):
        await call("compozy__tool_info", {"tool_id": "compozy__nope"})
    assert len(hook.events) == 4
    assert all("has_result_views" not in e and "result_view" not in e for e in hook.events)
    assert all(e["read_only"] is True for e in hook.events)


async def test_post_call_result_view_names_the_view_the_call_selected(
    app: App, call: Caller
) -> None:
    await call.create(session_id="sess-example")
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__session_status", {"session_id": "sess-example", "result_view": "full"})
    (post,) = hook.of("post_call")
    assert post["result_view"] == "full"
    assert "supervision" in post["tool_result"]["structured"]["session"]


async def test_a_managed_sessions_call_carries_its_session_context(
    app: App, call: Caller, workspace: Any
) -> None:
    parent = await call.create(session_id="sess-parent", name="Fix flaky upload test")
    spawned = await call.structured(
        "compozy__session_spawn",
        {"agent_name": "worker", "ttl_seconds": 600},
        scope=scope_of(parent["id"]),
    )
    child = spawned["session_id"]
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call("compozy__session_status", {"session_id": child}, scope=scope_of(child))
    pre = hook.of("pre_call")[0]
    context = {k: v for k, v in pre.items() if k not in ("tool_input", "timestamp")}
    record = await call.full(child)
    assert context == {
        "event": "tool.pre_call",
        "tool_id": "compozy__session_status",
        "tool_call_id": pre["tool_call_id"],
        "has_result_views": True,
        "read_only": True,
        "session_id": child,
        "session_type": "subagent",
        "agent_name": "worker",
        "workspace_id": "ws_default",
        "workspace": str(workspace.resolve()),
        "state": "active",
        "parent_session_id": "sess-parent",
        "created_at": record["created_at"],
        "updated_at": record["updated_at"],
    }
    await call(
        "compozy__session_status", {"session_id": "sess-parent"}, scope=scope_of("sess-parent")
    )
    assert hook.events[-1]["session_name"] == "Fix flaky upload test"
    assert "parent_session_id" not in hook.events[-1]


async def test_an_operator_call_has_no_session_context(app: App, call: Caller) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call.create()
    assert not {"session_id", "agent_name", "workspace_id"} & set(hook.events[0])


async def test_pre_call_and_post_call_of_one_call_share_its_tool_call_id(
    app: App, call: Caller
) -> None:
    hook = Recorder()
    app.dispatcher.add_hook(hook)
    await call.create()
    await call.create()
    ids = [e["tool_call_id"] for e in hook.events]
    assert ids[0] == ids[1] != ids[2] == ids[3]


async def test_a_webhook_receives_the_payload_as_a_json_post(app: App, call: Caller) -> None:
    await call.create(session_id="sess-example")
    with webhook() as server:
        server.respond = lambda path, payload: patch_answer({})
        await call(
            "compozy__hooks_create",
            {
                "id": "observer",
                "event": "tool.post_call",
                "url": server.at("/post"),
                "headers": {"X-Token": "t0ken"},
            },
        )
        await call("compozy__session_status", {"session_id": "sess-example"})
        ((path, payload, headers),) = server.received
    assert path == "/post"
    assert as_in_the_spec(payload) == SPEC_POST_CALL
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Token"] == "t0ken"
