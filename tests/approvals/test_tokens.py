"""Issue 14, item 4: one-shot approval tokens. 32 random bytes, only the hash stored, single
use, 120 s by default, bound to tool, session, workspace, agent and input digest; typed errors
for missing, expired, mismatched and replayed tokens (upstream's reasons)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from tests import pg
from tests.approvals.support import AGENT, RENAME, agent_session, pending, scope
from tests.conftest import Caller

from compozy_mcp.approvals._digest import input_digest
from compozy_mcp.assembly import App
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import FixedClock
from compozy_mcp.errors import (
    InvalidRequest,
    ResourceNotFound,
    ToolApprovalRequired,
    ToolDenied,
    ToolInvalidInput,
)
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost

#: on each engine (PostgreSQL in the postgres tier)
pytestmark = [pytest.mark.anyio, pg.on_both_engines]


def rename(name: str, **extra: Any) -> dict[str, Any]:
    return {"session_id": AGENT, "name": name, **extra}


async def mint(app: App, tool_id: str = RENAME, **fields: Any) -> dict[str, Any]:
    fields.setdefault("session_id", AGENT)
    minted = await LocalHost(app).call(ops.MINT_APPROVAL, {**fields, "tool_id": tool_id})
    return minted["approval"]


async def refused(call: Caller, tool_input: dict[str, Any], token: str, **kw: Any) -> str:
    with pytest.raises(ToolApprovalRequired) as caught:
        await call.app.dispatcher.call(
            RENAME, tool_input, scope=scope(kw.get("session", AGENT)), approval_token=token
        )
    assert caught.value.details["reason_codes"] == [caught.value.reason, "approval_required"]
    return str(caught.value.reason)


@pytest.fixture
async def agent(call: Caller) -> str:
    return await agent_session(call)


async def test_a_token_is_32_random_bytes_and_only_its_hash_is_stored(app: App, agent: str) -> None:
    approval = await mint(app, input=rename("t"))
    token = approval["token"]
    # a prefix that says what it is, and that no command line takes for an option
    assert token.startswith("czat_")
    assert len(base64.urlsafe_b64decode(token.removeprefix("czat_") + "=")) == 32
    with app.store.read() as reader:
        stored = reader.approval_token(hashlib.sha256(token.encode()).hexdigest())
        assert stored is not None
        assert token not in repr(stored)
    assert approval["input_digest"] == input_digest(rename("t"))
    assert (approval["workspace_id"], approval["agent_name"]) == ("ws_default", "general")


async def test_a_token_lets_exactly_one_call_run(app: App, call: Caller, agent: str) -> None:
    token = (await mint(app, input=rename("once")))["token"]
    await app.dispatcher.call(RENAME, rename("once"), scope=scope(), approval_token=token)
    assert await refused(call, rename("once"), token) == "approval_token_replayed"
    assert await pending(call) == []


async def test_a_token_expires_after_120_seconds_by_default(
    app: App, call: Caller, clock: FixedClock, agent: str
) -> None:
    approval = await mint(app, input=rename("late"))
    assert approval["expires_at"] == "2026-11-10T14:04:11Z"  # START + 120 s
    clock.advance(120)
    assert await refused(call, rename("late"), approval["token"]) == "approval_token_expired"


async def test_a_token_with_a_shorter_ttl(
    app: App, call: Caller, clock: FixedClock, agent: str
) -> None:
    approval = await mint(app, input=rename("soon"), ttl_seconds=5)
    clock.advance(5)
    assert await refused(call, rename("soon"), approval["token"]) == "approval_token_expired"


async def test_an_unknown_token_is_missing(call: Caller, agent: str) -> None:
    assert await refused(call, rename("x"), "not-a-token") == "approval_token_missing"


@pytest.mark.parametrize("what", ["input", "tool", "session"])
async def test_a_token_is_bound_to_tool_session_and_input(
    app: App, call: Caller, agent: str, what: str
) -> None:
    other = await agent_session(call, "sess-other")
    token = (await mint(app, input=rename("bound")))["token"]
    if what == "input":
        reason = await refused(call, rename("another"), token)
    elif what == "session":
        reason = await refused(call, {"session_id": other, "name": "bound"}, token, session=other)
    else:
        with pytest.raises(ToolApprovalRequired) as caught:
            await app.dispatcher.call(
                "compozy__session_archive",
                {"session_id": AGENT},
                scope=scope(),
                approval_token=token,
            )
        reason = str(caught.value.reason)
    assert reason == "approval_token_mismatch"


async def test_a_token_sent_where_no_approval_is_needed_is_not_used(
    app: App, call: Caller, agent: str
) -> None:
    token = (await mint(app, input=rename("kept")))["token"]
    await call.app.dispatcher.call(RENAME, rename("kept"), approval_token=token)  # operator
    await app.dispatcher.call(RENAME, rename("kept"), scope=scope(), approval_token=token)


async def test_mint_takes_an_input_or_its_digest_and_they_must_agree(app: App, agent: str) -> None:
    with pytest.raises(ToolInvalidInput) as caught:
        await mint(app)
    assert "input_digest" in caught.value.message
    with pytest.raises(ToolInvalidInput) as caught:
        await mint(app, input=rename("a"), input_digest=input_digest(rename("b")))
    assert caught.value.field == "input_digest"
    with pytest.raises(InvalidRequest) as bad:
        await mint(app, input_digest="sha256:nothex")
    assert bad.value.code == "invalid_request"
    agreed = await mint(
        app, input=rename("a", result_view="full"), input_digest=input_digest(rename("a"))
    )
    assert agreed["input_digest"] == input_digest(rename("a"))


async def test_mint_names_a_tool_and_a_session_that_exist(app: App, agent: str) -> None:
    with pytest.raises(ResourceNotFound):
        await mint(app, "compozy__nope", input={})
    with pytest.raises(ResourceNotFound):
        await mint(app, input={}, session_id="sess-nobody")


async def test_only_the_operator_mints(app: App, agent: str) -> None:
    with pytest.raises(ToolDenied) as caught:
        await LocalHost(app).call(
            ops.MINT_APPROVAL,
            {"tool_id": RENAME, "session_id": AGENT, "input": {}},
            session=AGENT,
        )
    assert (caught.value.code, caught.value.reason) == (
        "tool_denied",
        "operator_only",
    )


async def test_the_service_mints_for_the_default_ttl(app: App, agent: str) -> None:
    minted = await app.approvals.mint(CallInfo(RENAME), RENAME, {"session_id": AGENT, "input": {}})
    assert minted["approval"]["expires_at"] == "2026-11-10T14:04:11Z"


async def test_upkeep_sweeps_expired_tokens_and_deleting_a_session_takes_its_own(
    app: App, call: Caller, clock: FixedClock, agent: str
) -> None:
    old = await mint(app, input=rename("old"))
    clock.advance(121)
    fresh = await mint(app, input=rename("fresh"))
    app.upkeep.run()
    assert await refused(call, rename("old"), old["token"]) == "approval_token_missing"
    await call("compozy__session_archive", {"session_id": AGENT})
    await call("compozy__session_delete", {"session_id": AGENT})
    with app.store.read() as reader:
        assert reader.approval_token(hashlib.sha256(fresh["token"].encode()).hexdigest()) is None
