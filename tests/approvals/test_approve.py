"""Issue 14, items 1-3: when a call needs approval, the prompt, the four answers of
``compozy__session_approve`` and the answerers by interaction kind, remembered grants
(``_set``, ``_revoke``, scopes), permission modes, and who may act."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from tests.approvals.support import AGENT, APPROVE, RENAME, agent_session, held, pending, scope
from tests.conftest import Caller

from compozy_mcp.approvals import Answerers
from compozy_mcp.assembly import App
from compozy_mcp.calls import CallInfo, CallScope
from compozy_mcp.errors import (
    ResourceNotFound,
    ToolConflict,
    ToolError,
    ToolInvalidInput,
)
from compozy_mcp.sessions.interactions import Pending
from compozy_mcp.sessions.model import Interaction

pytestmark = pytest.mark.anyio


def rename(name: str, session_id: str = AGENT, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "name": name, **extra}


@pytest.fixture
async def agent(call: Caller) -> str:
    return await agent_session(call)


async def answer(call: Caller, interaction_id: str, decision: str, **kw: Any) -> dict[str, Any]:
    return await call.structured(
        APPROVE,
        {
            "session_id": kw.pop("session_id", AGENT),
            "interaction_id": interaction_id,
            "decision": decision,
        },
        **kw,
    )


async def denied(call: Caller, tool_id: str, tool_input: dict[str, Any], **kw: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call(tool_id, tool_input, **kw)
    return caught.value


# --- item 1: when approval is required ------------------------------------------------------


async def test_operator_calls_are_never_held(call: Caller, agent: str) -> None:
    await call(RENAME, rename("op"))
    await call("compozy__session_stop", {"session_id": AGENT})
    assert await pending(call) == []


async def test_read_tools_are_never_held(call: Caller, agent: str) -> None:
    await call("compozy__session_status", {"session_id": AGENT}, scope=scope())
    await call("compozy__tool_approvals_list", {}, scope=scope())
    assert await pending(call) == []


async def test_mutating_and_destructive_tools_are_held_by_default(call: Caller, agent: str) -> None:
    mutating = await held(call, rename("m"))
    with pytest.raises(ToolError) as caught:
        await call("compozy__session_stop", {"session_id": AGENT}, scope=scope())
    assert caught.value.code == "tool_approval_required"
    items = await pending(call)
    assert [i["tool_id"] for i in items] == [RENAME, "compozy__session_stop"]
    assert items[1]["title"] == "Approve compozy__session_stop (destructive)"
    assert mutating.details["then"] == "retry the same call"


async def test_authorization_comes_before_approval(call: Caller, agent: str) -> None:
    """A call the session may not make is denied, never put to the operator (upstream §3)."""
    child = await call.structured(
        "compozy__session_spawn",
        {
            "parent_session_id": AGENT,
            "agent_name": "w",
            "ttl_seconds": 60,
            "tools": ["compozy__session_status"],
        },
    )
    error = await denied(
        call, RENAME, rename("x", child["session_id"]), scope=CallScope(child["session_id"])
    )
    assert (error.code, error.reason) == ("tool_denied", "permission_denied")
    error = await denied(
        call, "compozy__tool_approvals_set", {"tool_id": RENAME, "decision": "allow"}, scope=scope()
    )
    assert (error.code, error.reason) == ("tool_denied", "operator_only")
    assert await pending(call) == []


async def test_accept_edits_runs_mutating_and_asks_about_destructive(
    call: Caller, agent: str
) -> None:
    await call(
        "compozy__tool_approvals_set", {"session_id": AGENT, "permission_mode": "accept_edits"}
    )
    await call(RENAME, rename("edit"), scope=scope())
    error = await denied(call, "compozy__session_stop", {"session_id": AGENT}, scope=scope())
    assert error.code == "tool_approval_required"


async def test_plan_mode_refuses_every_change_and_children_inherit_it(
    call: Caller, agent: str
) -> None:
    child = (
        await call.structured(
            "compozy__session_spawn",
            {"parent_session_id": AGENT, "agent_name": "w", "ttl_seconds": 60},
        )
    )["session_id"]
    done = await call.structured(
        "compozy__tool_approvals_set", {"session_id": AGENT, "permission_mode": "plan"}
    )
    assert done["mode"] == {"session_id": AGENT, "permission_mode": "plan"}
    for who in (AGENT, child):
        error = await denied(call, RENAME, rename("p", who), scope=CallScope(who))
        assert (error.code, error.reason) == ("tool_denied", "permission_mode_plan")
    await call("compozy__session_status", {"session_id": child}, scope=CallScope(child))


# --- item 2: prompts and the four answers ---------------------------------------------------


async def test_allow_once_lets_the_retried_call_run_once(call: Caller, agent: str) -> None:
    waiting = await held(call, rename("once", result_view="full"))
    answered = await answer(call, waiting.details["interaction_id"], "allow-once")
    assert answered["next"] == "the same call, retried, will run (once)"
    assert await pending(call) == []
    record = await call.session(RENAME, rename("once"), scope=scope())  # either view
    assert record["name"] == "once"
    again = await held(call, rename("once"))
    assert again.details["interaction_id"] != waiting.details["interaction_id"]


async def test_reject_once_refuses_the_retried_call_once(call: Caller, agent: str) -> None:
    waiting = await held(call, rename("r"))
    await answer(call, waiting.details["interaction_id"], "reject-once")
    error = await denied(call, RENAME, rename("r"), scope=scope())
    assert (error.code, error.reason) == ("tool_denied", "approval_rejected")
    await held(call, rename("r"))  # asked again afterwards


async def test_a_retry_before_the_answer_asks_once(call: Caller, agent: str) -> None:
    first = await held(call, rename("same"))
    second = await held(call, rename("same", result_view="compact"))
    assert first.details["interaction_id"] == second.details["interaction_id"]
    assert len(await pending(call)) == 1


async def test_an_answer_needs_a_pending_interaction_and_one_of_its_decisions(
    call: Caller, agent: str
) -> None:
    waiting = await held(call, rename("d"))
    with pytest.raises(ToolConflict) as caught:
        await answer(call, waiting.details["interaction_id"], "maybe")
    assert caught.value.reason == "decision_not_offered"
    await answer(call, waiting.details["interaction_id"], "allow-once")
    with pytest.raises(ResourceNotFound) as gone:
        await answer(call, waiting.details["interaction_id"], "allow-once")
    assert gone.value.reason == "interaction_not_found"


# --- who may answer ---------------------------------------------------------------------


@pytest.fixture
async def family(call: Caller, agent: str) -> dict[str, str]:
    """agent ── child (restricted to the session tools) ── grandchild; agent ── sibling."""

    async def spawn(parent: str) -> str:
        made = await call.structured(
            "compozy__session_spawn",
            {
                "parent_session_id": parent,
                "agent_name": "w",
                "ttl_seconds": 600,
                "tools": ["compozy__session_*"],
            },
        )
        return str(made["session_id"])

    child = await spawn(AGENT)
    return {"child": child, "grandchild": await spawn(child), "sibling": await spawn(AGENT)}


@pytest.mark.parametrize("target", ["parent", "sibling"])
async def test_a_restricted_child_cannot_answer_its_parent_or_a_sibling(
    call: Caller, family: dict[str, str], target: str
) -> None:
    target_id = AGENT if target == "parent" else family["sibling"]
    waiting = await held(call, rename("x", target_id), session_id=target_id)
    error = await denied(
        call,
        APPROVE,
        {
            "session_id": target_id,
            "interaction_id": waiting.details["interaction_id"],
            "decision": "allow-always",
        },
        scope=CallScope(family["child"]),
    )
    assert (error.code, error.reason) == ("tool_denied", "session_not_in_scope")
    assert len(await pending(call, target_id)) == 1


async def test_a_session_cannot_answer_its_own_prompt(call: Caller, family: dict[str, str]) -> None:
    child = family["child"]
    waiting = await held(call, rename("x", child), session_id=child)
    error = await denied(
        call,
        APPROVE,
        {
            "session_id": child,
            "interaction_id": waiting.details["interaction_id"],
            "decision": "allow-once",
        },
        scope=CallScope(child),
    )
    assert (error.code, error.reason) == ("tool_denied", "approval_self")


async def test_a_supervising_parent_answers_its_childs_prompt(
    call: Caller, family: dict[str, str]
) -> None:
    child, grandchild = family["child"], family["grandchild"]
    waiting = await held(call, rename("g", grandchild), session_id=grandchild)
    await answer(
        call,
        waiting.details["interaction_id"],
        "allow-once",
        session_id=grandchild,
        scope=CallScope(child),
    )
    await call(RENAME, rename("g", grandchild), scope=CallScope(grandchild))


# --- answerers by interaction kind ----------------------------------------------------------


class QuestionAnswerer:
    """An answerer plugged in for another kind, as the agent runtime plugs in ``permission``:
    the decision is one of the interaction's choices."""

    kind = "question"
    offered_by = "the question"

    def __init__(self) -> None:
        self.answers: list[tuple[str, str]] = []

    def decisions(self, interaction: Interaction) -> Sequence[str]:
        return interaction.choices or []

    async def answer(self, call: CallInfo, pending: Pending, decision: str) -> dict[str, Any]:
        self.answers.append((pending.interaction.interaction_id, decision))
        return {"decision": decision, "options": list(pending.interaction.choices or [])}


