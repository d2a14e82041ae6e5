"""The session record tools, and spec "Session record tools": what compact keeps and omits."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.errors import (
    ModelNotFound,
    ReasoningEffortUnsupported,
    ResourceNotFound,
    ToolConflict,
)
from compozy_mcp.sessions.model import PullRequest

pytestmark = pytest.mark.anyio

RECORD_TOOLS = [
    "compozy__session_status",
    "compozy__session_archive",
    "compozy__session_unarchive",
    "compozy__session_stop",
    "compozy__session_runtime_clear",
]
FULL_ONLY = ("supervision", "available_commands", "diagnostics", "profile_name", "workspace_path")


async def test_create_returns_the_compact_record_with_the_spec_fields(call: Caller) -> None:
    session = await call.create(
        session_id="sess-example",
        name="Fix flaky upload test",
        branch="fix/upload-flake",
        provider="claude",
    )
    assert session == {
        "id": "sess-example",
        "name": "Fix flaky upload test",
        "agent_name": "general",
        "profile_id": "prof_default",
        "type": "user",
        "workspace_id": "ws_default",
        "branch": "fix/upload-flake",
        "state": "active",
        "badge": "idle",
        "board_column": "backlog",
        "runtime": {"status": "unbound", "selection_revision": 1},
        "lineage": {
            "kind": "root",
            "root_session_id": "sess-example",
            "spawn_budget": {"max_children": 16, "max_depth": 3, "ttl_seconds": 86400},
        },
        "pending_interactions": [],
        "pull_request": None,
        "archived_at": None,
        "created_at": "2026-11-10T14:02:11Z",
        "updated_at": "2026-11-10T14:02:11Z",
    }


async def test_a_created_session_has_no_generation_and_no_transcript_epoch_in_both_views(
    call: Caller,
) -> None:
    compact = await call.create()
    full = await call.full(compact["id"])
    for record in (compact, full):
        assert "generation" not in record["runtime"]
        assert "transcript_epoch" not in record
        assert record["runtime"]["selection_revision"] == 0


async def test_full_record_carries_policy_supervision_commands_diagnostics_and_profile(
    call: Caller, workspace: Any
) -> None:
    full = await call.full((await call.create())["id"])
    assert full["lineage"]["permission_policy"] == {
        "tools": ["*"],
        "skills": ["*"],
        "mcp_servers": ["*"],
        "workspace_paths": [str(workspace.resolve())],
    }
    assert full["supervision"]["mode"] == "operator"
    assert full["available_commands"] == []
    assert full["diagnostics"] == []
    assert (full["profile_name"], full["profile_color"], full["profile_icon"]) == (
        "Default",
        "#64748b",
        "sparkles",
    )


@pytest.mark.parametrize("tool_id", RECORD_TOOLS)
async def test_record_tools_return_the_same_compact_session_record(
    call: Caller, tool_id: str
) -> None:
    created = await call.create()
    compact = await call.session(tool_id, {"session_id": created["id"]})
    for field in FULL_ONLY:
        assert field not in compact
    assert "permission_policy" not in compact["lineage"]
    full = await call.session(tool_id, {"session_id": created["id"], "result_view": "full"})
    assert "permission_policy" in full["lineage"]


#: an agent that lists its models and efforts (run by the in-process echo agent, which offers
#: exactly those as ACP config options)
MODELLED = (
    "agents:\n"
    "  modelled:\n"
    "    command: modelled-acp\n"
    "    models: [m-large, m-small]\n"
    "    reasoning_efforts: [low, high]\n"
    "    default_reasoning_effort: low\n"
    "  plain:\n"
    "    command: plain-acp\n"
    "    models: [p-1]\n"
    "  unlisted:\n"
    "    command: unlisted-acp\n"
)


@pytest.fixture
def modelled(app: App) -> None:
    app.settings.home.mkdir(parents=True, exist_ok=True)
    (app.settings.home / "agents.yaml").write_text(MODELLED, encoding="utf-8")


@pytest.mark.usefixtures("modelled")
async def test_runtime_binding_sets_generation_effective_and_acp_caps(call: Caller) -> None:
    created = await call.create(provider="modelled")
    bound = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": created["id"],
            "provider": "modelled",
            "reasoning_effort": "high",
            "selection_revision": 1,
            "generation": 0,
        },
    )
    assert bound["runtime"] == {
        "status": "ready",
        "generation": 1,
        "selection_revision": 2,
        "effective": {"provider": "modelled", "model": "m-large", "reasoning_effort": "high"},
    }
    # bound, between turns: idle, among the sessions at work
    assert (bound["badge"], bound["board_column"]) == ("idle", "working")
    full = await call.full(created["id"])
    assert full["runtime"]["transition"] == "initial_bind"
    assert full["runtime"]["acp_caps"]["supports_load_session"] is True
    assert full["runtime"]["selected"] == {"provider": "modelled", "reasoning_effort": "high"}
    assert full["available_commands"]


@pytest.mark.usefixtures("modelled")
async def test_effective_holds_only_what_the_agent_confirmed(call: Caller) -> None:
    """An effort the agent offers no option for stays in ``selected``; ``effective`` holds the
    model the agent said it uses, and no effort: never what it did not confirm."""
    sid = (await call.create())["id"]
    bound = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": sid,
            "provider": "unlisted",  # lists nothing: it is asked when it starts
            "reasoning_effort": "high",
            "selection_revision": 0,
            "generation": 0,
        },
    )
    # the in-process echo agent offers its model echo-1 and no effort
    assert bound["runtime"]["effective"] == {"provider": "unlisted", "model": "echo-1"}
    full = await call.full(sid)
    assert full["runtime"]["selected"] == {"provider": "unlisted", "reasoning_effort": "high"}
    listed = await call.structured("compozy__agent_list", {"result_view": "full"})
    unlisted = next(a for a in listed["agents"] if a["name"] == "unlisted")
    assert (unlisted["models"], unlisted["models_from"]) == (["echo-1"], "agent")


@pytest.mark.usefixtures("modelled")
async def test_same_provider_is_a_live_configuration_and_keeps_the_generation(call: Caller) -> None:
    sid = (await call.create())["id"]
    await call(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "modelled", "selection_revision": 0, "generation": 0},
    )
    again = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": sid,
            "provider": "modelled",
            "model": "m-small",
            "selection_revision": 1,
            "generation": 1,
        },
    )
    assert again["runtime"]["generation"] == 1
    assert again["runtime"]["selection_revision"] == 2
    assert again["runtime"]["effective"]["model"] == "m-small"
    assert (await call.full(sid))["runtime"]["transition"] == "live_configuration"
    replaced = await call.session(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "codex", "selection_revision": 2, "generation": 1},
    )
    assert replaced["runtime"]["generation"] == 2
    assert replaced["runtime"]["effective"]["provider"] == "codex"


async def test_runtime_clear_unbinds_but_keeps_the_generation(call: Caller) -> None:
    sid = (await call.create())["id"]
    await call(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "gemini", "selection_revision": 0, "generation": 0},
    )
    cleared = await call.session("compozy__session_runtime_clear", {"session_id": sid})
    assert cleared["runtime"] == {"status": "unbound", "generation": 1, "selection_revision": 2}
    again = await call.session("compozy__session_runtime_clear", {"session_id": sid})
    assert again["runtime"]["selection_revision"] == 2  # nothing to clear: unchanged


@pytest.mark.usefixtures("modelled")
@pytest.mark.parametrize(
    ("selection", "error"),
    [
        ({"provider": "nope"}, ModelNotFound),  # agents.yaml may define more: checked after
        ({"provider": "modelled", "model": "gpt-1"}, ModelNotFound),
        ({"provider": "plain", "reasoning_effort": "high"}, ReasoningEffortUnsupported),
    ],
)
async def test_unknown_selections_are_refused_and_change_nothing(
    call: Caller, selection: dict[str, str], error: type[Exception]
) -> None:
    sid = (await call.create())["id"]
    with pytest.raises(error):
        await call(
            "compozy__session_runtime_set",
            {"session_id": sid, **selection, "selection_revision": 0, "generation": 0},
        )
    with pytest.raises(error):
        await call.create(**selection)
    assert (await call.full(sid))["runtime"] == {"status": "unbound", "selection_revision": 0}


async def test_model_without_provider_is_an_input_error_naming_provider(call: Caller) -> None:
    with pytest.raises(Exception, match='input "provider" is required when "model" is given'):
        await call.create(model="claude-opus-5-5")


async def test_stop_records_the_stop_fields_and_unbinds(call: Caller) -> None:
    sid = (await call.create())["id"]
    await call(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "claude", "selection_revision": 0, "generation": 0},
    )
    stopped = await call.session("compozy__session_stop", {"session_id": sid, "reason": "done"})
    assert stopped["state"] == "stopped"
    assert (stopped["stop_reason"], stopped["stop_detail"], stopped["stop_cause"]) == (
        "stopped_by_operator",
        "done",
        "operator",
    )
    assert (stopped["badge"], stopped["board_column"]) == ("stopped", "done")
    assert stopped["runtime"] == {"status": "unbound", "generation": 1, "selection_revision": 1}


async def test_archive_and_unarchive(call: Caller, clock: FixedClock) -> None:
    sid = (await call.create())["id"]
    clock.advance(60)
    archived = await call.session("compozy__session_archive", {"session_id": sid})
    assert archived["archived_at"] == "2026-11-10T14:03:11Z"
    assert archived["badge"] == "archived"
    listed = await call.structured("compozy__session_list", {})
    assert sid not in [s["id"] for s in listed["sessions"]]
    listed = await call.structured("compozy__session_list", {"archived": True})
    assert [s["id"] for s in listed["sessions"]] == [sid]
    restored = await call.session("compozy__session_unarchive", {"session_id": sid})
    assert restored["archived_at"] is None
    await call("compozy__session_archive", {"session_id": sid})
    with pytest.raises(ToolConflict) as caught:
        await call(
            "compozy__session_runtime_set",
            {"session_id": sid, "provider": "claude", "selection_revision": 0, "generation": 0},
        )
    assert caught.value.reason == "session_archived"


async def test_rename_trims_and_refuses_blank_names(call: Caller) -> None:
    sid = (await call.create(name="old"))["id"]
    assert (await call.session("compozy__session_rename", {"session_id": sid, "name": " new "}))[
        "name"
    ] == "new"
    with pytest.raises(Exception, match='input "name" must be one line of text, not blank'):
        await call("compozy__session_rename", {"session_id": sid, "name": "   "})


async def test_an_unknown_session_is_not_found(call: Caller) -> None:
    with pytest.raises(ResourceNotFound) as caught:
        await call("compozy__session_status", {"session_id": "sess-missing"})
    assert (caught.value.code, caught.value.reason) == ("not_found", "session_not_found")


async def test_create_with_a_taken_id_is_a_conflict(call: Caller) -> None:
    await call.create(session_id="sess-one")
    with pytest.raises(ToolConflict) as caught:
        await call.create(session_id="sess-one")
    assert caught.value.reason == "session_exists"


async def test_create_in_an_unknown_workspace_or_profile_is_not_found(call: Caller) -> None:
    with pytest.raises(ResourceNotFound, match='workspace "ws_nope"'):
        await call.create(workspace_id="ws_nope")
    with pytest.raises(ResourceNotFound, match='profile "prof_nope"'):
        await call.create(profile_id="prof_nope")


async def test_list_pages_newest_first_with_a_cursor(call: Caller) -> None:
    ids = [(await call.create(name=f"s{i}"))["id"] for i in range(5)]
    first = await call.structured("compozy__session_list", {"limit": 2})
    assert [s["id"] for s in first["sessions"]] == ids[::-1][:2]
    second = await call.structured(
        "compozy__session_list", {"limit": 2, "cursor": first["next_cursor"]}
    )
    third = await call.structured(
        "compozy__session_list", {"limit": 2, "cursor": second["next_cursor"]}
    )
    assert [s["id"] for s in second["sessions"] + third["sessions"]] == ids[::-1][2:]
    assert "next_cursor" not in third
    assert "supervision" not in first["sessions"][0]  # list items are compact records


async def test_list_refuses_a_cursor_it_did_not_issue(call: Caller) -> None:
    with pytest.raises(Exception, match='input "cursor" is not a cursor this tool returned'):
        await call("compozy__session_list", {"cursor": "garbage!"})


async def test_list_filters_by_state_and_agent(call: Caller) -> None:
    a = (await call.create(agent_name="alpha"))["id"]
    b = (await call.create(agent_name="beta"))["id"]
    await call("compozy__session_stop", {"session_id": b})
    by_agent = await call.structured("compozy__session_list", {"agent_name": "alpha"})
    assert [s["id"] for s in by_agent["sessions"]] == [a]
    stopped = await call.structured("compozy__session_list", {"state": "stopped"})
    assert [s["id"] for s in stopped["sessions"]] == [b]


async def test_a_permission_prompt_shows_in_compact_as_in_the_spec_excerpt(
    app: App, call: Caller
) -> None:
    sid = (await call.create())["id"]
    await call(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "claude", "selection_revision": 0, "generation": 0},
    )
    interaction = app.sessions.events.request_interaction(
        sid, kind="permission", title="Run make test"
    )
    compact = await call.session("compozy__session_status", {"session_id": sid})
    assert (compact["badge"], compact["board_column"]) == ("waiting-for-auth", "needs_you")
    assert compact["pending_interactions"] == [
        {
            "session_id": sid,
            "interaction_id": interaction.interaction_id,
            "kind": "permission",
            "provider_request_id": interaction.provider_request_id,
            "title": "Run make test",
            "status": "pending",
            "created_at": "2026-11-10T14:02:11Z",
        }
    ]
    assert compact["attention"]["kind"] == "interaction"
    assert compact["attention_dismissible"] is False
    assert compact["waiting_on"]["interaction_id"] == interaction.interaction_id


async def test_failures_stop_causes_pull_requests_and_later_are_kept_in_compact(
    app: App, call: Caller
) -> None:
    sessions = app.sessions.events
    sid = (await call.create())["id"]
    sessions.link_pull_request(
        sid, PullRequest(number=7, url="https://example.test/pr/7", state="open")
    )
    sessions.set_later(sid, note="after the release")
    compact = await call.session("compozy__session_status", {"session_id": sid})
    assert compact["pull_request"] == {
        "number": 7,
        "url": "https://example.test/pr/7",
        "state": "open",
    }
    assert compact["later"]["note"] == "after the release"
    assert compact["board_column"] == "later"
    sessions.record_failure(sid, "crash", "agent exited with 137")
    compact = await call.session("compozy__session_status", {"session_id": sid})
    assert compact["failure"] == {"kind": "crash", "summary": "agent exited with 137"}
    assert (compact["stop_reason"], compact["stop_cause"]) == ("failed", "failure")
    assert compact["attention"]["kind"] == "failure"
    assert compact["attention_dismissible"] is True
    assert compact["badge"] == "failed"


async def test_a_change_made_by_another_process_is_seen_on_the_next_read(
    settings: Any, clock: FixedClock
) -> None:
    # Two apps on one database file stand for two processes (CLI, proxy, daemon).
    with open_app(settings, clock=clock) as first, open_app(settings, clock=clock) as second:
        created = await first.dispatcher.call(
            "compozy__session_create", {"agent_name": "general", "name": "before"}
        )
        sid = created.structured["session"]["id"]
        status = {"session_id": sid}
        assert (await first.dispatcher.call("compozy__session_status", status)).structured[
            "session"
        ]["name"] == "before"
        await second.dispatcher.call("compozy__session_rename", {**status, "name": "after"})
        again = await first.dispatcher.call("compozy__session_status", status)
        assert again.structured["session"]["name"] == "after"
