"""Inputs that used to reach a traceback (issue 11, item 5) end in a typed input error on every
surface: the dispatcher (and so MCP), the HTTP API and the CLI."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.clirun import run_cli
from tests.conftest import Caller

from compozy_mcp import jsonutil
from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App
from compozy_mcp.errors import ResourceNotFound, ToolInvalidInput, ToolNotFound
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import HANDLERS, LocalHost

pytestmark = pytest.mark.anyio

INT64_MAX = 2**63 - 1
SESSION = "sess-hostile"


@pytest.fixture
async def api(app: App, call: Caller) -> AsyncIterator[httpx2.AsyncClient]:
    await call.create(session_id=SESSION)
    transport = httpx2.ASGITransport(app=api_app(LocalHost(app), document))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


async def _invalid(call: Caller, tool_id: str, tool_input: dict[str, Any]) -> ToolInvalidInput:
    with pytest.raises(ToolInvalidInput) as caught:
        await call(tool_id, tool_input)
    assert caught.value.code == "tool_invalid_input"
    return caught.value


# --- integers outside the signed 64-bit range -------------------------------------------------


@pytest.mark.parametrize("value", [2**63, 2**64, -(2**63) - 1])
async def test_an_integer_outside_64_bits_is_a_schema_error(call: Caller, value: int) -> None:
    await call.create(session_id=SESSION)
    error = await _invalid(
        call,
        "compozy__session_runtime_set",
        {"session_id": SESSION, "provider": "claude", "selection_revision": value, "generation": 0},
    )
    assert error.field == "selection_revision"
    assert "must be at" in error.message


async def test_the_http_api_refuses_2_to_the_64_as_a_typed_400(api: httpx2.AsyncClient) -> None:
    body = (
        b'{"input":{"session_id":"' + SESSION.encode() + b'","provider":"claude",'
        b'"selection_revision":18446744073709551616,"generation":0}}'
    )
    response = await api.post(
        "/tools/compozy__session_runtime_set/invoke",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "tool_invalid_input"


def test_the_cli_refuses_2_to_the_64_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    env = {"COMPOZY_HOME": str(tmp_path / "home"), "COMPOZY_WORKSPACE": str(tmp_path)}
    tool_input = (
        '{"session_id":"s","provider":"claude",'
        '"selection_revision":18446744073709551616,"generation":0}'
    )
    done = run_cli(
        "tool",
        "invoke",
        "compozy__session_runtime_set",
        "--input",
        tool_input,
        "-o",
        "json",
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stdout + done.stderr


# --- cursors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cursor",
    ["czo5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OQ", "s" + "9" * 19, "s-1", "t5", "", "s1.5"],
)
async def test_a_cursor_that_is_not_one_is_refused_and_a_huge_one_never_reaches_the_store(
    call: Caller, api: httpx2.AsyncClient, cursor: str
) -> None:
    error = await _invalid(call, "compozy__session_list", {"cursor": cursor})
    assert (
        error.message
        == 'tool "compozy__session_list" input "cursor" is not a cursor this tool returned'
    )
    response = await api.get("/sessions", params={"cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "tool_invalid_input"


async def test_the_largest_well_formed_cursor_is_a_page_not_an_error(call: Caller) -> None:
    page = await call.structured("compozy__session_list", {"cursor": "s" + "9" * 18})
    assert "sessions" in page


# --- integral floats: one rule, the JSON Schema one ----------------------------------------


@pytest.mark.parametrize(
    ("tool_id", "extra", "listed"),
    [
        ("compozy__session_list", {}, "sessions"),
        ("compozy__skill_search", {"query": "x"}, "skills"),
        ("compozy__tool_search", {"query": "session"}, "tools"),
        ("compozy__tool_list", {}, "tools"),
    ],
)
async def test_an_integral_float_is_an_integer_and_the_handler_gets_an_int(
    call: Caller, tool_id: str, extra: dict[str, Any], listed: str
) -> None:
    """``{"limit": 1.0}`` used to pass the schema and fail in the handler (TypeError): JSON
    Schema calls 1.0 an integer, so every surface takes it as 1."""
    await call.create()
    await call.create()
    result = await call.structured(tool_id, {**extra, "limit": 1.0})
    assert len(result[listed]) <= 1
    error = await _invalid(call, tool_id, {**extra, "limit": 1.5})
    assert error.message == f'tool "{tool_id}" input "limit" must be an integer'


async def test_an_integral_float_past_64_bits_is_still_out_of_range(call: Caller) -> None:
    error = await _invalid(call, "compozy__session_list", {"limit": 1e30})
    assert error.message.endswith('input "limit" must be at most 200')


# --- lone surrogates ----------------------------------------------------------------------------


async def test_a_lone_surrogate_is_invalid_input_naming_its_field(call: Caller) -> None:
    error = await _invalid(call, "compozy__session_status", {"session_id": "\ud800"})
    assert error.field == "session_id"
    assert error.message.endswith("must be Unicode text without lone surrogates")


async def test_the_http_api_refuses_a_lone_surrogate_as_a_typed_400(
    api: httpx2.AsyncClient,
) -> None:
    response = await api.post(
        "/tools/compozy__session_status/invoke",
        content=b'{"input":{"session_id":"\\ud800"}}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "tool_invalid_input"


async def test_an_unknown_tool_named_with_a_surrogate_still_gets_its_error(call: Caller) -> None:
    with pytest.raises(ToolNotFound) as caught:
        await call("compozy__\ud800", {})
    assert "\ud800" not in str(caught.value)


async def test_nan_and_infinity_are_not_json(api: httpx2.AsyncClient) -> None:
    for text in (b'{"input":{"limit":NaN}}', b'{"input":{"limit":Infinity}}'):
        response = await api.post(
            "/tools/compozy__session_list/invoke",
            content=text,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 400
        assert response.json()["error"]["reason"] == "body_not_json"


#: valid JSON no tool can take (issue 22: each was refused as "not JSON"), as a client wrote it
HUGE_NUMBERS = [b"1" + b"0" * 5000, b"1e400", b"-1e400"]
HUGE_NUMBER_PROBLEM = "must be a number of at most 4300 digits, within a double's range (±1.8e308)"


@pytest.mark.parametrize("number", HUGE_NUMBERS, ids=["5001-digits", "1e400", "-1e400"])
async def test_a_5001_digit_integer_or_1e400_is_json_and_invalid_input_naming_its_field(
    call: Caller, api: httpx2.AsyncClient, number: bytes
) -> None:
    body = b'{"input":{"limit":' + number + b"}}"
    response = await api.post(
        "/tools/compozy__session_list/invoke",
        content=body,
        headers={"Content-Type": "application/json", "X-Compozy-Diagnostic": "1"},
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["reason"]) == ("tool_invalid_input", "schema_invalid")
    tool_input = jsonutil.loads_request(body)["input"]
    invalid = await _invalid(call, "compozy__session_list", tool_input)
    assert invalid.field == "limit"
    assert invalid.message == f'tool "compozy__session_list" input "limit" {HUGE_NUMBER_PROBLEM}'


async def test_an_object_where_a_list_of_strings_is_wanted_is_invalid_input(call: Caller) -> None:
    """Found by schemathesis: ``"workspace_paths": [{}]`` reached a set() of dicts (HTTP 500)."""
    parent = (await call.create())["id"]
    error = await _invalid(
        call,
        "compozy__session_spawn",
        {"parent_session_id": parent, "agent_name": "w", "ttl_seconds": 1, "workspace_paths": [{}]},
    )
    assert error.field == "workspace_paths[0]"


async def test_an_empty_parent_session_id_is_a_session_that_does_not_exist(call: Caller) -> None:
    with pytest.raises(ResourceNotFound):
        await call(
            "compozy__session_spawn", {"parent_session_id": "", "agent_name": "w", "ttl_seconds": 1}
        )


# --- issue 22, item 5: the medium and low findings, each with its exact input ---------------


async def test_session_wait_on_a_session_with_no_turns_is_a_typed_404_not_a_500(
    api: httpx2.AsyncClient,
) -> None:
    """The one 5xx in 15,706 fuzzed calls: ``session_wait`` with no turn to wait for."""
    response = await api.post(
        "/tools/compozy__session_wait/invoke", json={"input": {"session_id": SESSION}}
    )
    assert response.status_code == 404, response.text
    error = response.json()["error"]
    assert (error["code"], error["reason"]) == ("not_found", "turn_not_found")
    assert error["message"] == (
        f'session "{SESSION}" has no turns yet: send one with compozy__session_prompt'
    )


async def test_proc_1_root_as_a_workspace_is_a_typed_answer_never_a_500(
    api: httpx2.AsyncClient,
) -> None:
    """``/proc/1/root`` is a directory the daemon may not look into (a container, another
    user's root): that is the caller's to hear, not an internal error."""
    response = await api.post("/workspaces", json={"path": "/proc/1/root"})
    readable = os.access("/proc/1/root", os.R_OK | os.X_OK)
    if readable:  # the daemon may look into it: it is a directory like any other
        assert response.status_code == 201, response.text
        return
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["reason"]) == ("invalid_request", "path_not_directory")
    assert error["message"].startswith("/proc/1/root cannot be read by the daemon (")


async def test_an_unexpected_failure_answers_500_with_the_error_id_its_log_line_carries(
    app: App, api: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setitem(HANDLERS, ops.LIST_WORKSPACES.name, broken)
    with caplog.at_level(logging.ERROR, logger="compozy_mcp.api.routes"):
        response = await api.get("/workspaces")
    assert response.status_code == 500
    error = response.json()["error"]
    error_id = error["details"]["error_id"]
    assert error["code"] == "internal_error"
    assert error["message"] == f"internal error {error_id}; see the daemon's log"
    [record] = [r for r in caplog.records if error_id in r.getMessage()]
    assert record.exc_info is not None


# --- /mcp: valid JSON the MCP SDK cannot read -----------------------------------------------


@pytest.fixture
async def mcp_endpoint(app: App) -> AsyncIterator[httpx2.AsyncClient]:
    from compozy_mcp.proxy.server import ProxyServer
    from compozy_mcp.proxy.transports import http_app

    served = http_app(ProxyServer(app).server, app.settings)
    transport = httpx2.ASGITransport(app=served)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8") as client:
        yield client


def _mcp_call(ident: bytes, arguments: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":' + ident + b',"method":"tools/call","params":{"name":'
        b'"compozy__session_list","arguments":' + arguments + b"}}"
    )


@pytest.mark.parametrize(
    ("arguments", "field", "problem"),
    [
        (b'{"cursor":"\\ud800"}', "cursor", "must be Unicode text without lone surrogates"),
        (b'{"limit":1' + b"0" * 5000 + b"}", "limit", HUGE_NUMBER_PROBLEM),
        (b'{"limit":1e400}', "limit", HUGE_NUMBER_PROBLEM),
    ],
    ids=["lone-surrogate", "5001-digits", "1e400"],
)
async def test_mcp_over_http_answers_valid_json_no_tool_takes_as_invalid_params_not_parse_error(
    mcp_endpoint: httpx2.AsyncClient, arguments: bytes, field: str, problem: str
) -> None:
    response = await mcp_endpoint.post(
        "/mcp",
        content=_mcp_call(b"7", arguments),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32602, "message": f"params.arguments.{field} {problem}"},
    }


async def test_mcp_over_http_answers_a_lone_surrogate_id_as_invalid_request_with_id_null(
    mcp_endpoint: httpx2.AsyncClient,
) -> None:
    response = await mcp_endpoint.post(
        "/mcp",
        content=_mcp_call(b'"\\ud800"', b"{}"),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request"},
    }