def _ask(app: App, kind: str, choices: list[str]) -> str:
    asked = app.sessions.interactions.ask(
        CallInfo("test"),
        AGENT,
        Interaction(
            interaction_id="",
            kind=kind,  # type: ignore[arg-type]
            provider_request_id=f"req-{kind}",
            title="Run make test",
            choices=choices,
            created_at="",
        ),
    )
    return asked.interaction.interaction_id


async def test_answers_are_dispatched_by_interaction_kind(
    app: App, call: Caller, agent: str
) -> None:
    item = _ask(app, "question", ["yes", "no"])
    assert (await call.full(AGENT))["badge"] == "waiting-for-input"
    with pytest.raises(ToolConflict) as unsupported:
        await answer(call, item, "yes")
    assert unsupported.value.reason == "interaction_kind_unsupported"
    plugged = QuestionAnswerer()
    app.approvals.answerers.register(plugged)
    with pytest.raises(ToolConflict) as not_offered:
        await answer(call, item, "allow-once")  # not one of its choices
    assert not_offered.value.reason == "decision_not_offered"
    answered = await answer(call, item, "yes")
    assert (answered["kind"], answered["decision"]) == ("question", "yes")
    assert plugged.answers == [(item, "yes")]


async def test_a_permission_request_goes_to_the_agent_runtime(
    app: App, call: Caller, agent: str
) -> None:
    """The runtime's answerer takes ``permission`` (one of the options the agent offered);
    with no agent running here, it says so."""
    assert "permission" in app.approvals.answerers.kinds
    item = _ask(app, "permission", ["allow_once", "reject_once"])
    assert (await call.full(AGENT))["badge"] == "waiting-for-auth"
    with pytest.raises(ToolConflict) as offered:
        await answer(call, item, "allow-once")
    assert offered.value.reason == "decision_not_offered"
    with pytest.raises(ToolConflict) as gone:
        await answer(call, item, "allow_once")
    assert gone.value.reason == "runtime_not_ready"


