"""Issue 13, item 1: hooks in ``$COMPOZY_HOME/hooks.yaml`` and a workspace's
``.compozy/hooks.yaml``, and their matchers (tool id glob, agent name, workspace, session type).
A broken file loads no hook and never fails a call: ``hooks_list`` reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import Webhook, write_hooks

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.errors import ToolConflict
from compozy_mcp.hooks._events import Caller as HookCaller
from compozy_mcp.hooks._model import Matcher

pytestmark = pytest.mark.anyio

STATUS = "compozy__session_status"


def _home_file(app: App) -> Path:
    return app.settings.home / "hooks.yaml"


async def _listed(call: Caller) -> dict[str, Any]:
    return await call.structured("compozy__hooks_list", {"result_view": "full"})


def _reload(app: App) -> None:
    app.hooks.registry.invalidate()


async def test_hooks_in_the_home_file_run_on_every_call(
    app: App, call: Caller, server: Webhook
) -> None:
    write_hooks(
        _home_file(app),
        {"id": "everything", "event": "tool.pre_call", "url": server.at("/all")},
    )
    _reload(app)
    await call.create()
    await call("compozy__tool_info", {"tool_id": STATUS})
    assert [p["tool_id"] for p in server.payloads("/all")] == [
        "compozy__session_create",
        "compozy__tool_info",
    ]
    (hook,) = (await _listed(call))["hooks"]
    assert (hook["id"], hook["source"], hook["file"]) == (
        "everything",
        "home",
        str(_home_file(app)),
    )
    assert (hook["timeout"], hook["mode"], hook["on_error"], hook["enabled"]) == (
        10.0,
        "sync",
        "allow",
        True,
    )


async def test_a_workspaces_hooks_run_for_its_own_sessions_only(
    app: App, call: Caller, server: Webhook, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    added = await app.sessions.add_workspace(other, "other")
    await app.sessions.set_workspace_trust(added.id, True)  # its hooks.yaml runs (issue 22)
    write_hooks(
        other / ".compozy" / "hooks.yaml",
        {"id": "guard", "event": "tool.pre_call", "url": server.at("/ws")},
    )
    _reload(app)
    mine = await call.create(workspace_id=added.id)
    theirs = await call.create()
    await call(STATUS, {"session_id": mine["id"]}, scope=scope_of(mine["id"]))
    await call(STATUS, {"session_id": theirs["id"]}, scope=scope_of(theirs["id"]))
    await call(STATUS, {"session_id": mine["id"]})  # the operator is in no workspace
    assert [p["session_id"] for p in server.payloads("/ws")] == [mine["id"]]
    (hook,) = (await _listed(call))["hooks"]
    assert (hook["id"], hook["source"], hook["workspace_id"]) == (
        f"{added.id}.guard",
        "workspace",
        added.id,
    )


async def test_a_file_hook_cannot_be_changed_through_the_tools(
    app: App, call: Caller, server: Webhook
) -> None:
    write_hooks(_home_file(app), {"id": "filed", "event": "tool.pre_call", "url": server.url})
    _reload(app)
    for tool, extra in (
        ("compozy__hooks_update", {"timeout": 1}),
        ("compozy__hooks_disable", {}),
        ("compozy__hooks_delete", {}),
    ):
        with pytest.raises(ToolConflict) as caught:
            await call(tool, {"hook_id": "filed", **extra})
        assert caught.value.reason == "hook_read_only"
        assert caught.value.message == (
            'hook "filed" is defined in $COMPOZY_HOME/hooks.yaml; change it there'
        )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("hooks: [", "$COMPOZY_HOME/hooks.yaml: is not valid YAML at line 1"),
        ("- just a list", '$COMPOZY_HOME/hooks.yaml: must be a mapping with a "hooks" list'),
        (
            "hooks:\n  - {id: a, event: tool.pre_call}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" must set exactly one of "command" and "url"',
        ),
        (
            "hooks:\n  - {id: a, event: tool.pre_call, command: x, url: 'http://h'}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" must set exactly one of "command" and "url"',
        ),
        (
            "hooks:\n  - {id: a, event: tool.pre_call, command: x, headers: {A: b}}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" field "headers" applies to webhooks ("url") only',
        ),
        (
            "hooks:\n  - {id: a, event: tool.later, command: x}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" field "event" must be one of "tool.pre_call", '
            '"tool.post_call", "tool.post_error"',
        ),
        (
            "hooks:\n  - {id: a, event: tool.pre_call, command: x, timeout: 0}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" field "timeout" must be greater than 0',
        ),
        (
            "hooks:\n  - {event: tool.pre_call, command: x}",
            '$COMPOZY_HOME/hooks.yaml: hook #1 field "id" is required',
        ),
        (
            "hooks:\n  - {id: a, event: tool.pre_call, command: x, on_eror: deny}",
            '$COMPOZY_HOME/hooks.yaml: hook "a" field "on_eror" is not a field of a hook',
        ),
    ],
)
async def test_a_broken_file_is_a_problem_hooks_list_reports_and_calls_go_on(
    app: App, call: Caller, text: str, problem: str
) -> None:
    _home_file(app).parent.mkdir(parents=True, exist_ok=True)
    _home_file(app).write_text(text)
    _reload(app)
    await call.create()
    listed = await _listed(call)
    assert listed["hooks"] == []
    assert [f"{p['source']}: {p['message']}" for p in listed["problems"]] == [problem]


async def test_a_bad_hook_is_skipped_and_the_good_ones_of_its_file_load(
    app: App, call: Caller, server: Webhook
) -> None:
    write_hooks(
        _home_file(app),
        {"id": "good", "event": "tool.pre_call", "url": server.url},
        {"id": "good", "event": "tool.post_call", "url": server.url},
        {"id": "bad", "event": "tool.pre_call"},
    )
    _reload(app)
    listed = await _listed(call)
    assert [h["id"] for h in listed["hooks"]] == ["good"]
    assert [p["message"] for p in listed["problems"]] == [
        'hook "good" is defined twice',
        'hook "bad" must set exactly one of "command" and "url"',
    ]


async def test_a_file_hook_wins_over_a_stored_hook_with_its_id(
    app: App, call: Caller, server: Webhook
) -> None:
    await call("compozy__hooks_create", {"id": "same", "event": "tool.pre_call", "url": server.url})
    write_hooks(_home_file(app), {"id": "same", "event": "tool.post_call", "url": server.url})
    _reload(app)
    listed = await _listed(call)
    assert [(h["id"], h["source"]) for h in listed["hooks"]] == [("same", "home")]
    assert "is not run" in listed["problems"][0]["message"]


async def test_a_changed_file_is_read_again(app: App, call: Caller, server: Webhook) -> None:
    write_hooks(_home_file(app), {"id": "one", "event": "tool.pre_call", "url": server.url})
    _reload(app)
    assert [h["id"] for h in (await _listed(call))["hooks"]] == ["one"]
    write_hooks(_home_file(app), {"id": "two", "event": "tool.pre_call", "url": server.url})
    _reload(app)
    assert [h["id"] for h in (await _listed(call))["hooks"]] == ["two"]


def _caller(**fields: Any) -> HookCaller:
    base = {
        "session_id": "sess-1",
        "agent_name": "general",
        "session_type": "user",
        "workspace_id": "ws_default",
        "workspace_name": "default",
        "workspace_path": "/w",
    }
    return HookCaller(**{**base, **fields})


@pytest.mark.parametrize(
    ("matcher", "tool_id", "caller", "matches"),
    [
        (Matcher(), "compozy__session_status", None, True),
        (Matcher(tool="compozy__session_*"), "compozy__session_status", None, True),
        (Matcher(tool="compozy__session_*"), "compozy__skill_view", None, False),
        (Matcher(tool="compozy__session_?tatus"), "compozy__session_status", None, True),
        (Matcher(agent_name="gen*"), "t__x", _caller(), True),
        (Matcher(agent_name="worker"), "t__x", _caller(), False),
        # session fields never match the operator, who has no session
        (Matcher(agent_name="*"), "t__x", None, False),
        (Matcher(workspace="ws_def*"), "t__x", _caller(), True),
        (Matcher(workspace="default"), "t__x", _caller(), True),
        (Matcher(workspace="other"), "t__x", _caller(), False),
        (Matcher(session_type="subagent"), "t__x", _caller(session_type="subagent"), True),
        (Matcher(session_type="subagent"), "t__x", _caller(), False),
        (Matcher(workspace_id="ws_default"), "t__x", _caller(), True),
        (Matcher(workspace_id="ws_other"), "t__x", _caller(), False),
        (Matcher(workspace_id="ws_default"), "t__x", None, False),
    ],
)
def test_matchers(matcher: Matcher, tool_id: str, caller: HookCaller | None, matches: bool) -> None:
    assert matcher.matches(tool_id, caller) is matches
