"""Issue 13, items 1 and 4: the ``compozy__hooks_*`` tools. Risk classes as upstream §2 (delete
destructive; events, info, list, runs read; create, update, enable, disable mutating);
``_list`` and ``_runs`` with compact and full views; who may act (the operator changes hooks, a
managed session reads the runs of its own calls and its descendants')."""

from __future__ import annotations

from typing import Any

import pytest
from tests import pg
from tests.conftest import Caller
from tests.hooks.support import Answer, Webhook, patch_answer, runs

from compozy_mcp.assembly import App
from compozy_mcp.calls import scope_of
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied, ToolInvalidInput
from compozy_mcp.native.hook_schema import HOOK_RECORD, RUN_RECORD
from compozy_mcp.validation import compile_validator

#: on each engine (PostgreSQL in the postgres tier)
pytestmark = [pytest.mark.anyio, pg.on_both_engines]

RISK = {
    "compozy__hooks_delete": "destructive",
    "compozy__hooks_events": "read",
    "compozy__hooks_info": "read",
    "compozy__hooks_list": "read",
    "compozy__hooks_runs": "read",
    "compozy__hooks_create": "mutating",
    "compozy__hooks_update": "mutating",
    "compozy__hooks_enable": "mutating",
    "compozy__hooks_disable": "mutating",
    "compozy__hooks_test": "mutating",
}
CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("compozy__hooks_create", {"event": "tool.pre_call", "command": "true"}),
    ("compozy__hooks_update", {"hook_id": "h", "timeout": 1}),
    ("compozy__hooks_enable", {"hook_id": "h"}),
    ("compozy__hooks_disable", {"hook_id": "h"}),
    ("compozy__hooks_delete", {"hook_id": "h"}),
    ("compozy__hooks_test", {"hook_id": "h"}),
]


async def _create(call: Caller, hook_id: str, url: str, **extra: Any) -> dict[str, Any]:
    created: dict[str, Any] = (
        await call.structured(
            "compozy__hooks_create",
            {"id": hook_id, "event": extra.pop("event", "tool.pre_call"), "url": url, **extra},
        )
    )["hook"]
    return created


def test_risk_classes_are_upstreams(app: App) -> None:
    tools = {
        t.id: t.risk.value for t in app.dispatcher.registry if t.id.startswith("compozy__hooks_")
    }
    assert tools == RISK
    views = {
        t.id for t in app.dispatcher.registry if t.id.startswith("compozy__hooks_") and t.has_views
    }
    assert views == {"compozy__hooks_list", "compozy__hooks_runs"}


async def test_create_info_update_switch_and_delete_a_stored_hook(
    app: App, call: Caller, server: Webhook
) -> None:
    made = await _create(call, "guard", server.url, headers={"Authorization": "Bearer s3cret"})
    assert made == {
        "id": "guard",
        "event": "tool.pre_call",
        "enabled": True,
        "source": "store",
        "matcher": {},
        "url": server.url,
        "headers": {"Authorization": "<redacted>"},
        "timeout": 10.0,
        "mode": "sync",
        "on_error": "allow",
        "created_at": "2026-11-10T14:02:11Z",
        "updated_at": "2026-11-10T14:02:11Z",
        "stats": {"runs": 0, "failed": 0},
    }
    assert compile_validator(HOOK_RECORD).is_valid(made)
    info = await call.structured("compozy__hooks_info", {"hook_id": "guard"})
    assert info["hook"] == made
    changed = (
        await call.structured(
            "compozy__hooks_update",
            {"hook_id": "guard", "command": ["./guard.sh"], "on_error": "deny"},
        )
    )["hook"]
    # a command replaces the url and its headers
    assert (changed["command"], changed["on_error"]) == (["./guard.sh"], "deny")
    assert not {"url", "headers"} & set(changed)
    off = (await call.structured("compozy__hooks_disable", {"hook_id": "guard"}))["hook"]
    assert off["enabled"] is False
    assert app.hooks.registry.current().enabled("tool.pre_call") == ()
    on = (await call.structured("compozy__hooks_enable", {"hook_id": "guard"}))["hook"]
    assert on["enabled"] is True
    gone = await call.structured("compozy__hooks_delete", {"hook_id": "guard"})
    assert gone == {"hook_id": "guard", "deleted": True}
    with pytest.raises(ResourceNotFound) as caught:
        await call("compozy__hooks_info", {"hook_id": "guard"})
    assert (caught.value.reason, caught.value.message) == (
        "hook_not_found",
        'hook "guard" does not exist',
    )


