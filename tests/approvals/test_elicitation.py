"""Issue 14, item 2: over MCP, when the client announced elicitation support, the proxy asks
the person directly and goes on with the answer; without it the typed error stands."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from tests.approvals.support import AGENT, RENAME, agent_session, pending, scope
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.proxy.server import ProxyServer

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
SENT = {"session_id": AGENT, "name": "asked", "result_view": "full"}


class Person:
    """The person at the client: answers each question with ``action`` (and ``decision``)."""

    def __init__(self, action: str, decision: str | None = None) -> None:
        self.action = action
        self.decision = decision
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.questions.append(params)
        content = {"decision": self.decision} if self.decision else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


@pytest.fixture
async def agent(call: Caller) -> str:
    return await agent_session(call)


async def rename_asking(app: App, mode: str, person: Person | None) -> types.CallToolResult:
    server = ProxyServer(app, scope=scope()).server
    kwargs: dict[str, Any] = {"elicitation_callback": person} if person else {}
    async with Client(server, mode=mode, **kwargs) as client:
        return await client.call_tool(RENAME, SENT)


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_allow_once_runs_the_call(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    person = Person("accept", "allow-once")
    result = await rename_asking(app, mode, person)
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["session"]["name"] == "asked"
    assert "supervision" in result.structured_content["session"]  # the view it asked for
    [question] = person.questions
    assert isinstance(question, types.ElicitRequestFormParams)
    assert '"result_view":"full"' in question.message  # the input as sent, selector included
    schema = question.requested_schema["properties"]["decision"]
    assert schema["enum"] == ["allow-once", "allow-always", "reject-once", "reject-always"]
    assert await pending(call) == []


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_allow_always_remembers_a_grant(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    assert not (await rename_asking(app, mode, Person("accept", "allow-always"))).is_error
    assert not (await rename_asking(app, mode, None)).is_error  # remembered: no question
    listed = await call.structured("compozy__tool_approvals_list")
    assert [g["scope"] for g in listed["grants"]] == ["input"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_reject_once_refuses_the_call(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    result = await rename_asking(app, mode, Person("accept", "reject-once"))
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["error"]["reason"] == "approval_rejected"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_question_leaves_the_typed_error_and_the_prompt(
    app: App, call: Caller, agent: str, mode: str, action: str
) -> None:
    result = await rename_asking(app, mode, Person(action))
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["error"]["code"] == "tool_approval_required"
    assert len(await pending(call)) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_without_elicitation_the_typed_error_stands(
    app: App, call: Caller, agent: str, mode: str
) -> None:
    result = await rename_asking(app, mode, None)
    assert result.is_error
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert (error["code"], error["reason"]) == ("tool_approval_required", "approval_required")
    assert error["details"]["interaction_id"] == (await pending(call))[0]["interaction_id"]
