"""Issue 13, item 3, last sentence: the seam the runtime will call to fire tool hooks for a tool
call an ACP agent reports. An agent's tool has no views (no ``has_result_views``), no schema
to check a patch against, and the same identity rules."""

from __future__ import annotations

import pytest
from tests.conftest import Caller
from tests.hooks.support import Recorder

from compozy_mcp.assembly import App
from compozy_mcp.errors import HookDenied, ToolDenied
from compozy_mcp.hooks._agent import AgentToolCall, fire_agent_tool_hooks

pytestmark = pytest.mark.anyio


def _bash(session_id: str) -> AgentToolCall:
    return AgentToolCall(
        session_id=session_id,
        tool_call_id="toolu_01",
        tool_id="Bash",
        tool_input={"command": "make test"},
        turn_id="turn-3",
        title="Run make test",
    )


async def test_pre_call_hooks_see_the_agents_call_and_may_patch_its_input(
    app: App, call: Caller
) -> None:
    session = await call.create(session_id="sess-example")
    hook = Recorder(pre_call={"tool_input": {"command": "make test -k fast"}})
    app.dispatcher.add_hook(hook)
    patched = await fire_agent_tool_hooks(app.hooks, "tool.pre_call", _bash(session["id"]))
    assert patched.tool_input == {"command": "make test -k fast"}
    (payload,) = hook.events
    assert {k: payload[k] for k in ("event", "tool_id", "tool_call_id", "turn_id", "title")} == {
        "event": "tool.pre_call",
        "tool_id": "Bash",
        "tool_call_id": "toolu_01",
        "turn_id": "turn-3",
        "title": "Run make test",
    }
    assert "has_result_views" not in payload
    assert (payload["session_id"], payload["agent_name"]) == ("sess-example", "general")


async def test_an_agents_call_can_be_denied(app: App, call: Caller) -> None:
    session = await call.create()
    app.dispatcher.add_hook(Recorder(pre_call={"deny": True, "deny_reason": "no make today"}))
    with pytest.raises(HookDenied, match="no make today"):
        await fire_agent_tool_hooks(app.hooks, "tool.pre_call", _bash(session["id"]))


async def test_a_patch_changing_the_turn_is_scope_mismatch(app: App, call: Caller) -> None:
    session = await call.create()
    app.dispatcher.add_hook(Recorder(pre_call={"turn_id": "turn-9"}))
    with pytest.raises(ToolDenied) as caught:
        await fire_agent_tool_hooks(app.hooks, "tool.pre_call", _bash(session["id"]))
    assert caught.value.reason == "scope_mismatch"


async def test_post_call_hooks_may_replace_an_agents_title_and_result(
    app: App, call: Caller
) -> None:
    session = await call.create()
    app.dispatcher.add_hook(
        Recorder(post_call={"title": "Tests passed", "tool_result": {"exit_code": 0}})
    )
    done = _bash(session["id"])
    done.tool_result = {"exit_code": 0, "stdout": "..."}
    patched = await fire_agent_tool_hooks(app.hooks, "tool.post_call", done)
    assert (patched.title, patched.tool_result) == ("Tests passed", {"exit_code": 0})