async def test_a_created_hook_gets_an_id_and_ids_are_unique(call: Caller, server: Webhook) -> None:
    made = (
        await call.structured(
            "compozy__hooks_create", {"event": "tool.post_call", "url": server.url}
        )
    )["hook"]
    assert made["id"].startswith("hook-")
    with pytest.raises(ToolConflict) as caught:
        await _create(call, made["id"], server.url)
    assert caught.value.reason == "hook_exists"


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"event": "tool.pre_call"}, 'input must set exactly one of "command" and "url"'),
        (
            {"event": "tool.pre_call", "command": "x", "url": "http://h"},
            'input must set exactly one of "command" and "url"',
        ),
        (
            {"event": "tool.pre_call", "command": "x", "headers": {"A": "b"}},
            'input "headers" applies to webhooks ("url") only',
        ),
        ({"event": "tool.pre_call", "command": []}, 'input "command" must have at least 1 items'),
        ({"event": "tool.pre_call", "url": "ftp://h"}, 'input "url" must match the pattern'),
        (
            {"event": "tool.pre_call", "command": "x", "timeout": 601},
            'input "timeout" must be at most 600',
        ),
    ],
)
async def test_a_definition_that_breaks_the_rules_is_an_input_error(
    call: Caller, definition: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolInvalidInput) as caught:
        await call("compozy__hooks_create", definition)
    assert message in caught.value.message


async def test_hooks_list_compact_keeps_what_a_caller_must_not_miss_and_full_has_the_rest(
    app: App, call: Caller, server: Webhook
) -> None:
    await _create(
        call, "guard", server.url, matcher={"tool": "compozy__session_*"}, description="d"
    )
    server.respond = lambda path, payload: Answer(status=500)
    await call.create()
    await app.hooks.drain()
    compact = await call.structured("compozy__hooks_list")
    full = await call.structured("compozy__hooks_list", {"result_view": "full"})
    (hook,) = compact["hooks"]
    assert hook == {
        "id": "guard",
        "event": "tool.pre_call",
        "enabled": True,
        "source": "store",
        "on_error": "allow",
        "stats": {
            "runs": 1,
            "failed": 1,
            "last_outcome": "error",
            "last_run_at": "2026-11-10T14:02:11Z",
        },
    }
    assert compact["problems"] == []
    # every field of compact is in full at the same path with the same value
    (whole,) = full["hooks"]
    assert {key: whole[key] for key in hook} == hook
    assert {"url", "matcher", "timeout", "mode", "description"} <= set(whole)


async def test_hooks_runs_compact_drops_stderr_and_patches_and_full_has_them(
    app: App, call: Caller, server: Webhook
) -> None:
    await _create(call, "guard", server.url)
    server.respond = lambda path, payload: patch_answer({"tool_input": payload["tool_input"]})
    await call.create()
    await app.hooks.drain()
    (compact,) = (await call.structured("compozy__hooks_runs"))["runs"]
    (full,) = (await call.structured("compozy__hooks_runs", {"result_view": "full"}))["runs"]
    assert set(compact) == {
        "run_id",
        "hook_id",
        "event",
        "tool_id",
        "tool_call_id",
        "started_at",
        "duration_ms",
        "outcome",
        "decision",
        "patch_applied",
    }
    assert {key: full[key] for key in compact} == compact
    assert set(full) - set(compact) == {"exit_code", "stderr_tail", "patch"}
    assert compile_validator(RUN_RECORD).is_valid(full)


async def test_hooks_runs_filters_and_pages(app: App, call: Caller, server: Webhook) -> None:
    await _create(call, "guard", server.url)
    answers = iter([Answer(status=503), patch_answer({}), Answer(status=503), patch_answer({})])
    server.respond = lambda path, payload: next(answers)
    for _ in range(4):
        await call.create()
    failed = await runs(app, failed=True)
    assert [r["outcome"] for r in failed] == ["error", "error"]
    assert failed[0]["detail"] == "answered HTTP 503"
    assert [r["outcome"] for r in await runs(app, failed=False)] == ["ok", "ok"]
    page = await call.structured("compozy__hooks_runs", {"limit": 3})
    rest = await call.structured("compozy__hooks_runs", {"cursor": page["next_cursor"]})
    ids = [r["run_id"] for r in page["runs"] + rest["runs"]]
    assert ids == sorted(ids, reverse=True)
    assert len(ids) == 4
    one = page["runs"][0]["tool_call_id"]
    assert [r["tool_call_id"] for r in await runs(app, tool_call_id=one)] == [one]