def test_a_kind_has_one_answerer() -> None:
    registry = Answerers()
    registry.register(QuestionAnswerer())
    with pytest.raises(ValueError, match="already"):
        registry.register(QuestionAnswerer())


# --- item 3: grants --------------------------------------------------------------------------


async def test_allow_always_and_reject_always_remember_an_input_grant(
    call: Caller, agent: str
) -> None:
    yes = await held(call, rename("yes"))
    granted = (await answer(call, yes.details["interaction_id"], "allow-always"))["grant"]
    assert {
        k: granted[k]
        for k in (
            "scope",
            "workspace_id",
            "agent_name",
            "tool_id",
            "decision",
            "source",
            "profile_archived",
        )
    } == {
        "scope": "input",
        "workspace_id": "ws_default",
        "agent_name": "general",
        "tool_id": RENAME,
        "decision": "allow",
        "source": "answer",
        "profile_archived": False,
    }
    assert granted["tool_input"] == rename("yes")
    no = await held(call, rename("no"))
    await answer(call, no.details["interaction_id"], "reject-always")
    listed = await call.structured("compozy__tool_approvals_list", {"tool_id": RENAME})
    assert [g["decision"] for g in listed["grants"]] == ["allow", "reject"]


async def test_tool_and_agent_grants_and_their_precedence(call: Caller, agent: str) -> None:
    tool_wide = await call.structured(
        "compozy__tool_approvals_set", {"tool_id": RENAME, "decision": "allow"}
    )
    assert tool_wide["grant"]["scope"] == "tool"
    await call(RENAME, rename("any"), scope=scope())
    agent_reject = await call.structured(
        "compozy__tool_approvals_set",
        {"tool_id": RENAME, "decision": "reject", "agent_name": "general"},
    )
    assert agent_reject["grant"]["scope"] == "agent"
    error = await denied(call, RENAME, rename("any"), scope=scope())
    assert error.reason == "approval_rejected"
    exact = await call.structured(
        "compozy__tool_approvals_set",
        {
            "tool_id": RENAME,
            "decision": "allow",
            "agent_name": "general",
            "input": rename("this one", result_view="full"),
        },
    )
    await call(RENAME, rename("this one"), scope=scope())  # the exact input wins
    await call.structured("compozy__tool_approvals_revoke", {"grant_id": exact["grant"]["id"]})
    error = await denied(call, RENAME, rename("this one"), scope=scope())
    assert error.reason == "approval_rejected"
    await call("compozy__tool_approvals_revoke", {"grant_id": agent_reject["grant"]["id"]})
    await call(RENAME, rename("this one"), scope=scope())


