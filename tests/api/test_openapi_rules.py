"""The OpenAPI document says what the routes check, so that schemathesis (``make soak``) finds no
schema-valid request refused with 400 and no schema-invalid one accepted: the rules between a
tool's fields, path and query values, and the invoke envelope. Each case is an input
schemathesis found (issue 22, item 6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App
from compozy_mcp.hostapi.local import LocalHost

pytestmark = pytest.mark.anyio


def _valid(schema: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` is valid for ``schema``, a schema of the document ($refs resolved)."""
    doc = document()
    registry: Registry[Any] = Registry().with_resource(
        "", Resource.from_contents(doc, default_specification=DRAFT202012)
    )
    return Draft202012Validator(schema, registry=registry).is_valid(value)


def _invoke_input(tool_id: str) -> dict[str, Any]:
    operation = document()["paths"][f"/api/tools/{tool_id}/invoke"]["post"]
    input_schema: dict[str, Any] = operation["requestBody"]["content"]["application/json"][
        "schema"
    ]["properties"]["input"]
    return input_schema


def _parameter(path: str, method: str, name: str) -> dict[str, Any]:
    operation = document()["paths"][path][method]
    found: dict[str, Any] = next(p for p in operation["parameters"] if p.get("name") == name)
    schema: dict[str, Any] = found["schema"]
    return schema


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def test_every_required_list_of_the_document_names_each_field_once() -> None:
    # a tool whose session field is already required had it twice: schemathesis refuses the
    # operation ("non-unique elements") and tests none of its inputs
    repeated = [
        schema["required"]
        for schema in _walk(document())
        if isinstance(schema.get("required"), list)
        and len(schema["required"]) != len(set(schema["required"]))
    ]
    assert repeated == []


#: (tool, input the handler refuses with 400, a neighbour it takes)
BETWEEN_FIELDS = [
    ("compozy__loop_run", {}, {"loop_id": "a"}),
    (
        "compozy__hooks_create",
        {"event": "tool.pre_call"},
        {"event": "tool.pre_call", "command": "x"},
    ),
    (
        "compozy__hooks_create",
        {"event": "tool.pre_call", "command": "x", "headers": {"a": "b"}},
        {"event": "tool.pre_call", "url": "https://example.com/h", "headers": {"a": "b"}},
    ),
    (
        "compozy__tool_approvals_set",
        {"workspace_id": "ws_default", "profile_id": "prof_default"},
        {"tool_id": "compozy__session_status", "decision": "allow"},
    ),
    (
        "compozy__tool_approvals_set",
        {"session_id": "s", "permission_mode": "bypass", "tool_id": "t"},
        {"session_id": "s", "permission_mode": "bypass"},
    ),
    (
        "compozy__tool_approvals_set",
        {"tool_id": "compozy__session_status", "decision": "allow", "permission_mode": "default"},
        {"tool_id": "compozy__session_status", "decision": "allow", "profile_id": "p"},
    ),
    ("compozy__hooks_runs", {"cursor": "\u00e8"}, {"cursor": "r5"}),
    (
        "compozy__tool_approvals_set",
        {"tool_id": "compozy__session_status", "decision": "allow", "input": {}},
        {"tool_id": "compozy__session_status", "decision": "allow", "input": {}, "agent_name": "a"},
    ),
]


@pytest.mark.parametrize(("tool_id", "refused", "taken"), BETWEEN_FIELDS)
def test_a_rule_between_a_tools_fields_is_stated_in_its_invoke_schema(
    tool_id: str, refused: dict[str, Any], taken: dict[str, Any]
) -> None:
    schema = _invoke_input(tool_id)
    assert not _valid(schema, refused)
    assert _valid(schema, taken)


@pytest.fixture
async def http(app: App) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


@pytest.mark.parametrize(("tool_id", "refused", "taken"), BETWEEN_FIELDS)
async def test_the_input_a_rule_refuses_is_what_the_tool_refuses(
    http: httpx2.AsyncClient, tool_id: str, refused: dict[str, Any], taken: dict[str, Any]
) -> None:
    answer = await http.post(f"/tools/{tool_id}/invoke", json={"input": refused})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "tool_invalid_input"


def test_an_approval_is_minted_for_an_input_or_its_digest_never_neither() -> None:
    schema = document()["components"]["schemas"]["ApprovalMintRequest"]
    assert not _valid(schema, {"session_id": "0"})
    assert _valid(schema, {"session_id": "0", "input": {}})
    assert _valid(schema, {"session_id": "0", "input_digest": "sha256:" + "0" * 64})


async def test_an_approval_mint_with_neither_input_nor_digest_is_a_400(
    http: httpx2.AsyncClient,
) -> None:
    made = await http.post("/sessions", json={"agent_name": "a"})
    session_id = made.json()["session"]["id"]
    answer = await http.post(
        "/tools/compozy__session_status/approvals", json={"session_id": session_id}
    )
    assert answer.status_code == 400, answer.text


async def test_a_loop_id_path_value_is_held_to_the_loop_id_pattern(
    http: httpx2.AsyncClient,
) -> None:
    schema = _parameter("/api/loops/{loop_id}", "get", "loop_id")
    assert not _valid(schema, "0")
    assert _valid(schema, "a0")
    assert (await http.get("/loops/0")).status_code == 400
    assert (await http.get("/loops/a0")).status_code == 404