@pytest.mark.parametrize(("tool_id", "tool_input"), CHANGES, ids=[c[0] for c in CHANGES])
async def test_only_the_operator_changes_or_runs_hooks(
    call: Caller, tool_id: str, tool_input: dict[str, Any]
) -> None:
    session = await call.create()  # a root session's policy allows every tool
    with pytest.raises(ToolDenied) as caught:
        await call(tool_id, tool_input, scope=scope_of(session["id"]))
    assert (caught.value.code, caught.value.reason) == ("tool_denied", "operator_only")


async def test_runs_a_restricted_child_reads_its_own_and_never_its_parents_or_a_siblings(
    app: App, call: Caller, server: Webhook
) -> None:
    """compozy__hooks_runs takes a session id: a managed session acts on itself and its
    descendants only; the operator keeps full power."""
    await _create(call, "watch", server.url, event="tool.post_call")
    parent = (await call.create())["id"]

    async def spawn(scope_session: str) -> str:
        spawned = await call.structured(
            "compozy__session_spawn",
            {
                "agent_name": "worker",
                "ttl_seconds": 600,
                "tools": ["compozy__session_*", "compozy__hooks_runs"],
            },
            scope=scope_of(scope_session),
        )
        return str(spawned["session_id"])

    child, sibling = await spawn(parent), await spawn(parent)
    grandchild = await spawn(child)
    for who in (parent, child, sibling, grandchild):
        await call("compozy__session_status", {"session_id": who}, scope=scope_of(who))
    await app.hooks.drain()

    async def seen(scope_session: str | None, **filters: Any) -> set[str | None]:
        scope = scope_of(scope_session)
        found = await call.structured(
            "compozy__hooks_runs", {**filters, "result_view": "full"}, scope=scope
        )
        return {r.get("session_id") for r in found["runs"]}

    assert await seen(child) == {child, grandchild}
    assert await seen(child, session_id=child) == {child}
    assert await seen(child, session_id=grandchild) == {grandchild}
    for other in (parent, sibling):
        with pytest.raises(ToolDenied) as caught:
            await call("compozy__hooks_runs", {"session_id": other}, scope=scope_of(child))
        assert (caught.value.code, caught.value.reason) == ("tool_denied", "scope_mismatch")
    assert await seen(parent) == {parent, child, sibling, grandchild}
    assert None in await seen(None)  # the operator's own calls, and everyone's
    assert await seen(None, session_id=sibling) == {sibling}


async def test_hooks_never_run_on_the_hook_tools_themselves(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: patch_answer({"deny": True})
    await _create(call, "deny-all", server.url)
    with pytest.raises(ToolDenied):
        await call.create()
    # the operator can still fix it
    await call("compozy__hooks_disable", {"hook_id": "deny-all"})
    await call.create()
    assert all(not p["tool_id"].startswith("compozy__hooks_") for _, p, _ in server.received)


async def test_hooks_events_lists_the_three_events_and_the_deny_exit_code(call: Caller) -> None:
    catalog = await call.structured("compozy__hooks_events")
    assert [e["event"] for e in catalog["events"]] == [
        "tool.pre_call",
        "tool.post_call",
        "tool.post_error",
    ]
    assert catalog["deny_exit_code"] == 2
    assert catalog["events"][0]["patch_fields"] == ["deny", "deny_reason", "tool_input"]


async def test_hooks_test_a_restricted_child_may_not_name_its_parent_or_a_sibling(
    call: Caller, server: Webhook
) -> None:
    """compozy__hooks_test takes a session id (its sample's caller) and is the operator's
    alone: a child is refused whoever it names; the operator names anyone."""
    await _create(call, "guard", server.url)
    parent = (await call.create())["id"]
    tools = ["compozy__hooks_test"]
    children = [
        (
            await call.structured(
                "compozy__session_spawn",
                {"agent_name": "worker", "ttl_seconds": 600, "tools": tools},
                scope=scope_of(parent),
            )
        )["session_id"]
        for _ in range(2)
    ]
    child, sibling = children
    for named in (parent, sibling, child):
        with pytest.raises(ToolDenied) as caught:
            await call(
                "compozy__hooks_test",
                {"hook_id": "guard", "tool_id": "compozy__tool_info", "session_id": named},
                scope=scope_of(child),
            )
        assert caught.value.reason == "operator_only"
    done = await call.structured(
        "compozy__hooks_test",
        {"hook_id": "guard", "tool_id": "compozy__tool_info", "session_id": sibling},
    )
    assert done["payload"]["session_id"] == sibling
