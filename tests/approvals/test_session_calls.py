"""The spec's "Approvals" section, one test (or a few) per sentence, through MCP (an SDK client
on the proxy bound to a managed session, as ``compozy proxy --session`` serves it) and through
the HTTP API (in-process ASGI, the session named in ``X-Compozy-Session``).

The calling agent is a managed session calling a mutating native tool with views
(``compozy__session_rename``). Issue 12 (the ACP runtime) adds sessions whose agent makes these
calls itself; tests of "a session on the echo agent calling a mutating tool" belong here.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx2
import pytest
from mcp.client import Client
from mcp.types import CallToolResult, RequestParamsMeta
from starlette.applications import Starlette
from starlette.routing import Mount
from tests.approvals.support import AGENT, APPROVE, RENAME, agent_session, held, pending, scope
from tests.conftest import Caller

from compozy_mcp import jsonutil
from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.approvals._digest import input_digest
from compozy_mcp.assembly import App
from compozy_mcp.errors import ToolDenied
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.proxy.server import ProxyServer
from compozy_mcp.store.base import ApprovalGrantRow

pytestmark = pytest.mark.anyio

VIEWS: list[dict[str, Any]] = [{"result_view": "full"}, {"result_view": "compact"}, {}]
INVOKE = f"/api/tools/{RENAME}/invoke"


def token_meta(token: str) -> RequestParamsMeta:
    """The ``_meta`` of a call that carries a one-shot approval token."""
    return cast(RequestParamsMeta, {"compozy.dev/approval_token": token})


def rename(name: str, **extra: Any) -> dict[str, Any]:
    return {"session_id": AGENT, "name": name, **extra}


@pytest.fixture
async def agent(call: Caller) -> str:
    return await agent_session(call)


@pytest.fixture
async def api(app: App, agent: str) -> AsyncIterator[httpx2.AsyncClient]:
    mounted = Starlette(routes=[Mount("/api", app=api_app(LocalHost(app), document))])
    transport = httpx2.ASGITransport(app=mounted)
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


async def mcp_call(app: App, mode: str, tool_input: dict[str, Any]) -> CallToolResult:
    async with Client(ProxyServer(app, scope=scope()).server, mode=mode) as client:
        return await client.call_tool(RENAME, tool_input)


async def http_call(
    api: httpx2.AsyncClient, tool_input: dict[str, Any], token: str | None = None
) -> httpx2.Response:
    body: dict[str, Any] = {"input": tool_input}
    if token is not None:
        body["approval_token"] = token
    return await api.post(INVOKE, json=body, headers={SESSION_HEADER: AGENT})


async def answer(call: Caller, interaction_id: str, decision: str) -> dict[str, Any]:
    return await call.structured(
        APPROVE, {"session_id": AGENT, "interaction_id": interaction_id, "decision": decision}
    )


# --- "result_view does not change which approval applies." --------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_result_view_does_not_change_which_approval_applies_over_mcp(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    """The same call with either view or none needs the same approval: one prompt."""
    asked = [error_of(await mcp_call(app, mode, rename("x", **view))) for view in VIEWS]
    assert {(e["code"], e["reason"]) for e in asked} == {
        ("tool_approval_required", "approval_required")
    }
    assert len({e["details"]["interaction_id"] for e in asked}) == 1
    assert len({e["details"]["input_digest"] for e in asked}) == 1
    assert len(await pending(call)) == 1
    record = await call.full(AGENT)
    assert (record["badge"], record["board_column"]) == ("waiting-for-auth", "needs_you")
    assert "name" not in record  # the tool did not run


async def test_result_view_does_not_change_which_approval_applies_over_http(
    api: httpx2.AsyncClient, call: Caller, agent: str
) -> None:
    responses = [await http_call(api, rename("x", **view)) for view in VIEWS]
    assert {r.status_code for r in responses} == {202}
    errors = [r.json()["error"] for r in responses]
    assert {e["code"] for e in errors} == {"tool_approval_required"}
    assert len({e["details"]["interaction_id"] for e in errors}) == 1
    session = (await api.get(f"/api/sessions/{AGENT}")).json()["session"]
    assert session["badge"] == "waiting-for-auth"
    assert session["board_column"] == "needs_you"


@pytest.mark.parametrize("mode_name", ["accept_edits", "bypass"])
async def test_a_mode_that_lets_the_call_run_does_so_with_either_view(
    call: Caller, agent: str, mode_name: str
) -> None:
    await call("compozy__tool_approvals_set", {"session_id": AGENT, "permission_mode": mode_name})
    for view in VIEWS:
        await call(RENAME, rename("ran", **view), scope=scope())
    assert await pending(call) == []


# --- "An approval you remembered for a call matches the same call with result_view: "full"
# or "compact"" ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("answered_with", VIEWS, ids=["full", "compact", "none"])
async def test_a_remembered_approval_matches_the_call_with_either_view_over_mcp(
    app: App, call: Caller, agent: str, mode: str, answered_with: dict[str, Any]
) -> None:
    waiting = error_of(await mcp_call(app, mode, rename("kept", **answered_with)))
    answered = await answer(call, waiting["details"]["interaction_id"], "allow-always")
    assert answered["grant"]["scope"] == "input"
    for view in VIEWS:
        result = await mcp_call(app, mode, rename("kept", **view))
        assert not result.is_error, result
        assert result.structured_content is not None
        assert result.structured_content["session"]["name"] == "kept"
    assert await pending(call) == []


async def test_a_remembered_approval_matches_the_call_with_either_view_over_http(
    api: httpx2.AsyncClient, call: Caller, agent: str
) -> None:
    waiting = (await http_call(api, rename("kept", result_view="compact"))).json()["error"]
    answered = await api.post(
        f"/api/sessions/{AGENT}/approve",
        json={"interaction_id": waiting["details"]["interaction_id"], "decision": "allow-always"},
    )
    assert answered.status_code == 200, answered.text
    for view in VIEWS:
        response = await http_call(api, rename("kept", **view))
        assert response.status_code == 200, response.text
        structured = response.json()["result"]["structured"]
        assert structured["session"]["name"] == "kept"
        assert ("supervision" in structured["session"]) is (view.get("result_view") == "full")


async def test_a_remembered_rejection_refuses_the_call_with_either_view(
    call: Caller, agent: str
) -> None:
    waiting = await held(call, rename("no", result_view="full"))
    await answer(call, waiting.details["interaction_id"], "reject-always")
    for view in VIEWS:
        with pytest.raises(ToolDenied) as caught:
            await call(RENAME, rename("no", **view), scope=scope())
        assert (caught.value.code, caught.value.reason) == (
            "tool_denied",
            "approval_rejected",
        )


async def test_a_remembered_approval_does_not_match_another_input(call: Caller, agent: str) -> None:
    waiting = await held(call, rename("one"))
    await answer(call, waiting.details["interaction_id"], "allow-always")
    await call(RENAME, rename("one", result_view="full"), scope=scope())
    other = await held(call, rename("two", result_view="full"))
    assert other.details["interaction_id"] != waiting.details["interaction_id"]


# --- "and approvals remembered before the upgrade keep matching." ---------------------------


def old_digest(tool_input: dict[str, Any]) -> str:
    """How a grant's digest was computed before views: over the input as sent (which had no
    result_view), whitespace stripped, keys in the order sent (upstream's json.Compact)."""
    compact = jsonutil.dumps(tool_input)
    return "sha256:" + hashlib.sha256(compact).hexdigest()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_approval_remembered_before_the_upgrade_keeps_matching(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    # keys in an order that is not sorted: the old digest is not the canonical one
    before_views = {"name": "old", "session_id": AGENT}
    reordered = {"session_id": AGENT, "name": "old"}
    assert old_digest(reordered) != input_digest(reordered)
    with app.store.write() as writer:  # stored the old way, before this version existed
        writer.put_approval_grant(
            ApprovalGrantRow(
                id="grant-before-views",
                workspace_id="ws_default",
                agent_name="general",
                tool_id=RENAME,
                input_digest=old_digest(reordered),
                decision="allow",
                profile_id="prof_default",
                source="answer",
                created_at="2026-01-01T00:00:00Z",
            )
        )
    for view in VIEWS:
        sent = {"session_id": AGENT, "name": "old", **view}
        result = await mcp_call(app, mode, sent)
        assert not result.is_error, result
    assert await pending(call) == []
    # as before the upgrade, the old digest knows one key order: another order is asked about
    other_order = error_of(await mcp_call(app, mode, {**before_views, "result_view": "full"}))
    assert other_order["reason"] == "approval_required"


# --- "The approval prompt shows the input as sent, including the selector." ----------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_prompt_shows_the_input_as_sent_including_the_selector_over_mcp(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    sent = rename("shown", result_view="full")
    waiting = error_of(await mcp_call(app, mode, sent))
    [prompt] = await pending(call)
    assert prompt["interaction_id"] == waiting["details"]["interaction_id"]
    assert prompt["kind"] == "approval"
    assert prompt["tool_id"] == RENAME
    assert prompt["tool_input"] == sent
    assert prompt["title"] == f"Approve {RENAME} (mutating)"
    assert prompt["decisions"] == ["allow-once", "allow-always", "reject-once", "reject-always"]
    # the compact session record keeps the prompt whole
    compact = await call.session("compozy__session_status", {"session_id": AGENT})
    assert compact["pending_interactions"] == [prompt]


async def test_the_prompt_shows_the_input_as_sent_including_the_selector_over_http(
    api: httpx2.AsyncClient, agent: str
) -> None:
    sent = rename("shown", result_view="compact")
    await http_call(api, sent)
    session = (await api.get(f"/api/sessions/{AGENT}")).json()["session"]
    [prompt] = session["pending_interactions"]
    assert (prompt["kind"], prompt["tool_input"]) == ("approval", sent)
    assert prompt["input_digest"] == input_digest(rename("shown"))


# --- "If you mint a one-shot approval token from an input digest instead of an input,
# compute the digest on the input without result_view." ------------------------------------


async def _mint(api: httpx2.AsyncClient, body: dict[str, Any]) -> httpx2.Response:
    return await api.post(f"/api/tools/{RENAME}/approvals", json={"session_id": AGENT, **body})


async def test_a_token_minted_from_the_digest_without_result_view_approves_the_call(
    api: httpx2.AsyncClient, call: Caller, agent: str
) -> None:
    digest = input_digest(rename("minted"))
    minted = await _mint(api, {"input_digest": digest})
    assert minted.status_code == 201, minted.text
    token = minted.json()["approval"]["token"]
    response = await http_call(api, rename("minted", result_view="full"), token)
    assert response.status_code == 200, response.text
    assert await pending(call) == []  # no prompt: the token was the approval


async def test_a_digest_computed_with_result_view_does_not_match(
    api: httpx2.AsyncClient, agent: str
) -> None:
    wrong = (
        "sha256:"
        + hashlib.sha256(jsonutil.canonical_json(rename("minted", result_view="full"))).hexdigest()
    )
    token = (await _mint(api, {"input_digest": wrong})).json()["approval"]["token"]
    response = await http_call(api, rename("minted", result_view="full"), token)
    assert response.status_code == 202
    assert response.json()["error"]["reason"] == "approval_token_mismatch"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_token_minted_from_an_input_with_either_view_approves_an_mcp_call(
    app: App, api: httpx2.AsyncClient, mode: str
) -> None:
    token = (await _mint(api, {"input": rename("via-mcp", result_view="compact")})).json()[
        "approval"
    ]["token"]
    async with Client(ProxyServer(app, scope=scope()).server, mode=mode) as client:
        result = await client.call_tool(
            RENAME,
            rename("via-mcp", result_view="full"),
            meta=token_meta(token),
        )
        assert not result.is_error, result
        again = await client.call_tool(
            RENAME,
            rename("via-mcp", result_view="full"),
            meta=token_meta(token),
        )
        assert error_of(again)["reason"] == "approval_token_replayed"


# --- "Approval grants preserve profile_archived" (compact) ---------------------------------


async def test_compact_approval_grants_preserve_profile_archived(
    app: App, call: Caller, agent: str
) -> None:
    waiting = await held(call, rename("p"))
    await answer(call, waiting.details["interaction_id"], "allow-always")
    with app.store.write() as writer:  # a grant made in a profile that is gone
        writer.put_approval_grant(
            ApprovalGrantRow(
                id="grant-gone-profile",
                workspace_id="ws_default",
                agent_name="general",
                tool_id=RENAME,
                input_digest=None,
                decision="allow",
                profile_id="prof_gone",
                source="answer",
                created_at="2026-01-01T00:00:00Z",
            )
        )
    compact = await call.structured("compozy__tool_approvals_list")
    full = await call.structured("compozy__tool_approvals_list", {"result_view": "full"})
    flags = {g["id"]: g["profile_archived"] for g in compact["grants"]}
    assert flags["grant-gone-profile"] is True
    assert list(flags.values()).count(False) == 1
    assert all("tool_input" not in g and "profile_id" not in g for g in compact["grants"])
    by_id = {g["id"]: g for g in full["grants"]}
    for grant in compact["grants"]:  # every compact field is in full, same path, same value
        assert {k: by_id[grant["id"]][k] for k in grant} == grant


# --- the same through compozy mcp serve's Host API tools ------------------------------------


async def test_host_tools_mint_a_token_and_answer_a_prompt(
    app: App, call: Caller, agent: str
) -> None:
    from compozy_mcp.host.server import HostServer

    host = LocalHost(app)
    async with Client(HostServer(host).server) as client:
        minted = await client.call_tool(
            "compozy_host__approval_mint",
            {"tool_id": RENAME, "session_id": AGENT, "input": rename("host", result_view="full")},
        )
        assert not minted.is_error, minted
        assert minted.structured_content is not None
        token = minted.structured_content["approval"]["token"]
        ran = await client.call_tool(
            "compozy_host__tool_invoke",
            {"tool_id": RENAME, "input": rename("host"), "session": AGENT, "approval_token": token},
        )
        assert not ran.is_error, ran
        waiting = await held(call, rename("host-2"))
        answered = await client.call_tool(
            "compozy_host__session_approve",
            {
                "session_id": AGENT,
                "interaction_id": waiting.details["interaction_id"],
                "decision": "allow-once",
            },
        )
        assert not answered.is_error, answered
    await call(RENAME, rename("host-2"), scope=scope())