async def test_a_task_state_filter_names_known_states_and_one_named_twice_filters_as_once(
    http: httpx2.AsyncClient,
) -> None:
    schema = _parameter("/api/tasks", "get", "state")
    for refused in ("", ",", "open", "done;todo"):
        assert not _valid(schema, refused), refused
        assert (await http.get("/tasks", params={"state": refused})).status_code == 400
    for taken in ("done", "todo,done", "done,done", ",done,"):
        assert _valid(schema, taken), taken
        answer = await http.get("/tasks", params={"state": taken})
        assert answer.status_code == 200, (taken, answer.text)


@pytest.mark.parametrize("token", [None, 5, ["t"]])
async def test_an_approval_token_that_is_not_a_string_is_a_400(
    http: httpx2.AsyncClient, token: Any
) -> None:
    answer = await http.post(
        "/tools/compozy__tool_list/invoke", json={"input": {}, "approval_token": token}
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "invalid_request"


async def test_an_events_until_other_than_turn_end_is_a_400_as_a_page_and_as_a_stream(
    http: httpx2.AsyncClient,
) -> None:
    schema = _parameter("/api/sessions/{session_id}/events", "get", "until")
    assert not _valid(schema, "0")
    made = await http.post("/sessions", json={"agent_name": "a"})
    events = f"/sessions/{made.json()['session']['id']}/events"
    for accept in ("application/json", "text/event-stream"):
        answer = await http.get(events, params={"until": "0"}, headers={"Accept": accept})
        assert answer.status_code == 400, (accept, answer.text)
    assert (await http.get(events, params={"until": "turn_end"})).status_code == 200


async def test_a_json_null_body_is_not_an_object_where_a_body_may_be_left_out(
    http: httpx2.AsyncClient,
) -> None:
    made = await http.post("/sessions", json={"agent_name": "a"})
    merge = f"/sessions/{made.json()['session']['id']}/merge"
    headers = {"Content-Type": "application/json"}
    refused = await http.post(merge, content=b"null", headers=headers)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["reason"] == "body_not_object"
    # left out, the body is {} and the merge goes on to what it needs (no worktree here)
    left_out = await http.post(merge, content=b"", headers=headers)
    assert left_out.status_code == 422, left_out.text


async def test_a_history_or_events_cursor_is_an_integer_the_store_can_hold(
    http: httpx2.AsyncClient,
) -> None:
    made = await http.post("/sessions", json={"agent_name": "a"})
    session = f"/sessions/{made.json()['session']['id']}"
    for page in ("history", "events"):
        schema = _parameter(f"/api/sessions/{{session_id}}/{page}", "get", "cursor")
        assert not _valid(schema, 32589158477190044731)
        assert _valid(schema, 2**63 - 1)
        answer = await http.get(f"{session}/{page}", params={"cursor": str(2**63 - 1)})
        assert answer.status_code == 200, (page, answer.text)


async def test_a_loop_version_is_an_integer_the_store_can_hold(http: httpx2.AsyncClient) -> None:
    schema = _parameter("/api/loops/{loop_id}", "get", "version")
    assert not _valid(schema, 69709028944320034504704)
    assert _valid(schema, 2**63 - 1)
    answer = await http.get("/loops/a0", params={"version": str(2**63 - 1)})
    assert answer.status_code == 404, answer.text


@pytest.mark.parametrize(
    ("refused", "taken"),
    [
        ({"decision": "request_changes"}, {"decision": "accept"}),
        (
            {"decision": "request_changes", "comments": " "},
            {"decision": "request_changes", "comments": "rename it"},
        ),
    ],
)
def test_changes_requested_in_a_review_say_what_to_change_in_the_document(
    refused: dict[str, Any], taken: dict[str, Any]
) -> None:
    # the tool refuses them once it found the run in review (sessions/tasks.py review_submit)
    invoke = _invoke_input("compozy__task_run_review_submit")
    assert not _valid(invoke, {"task_id": "task-x", **refused})
    assert _valid(invoke, {"task_id": "task-x", **taken})
    route = document()["components"]["schemas"]["ReviewTaskRequest"]  # the id is in the path
    assert not _valid(route, refused)
    assert _valid(route, taken)


async def test_a_provider_that_learns_its_efforts_from_its_agent_takes_any_in_the_document(
    http: httpx2.AsyncClient,
) -> None:
    # schemathesis's input: the document held gemini's effort to an empty list (it states
    # none: its agent announces them), so the create it took was "schema-invalid accepted"
    body = {
        "agent_name": "xC",
        "worktree": False,
        "reasoning_effort": "\u00db\uda6d\uddbd2\u0086b\u00f7\udb55\udfebu\u00bd",
        "provider": "gemini",
    }
    schema = document()["components"]["schemas"]["SessionCreateRequest"]
    assert _valid(schema, body)
    sent = json.dumps(body)  # its escapes as schemathesis sent them (a surrogate pair among them)
    answer = await http.post(
        "/sessions", content=sent, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 201, answer.text
    # a provider that states its efforts is held to them in the document, as by the tool
    echo = {"agent_name": "general", "provider": "echo", "reasoning_effort": "ludicrous"}
    assert not _valid(schema, echo)
    refused = await http.post("/sessions", json=echo)
    assert refused.status_code in (400, 422), refused.text
