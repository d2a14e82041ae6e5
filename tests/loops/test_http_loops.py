"""Issue 15: the Loop resources of the HTTP API (``/api/loops``, ``/api/loop-runs``), in
process over ASGI; every answer is checked against the OpenAPI document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from tests.api.support import Contract
from tests.conftest import Caller
from tests.loops.support import SPEC_EXAMPLE_COMPACT, SPEC_MESSAGE, gate, graph, status_node

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App
from compozy_mcp.hostapi.local import LocalHost

pytestmark = pytest.mark.anyio

CONTRACT = Contract(document())


@pytest.fixture
async def http(app: App) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


async def _send(
    http: httpx2.AsyncClient, method: str, template: str, expect: int, **kw: Any
) -> Any:
    path = kw.pop("path", {})
    # the API app alone: the daemon mounts it at /api
    url = template.removeprefix("/api").format(**path)
    response = await http.request(method, url, **kw)
    body = CONTRACT.check(method, template, response)
    assert response.status_code == expect, body
    return body


async def test_validate_and_create_answer_the_spec_error(http: httpx2.AsyncClient) -> None:
    body = {"definition": SPEC_EXAMPLE_COMPACT}
    found = await _send(http, "POST", "/api/loops/validate", 200, json=body)
    assert [(i["code"], i["message"]) for i in found["items"]] == [
        ("result_view_field_requires_full", SPEC_MESSAGE)
    ]
    refused = await _send(http, "POST", "/api/loops", 400, json=body)
    assert (refused["error"]["code"], refused["error"]["reason"]) == (
        "tool_invalid_input",
        "loop_invalid",
    )


def _lint_finding(error: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    (item,) = error["details"]["items"]
    return item["code"], item["message"], item["node_id"], item["path"]


SPEC_FINDING = (
    "result_view_field_requires_full",
    SPEC_MESSAGE,
    "report",
    "params.prompt",
)


async def test_a_refused_create_over_http_carries_every_lint_item_with_a_redacted_message(
    http: httpx2.AsyncClient,
) -> None:
    """Spec, Errors: HTTP redacts the dispatch message, not the lint findings the author must
    read: the item, node, path and fix reach a remote client."""
    refused = await _send(
        http, "POST", "/api/loops", 400, json={"definition": SPEC_EXAMPLE_COMPACT}
    )
    error = refused["error"]
    assert error["message"] == "invalid tool request"
    assert "diagnostic" not in error
    assert _lint_finding(error) == SPEC_FINDING


@pytest.mark.parametrize("verb", ["create", "run"])
async def test_loop_create_and_run_invoked_over_http_carry_the_lint_items(
    http: httpx2.AsyncClient, verb: str
) -> None:
    tool_id = f"compozy__loop_{verb}"
    refused = await _send(
        http,
        "POST",
        f"/api/tools/{tool_id}/invoke",
        400,
        json={"input": {"definition": SPEC_EXAMPLE_COMPACT}},
    )
    error = refused["error"]
    assert (error["code"], error["reason"], error["message"]) == (
        "tool_invalid_input",
        "loop_invalid",
        "invalid tool request",
    )
    assert _lint_finding(error) == SPEC_FINDING


async def test_loops_and_runs_as_resources(http: httpx2.AsyncClient, call: Caller) -> None:
    sid = (await call.create())["id"]
    text = graph(status_node(view="full"), gate("review"), edges=(("inspect", "review"),))
    made = await _send(http, "POST", "/api/loops", 201, json={"definition": text, "loop_id": "l1"})
    assert made["loop"]["id"] == "l1"
    assert "source" in made["loop"]  # the full record
    listed = await _send(http, "GET", "/api/loops", 200)
    assert [loop["id"] for loop in listed["loops"]] == ["l1"]
    one = await _send(
        http, "GET", "/api/loops/{loop_id}", 200, path={"loop_id": "l1"}, params={"version": 1}
    )
    assert one["loop"]["version"] == 1
    await _send(http, "GET", "/api/loops/{loop_id}", 404, path={"loop_id": "nope"})
    started = await _send(
        http,
        "POST",
        "/api/loops/{loop_id}/runs",
        201,
        path={"loop_id": "l1"},
        json={"inputs": {"session_id": sid}, "wait": True},
    )
    run_id = started["run"]["run_id"]
    assert started["run"]["status"] == "waiting"
    assert "contracts" in started["run"]
    page = await _send(http, "GET", "/api/loop-runs", 200, params={"loop_id": "l1", "limit": 5})
    assert [r["run_id"] for r in page["runs"]] == [run_id]
    status = await _send(http, "GET", "/api/loop-runs/{run_id}", 200, path={"run_id": run_id})
    assert status["run"]["nodes"][1]["gate"]["criteria"][0]["prompt"] == "Is it right?"
    done = await _send(
        http,
        "POST",
        "/api/loop-runs/{run_id}/approve",
        200,
        path={"run_id": run_id},
        json={"decision": "approve", "wait": True},
    )
    assert done["run"]["status"] == "succeeded"
    conflict = await _send(
        http, "POST", "/api/loop-runs/{run_id}/cancel", 409, path={"run_id": run_id}
    )
    assert conflict["error"]["reason"] == "loop_run_ended"
    await _send(http, "GET", "/api/loop-runs/{run_id}", 404, path={"run_id": "run-nope"})


#: a tool node whose input is wrong only at run time (a number where a session id goes)
BAD_INPUT_AT_RUN_TIME = graph(status_node(view="full"))
BAD_INPUT_MESSAGE = 'tool "compozy__session_status" input "session_id" must be a string'


async def test_node_errors_over_http_are_redacted_like_every_dispatch_message(
    http: httpx2.AsyncClient, app: App
) -> None:
    """Spec, Errors: "CLI and HTTP/UDS errors retain the code and reason but redact the
    dispatch message"; a node's failed call is one of them. MCP keeps the dispatch message."""
    created = await _send(
        http, "POST", "/api/loops", 201, json={"definition": BAD_INPUT_AT_RUN_TIME}
    )
    loop_id = created["loop"]["id"]
    started = await _send(
        http,
        "POST",
        "/api/loops/{loop_id}/runs",
        201,
        path={"loop_id": loop_id},
        json={"inputs": {"session_id": 7}, "wait": True},
    )
    run_id = started["run"]["run_id"]
    shown = await _send(http, "GET", "/api/loop-runs/{run_id}", 200, path={"run_id": run_id})
    for run in (started["run"], shown["run"]):
        assert run["status"] == "failed"
        for error in (run["error"], run["nodes"][0]["error"]):
            assert (error["code"], error["reason"], error["message"]) == (
                "tool_invalid_input",
                "schema_invalid",
                "invalid tool request",
            )
            assert "redacted_as" not in error
    listed = await _send(http, "GET", "/api/loop-runs", 200, params={"loop_id": loop_id})
    assert listed["runs"][0]["nodes"][0]["error"]["message"] == "invalid tool request"
    invoked = await _send(
        http,
        "POST",
        "/api/tools/compozy__loop_status/invoke",
        200,
        json={"input": {"run_id": run_id}},
    )
    result = invoked["result"]
    assert result["structured"]["run"]["error"]["message"] == "invalid tool request"
    assert result["preview"] == f"{run_id} failed: invalid tool request"
    # MCP (and the dispatcher every surface calls) reports the dispatch message
    direct = await app.dispatcher.call("compozy__loop_status", {"run_id": run_id})
    error = direct.structured["run"]["nodes"][0]["error"]
    assert (error["message"], error["redacted_as"]) == (BAD_INPUT_MESSAGE, "invalid tool request")