async def test_set_and_revoke_check_what_they_name(call: Caller, agent: str) -> None:
    with pytest.raises(ResourceNotFound):
        await call("compozy__tool_approvals_revoke", {"grant_id": "grant-none"})
    with pytest.raises(ResourceNotFound):
        await call("compozy__tool_approvals_set", {"tool_id": "compozy__nope", "decision": "allow"})
    with pytest.raises(ToolInvalidInput):
        await call("compozy__tool_approvals_set", {"tool_id": RENAME})
    with pytest.raises(ToolInvalidInput):
        await call(
            "compozy__tool_approvals_set", {"tool_id": RENAME, "decision": "allow", "input": {}}
        )  # needs agent_name


async def test_a_managed_session_lists_its_own_workspaces_grants_only(
    app: App, call: Caller, agent: str, tmp_path: Any
) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other_ws = (await app.sessions.add_workspace(other_dir)).id
    await call("compozy__tool_approvals_set", {"tool_id": RENAME, "decision": "allow"})
    await call(
        "compozy__tool_approvals_set",
        {"tool_id": RENAME, "decision": "reject", "workspace_id": other_ws},
    )
    everything = await call.structured("compozy__tool_approvals_list")
    assert len(everything["grants"]) == 2
    own = await call.structured("compozy__tool_approvals_list", scope=scope())
    assert [g["workspace_id"] for g in own["grants"]] == ["ws_default"]
