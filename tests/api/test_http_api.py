"""The HTTP API of ``compozy serve``, driven over TCP and the Unix socket with httpx2.

One daemon (``--port 0`` and a socket) serves the whole module. Every response goes through a
:class:`ContractClient`, so each call also proves its body matches the OpenAPI document the
daemon serves (``GET /api/openapi.json``).
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.api.support import (
    Contract,
    ContractClient,
    Daemon,
    Home,
    compozy_process,
    running_daemon,
    short_dir,
)

from compozy_mcp.native import build_registry

pytestmark = pytest.mark.process

REDACTED_INPUT = "invalid tool request"
REDACTED_DENIAL = "tool invocation denied"
INVOKE = "/api/tools/{tool_id}/invoke"
SESSION = "/api/sessions/{session_id}"
STATUS = "compozy__session_status"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home.make(tmp_path_factory.mktemp("api"))


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as running,
    ):
        yield running


@pytest.fixture(scope="module")
def contract(daemon: Daemon) -> Contract:
    with daemon.client() as client:
        response = client.get("/api/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return Contract(document)


@pytest.fixture(scope="module")
def api(daemon: Daemon, contract: Contract) -> Iterator[ContractClient]:
    with daemon.client() as client:
        yield ContractClient(client, contract)


@pytest.fixture(scope="module")
def over_socket(daemon: Daemon, contract: Contract) -> Iterator[ContractClient]:
    with daemon.socket_client() as client:
        yield ContractClient(client, contract)


_counter = iter(range(1_000_000))


def create(api: ContractClient, **fields: Any) -> dict[str, Any]:
    fields.setdefault("agent_name", "general")
    _, body = api.post("/api/sessions", json=fields, expect=201)
    session: dict[str, Any] = body["session"]
    return session


def invoke(
    api: ContractClient, tool_id: str, tool_input: Any, *, expect: int = 200, **kw: Any
) -> Any:
    _, body = api.post(INVOKE, tool_id=tool_id, json={"input": tool_input}, expect=expect, **kw)
    return body


def full_status(api: ContractClient, session_id: str) -> dict[str, Any]:
    body = invoke(api, STATUS, {"session_id": session_id, "result_view": "full"})
    session: dict[str, Any] = body["result"]["structured"]["session"]
    return session


# --- listeners ------------------------------------------------------------------------------


def test_port_0_prints_the_port_it_bound_and_serves_there(daemon: Daemon) -> None:
    assert daemon.url is not None
    port = int(daemon.url.rsplit(":", 1)[1])
    assert port != 0
    assert daemon.url == f"http://127.0.0.1:{port}"
    with daemon.client() as client:
        assert client.get("/api/tools").status_code == 200


def test_socket_file_is_mode_0600(daemon: Daemon) -> None:
    assert daemon.socket is not None
    mode = daemon.socket.stat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600


def test_tcp_and_socket_serve_the_same_store(
    api: ContractClient, over_socket: ContractClient
) -> None:
    made = create(api, name="made over TCP")
    _, body = over_socket.get(SESSION, session_id=made["id"], expect=200)
    assert body["session"] == made


def test_a_second_daemon_on_the_same_socket_is_refused(home: Home, daemon: Daemon) -> None:
    assert daemon.socket is not None
    done = compozy_process(home, "serve", "--no-tcp", "--uds", str(daemon.socket), timeout=30)
    assert done.returncode == 6
    assert "another process is serving on" in done.stderr
    assert "Traceback" not in done.stderr
    with daemon.socket_client() as client:  # the first daemon still owns its socket
        assert client.get("/api/tools").status_code == 200


# --- tool routes ----------------------------------------------------------------------------


def test_tool_list_returns_tool_descriptor_payloads_keyed_by_tool_id(api: ContractClient) -> None:
    _, body = api.get("/api/tools", expect=200)
    tools = {tool["tool_id"]: tool for tool in body["tools"]}
    assert list(tools) == [tool.id for tool in build_registry()]
    assert all("id" not in tool for tool in body["tools"])
    viewed = tools[STATUS]
    assert sorted(viewed["output_views"]) == ["compact", "full"]
    assert viewed["output_schema"] == viewed["output_views"]["compact"]["schema"]
    assert viewed["output_schema_digest"] == viewed["output_views"]["compact"]["digest"]
    assert viewed["output_views"]["full"]["digest"] != viewed["output_schema_digest"]
    single = tools["compozy__skill_view"]
    assert "output_views" not in single
    assert {"tool_id", "description", "input_schema", "output_schema", "output_schema_digest"} <= (
        set(single)
    )


def test_tool_info_route_is_the_tool_info_descriptor_with_tool_id_for_id(
    api: ContractClient,
) -> None:
    _, body = api.get("/api/tools/{tool_id}", tool_id=STATUS, expect=200)
    native = invoke(api, "compozy__tool_info", {"tool_id": STATUS})
    descriptor = dict(native["result"]["structured"]["tool"]["descriptor"])
    descriptor["tool_id"] = descriptor.pop("id")
    assert body["tool"] == descriptor


def test_tool_info_of_an_unknown_tool_is_a_404_tool_not_found(api: ContractClient) -> None:
    _, body = api.get("/api/tools/{tool_id}", tool_id="compozy__nope", expect=404)
    assert body["error"]["code"] == "tool_not_found"
    assert body["error"]["tool_id"] == "compozy__nope"


def test_tool_search_returns_descriptors_best_match_first(api: ContractClient) -> None:
    _, body = api.get("/api/tools/search", params={"q": "session status"}, expect=200)
    assert body["query"] == "session status"
    assert body["tools"][0]["tool_id"] == STATUS
    _, limited = api.get("/api/tools/search", params={"q": "session", "limit": 2}, expect=200)
    assert len(limited["tools"]) == 2


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({}, id="no-q"),
        pytest.param({"q": ""}, id="empty-q"),
        pytest.param({"q": "x", "limit": "many"}, id="limit-not-a-number"),
        pytest.param({"q": "x", "limit": "0"}, id="limit-below-1"),
    ],
)
def test_tool_search_with_bad_parameters_is_a_400(
    api: ContractClient, params: dict[str, str]
) -> None:
    _, body = api.get("/api/tools/search", params=params, expect=400)
    assert body["error"] == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": REDACTED_INPUT,
        "tool_id": "compozy__tool_search",
    }


# --- invoke ---------------------------------------------------------------------------------


def test_invoke_is_compact_by_default_and_full_with_the_selector_inside_input(
    api: ContractClient,
) -> None:
    made = create(api)
    compact = invoke(api, STATUS, {"session_id": made["id"]})
    assert list(compact) == ["result"]
    assert set(compact["result"]) == {"structured", "preview"}
    assert compact["result"]["preview"].startswith(made["id"])
    session = compact["result"]["structured"]["session"]
    assert "permission_policy" not in session["lineage"]
    assert "supervision" not in session
    full = full_status(api, made["id"])
    assert full["lineage"]["permission_policy"]["tools"] == ["*"]
    assert "supervision" in full


def _stale_fence(api: ContractClient) -> tuple[str, dict[str, Any]]:
    made = create(api)
    revision = made["runtime"]["selection_revision"]
    return "compozy__session_runtime_set", {
        "session_id": made["id"],
        "provider": "claude",
        "selection_revision": revision + 5,
        "generation": 0,
    }


INVOKE_ERRORS = [
    pytest.param(
        "compozy__nope", {}, 404, ("tool_not_found", "tool_unknown"), None, id="unknown-tool"
    ),
    pytest.param(
        STATUS,
        {"session_id": "sess-x", "result_view": "huge"},
        400,
        ("tool_invalid_input", "schema_invalid"),
        REDACTED_INPUT,
        id="unknown-result-view",
    ),
    pytest.param(
        "compozy__skill_view",
        {"name": "x", "result_view": "full"},
        400,
        ("tool_invalid_input", "schema_invalid"),
        REDACTED_INPUT,
        id="selector-on-a-single-result-tool",
    ),
    pytest.param(
        STATUS,
        {"session_id": "sess-nope"},
        404,
        ("not_found", "session_not_found"),
        'session "sess-nope" does not exist',
        id="unknown-session",
    ),
    pytest.param(
        "compozy__session_create",
        {"agent_name": "general", "provider": "echo", "model": "gpt-1"},
        422,
        ("model_not_found", "model_unknown"),
        None,
        id="unknown-model",
    ),
    pytest.param(
        "compozy__session_create",
        {"agent_name": "general", "provider": "nope"},
        422,  # agents.yaml may define more agents: the schema takes any name, the tool checks
        ("model_not_found", "provider_unknown"),
        None,
        id="unknown-provider",
    ),
    pytest.param(
        "compozy__session_create",
        {"agent_name": "general", "provider": "echo", "reasoning_effort": "ludicrous"},
        422,
        ("reasoning_effort_unsupported", "reasoning_effort_unsupported"),
        None,
        id="unsupported-reasoning-effort",
    ),
]


@pytest.mark.parametrize(
    ("tool_id", "tool_input", "status", "code_reason", "message"), INVOKE_ERRORS
)
def test_invoke_errors_keep_code_and_reason_with_the_spec_redaction_and_a_fitting_status(
    api: ContractClient,
    tool_id: str,
    tool_input: dict[str, Any],
    status: int,
    code_reason: tuple[str, str],
    message: str | None,
) -> None:
    body = invoke(api, tool_id, tool_input, expect=status)
    error = body["error"]
    assert (error["code"], error["reason"]) == code_reason
    assert error["tool_id"] == tool_id
    if message is not None:
        assert error["message"] == message


def test_stale_fence_is_a_409_with_its_details_and_changes_nothing(api: ContractClient) -> None:
    tool_id, tool_input = _stale_fence(api)
    before = full_status(api, tool_input["session_id"])
    body = invoke(api, tool_id, tool_input, expect=409)
    assert (body["error"]["code"], body["error"]["reason"]) == ("tool_conflict", "stale_fence")
    assert body["error"]["details"]["fence"] == "selection_revision"
    assert full_status(api, tool_input["session_id"]) == before


def test_invoke_as_a_session_applies_its_permission_policy(api: ContractClient) -> None:
    parent = create(api)
    spawn = {
        "parent_session_id": parent["id"],
        "agent_name": "general",
        "ttl_seconds": 600,
        "tools": [STATUS],
    }
    child = invoke(api, "compozy__session_spawn", spawn)["result"]["structured"]["session_id"]
    scope = {"X-Compozy-Session": child}

    denied = invoke(api, "compozy__tool_list", {}, expect=403, headers=scope)
    assert denied["error"] == {
        "code": "tool_denied",
        "reason": "permission_denied",
        "message": REDACTED_DENIAL,
        "tool_id": "compozy__tool_list",
    }
    allowed = invoke(api, STATUS, {"session_id": child}, headers=scope)
    assert allowed["result"]["structured"]["session"]["id"] == child
    _, visible = api.get("/api/tools", headers=scope, expect=200)
    assert [tool["tool_id"] for tool in visible["tools"]] == [STATUS]
    api.get("/api/tools/{tool_id}", tool_id="compozy__tool_list", headers=scope, expect=404)


# --- session routes -------------------------------------------------------------------------


def test_session_route_returns_the_full_record_whatever_views_do(api: ContractClient) -> None:
    made = create(api, name="route record", branch="fix/route")
    _, body = api.get(SESSION, session_id=made["id"], expect=200)
    session = body["session"]
    assert session == full_status(api, made["id"])
    assert session["lineage"]["permission_policy"]["tools"] == ["*"]
    assert "supervision" in session
    assert session["available_commands"] == []
    assert made == session  # POST /api/sessions returns the same full record


def test_session_list_pages_with_next_cursor_newest_first(api: ContractClient) -> None:
    agent = f"pager{next(_counter)}"
    ids = [create(api, agent_name=agent)["id"] for _ in range(3)]
    _, first = api.get("/api/sessions", params={"agent_name": agent, "limit": 2}, expect=200)
    assert [s["id"] for s in first["sessions"]] == ids[::-1][:2]
    assert "permission_policy" in first["sessions"][0]["lineage"]  # full records
    params = {"agent_name": agent, "limit": 2, "cursor": first["next_cursor"]}
    _, second = api.get("/api/sessions", params=params, expect=200)
    assert [s["id"] for s in second["sessions"]] == [ids[0]]
    assert "next_cursor" not in second


def test_session_list_filters_archived_sessions(api: ContractClient) -> None:
    agent = f"archiver{next(_counter)}"
    kept, shelved = create(api, agent_name=agent), create(api, agent_name=agent)
    api.post(SESSION + "/archive", session_id=shelved["id"], expect=200)
    _, active = api.get("/api/sessions", params={"agent_name": agent}, expect=200)
    assert [s["id"] for s in active["sessions"]] == [kept["id"]]
    params = {"agent_name": agent, "archived": "true"}
    _, archived = api.get("/api/sessions", params=params, expect=200)
    assert [s["id"] for s in archived["sessions"]] == [shelved["id"]]


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"limit": "lots"}, id="limit-not-a-number"),
        pytest.param({"limit": "500"}, id="limit-too-large"),
        pytest.param({"archived": "maybe"}, id="archived-not-a-boolean"),
        pytest.param({"state": "sleeping"}, id="unknown-state"),
        pytest.param({"cursor": "not-a-cursor"}, id="bad-cursor"),
    ],
)
def test_session_list_with_bad_parameters_is_a_400_naming_session_list(
    api: ContractClient, params: dict[str, str]
) -> None:
    _, body = api.get("/api/sessions", params=params, expect=400)
    assert body["error"] == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": REDACTED_INPUT,
        "tool_id": "compozy__session_list",
    }


def test_archive_and_unarchive_are_idempotent_and_return_the_full_record(
    api: ContractClient,
) -> None:
    made = create(api)
    _, archived = api.post(SESSION + "/archive", session_id=made["id"], expect=200)
    assert archived["session"]["archived_at"] is not None
    _, again = api.post(SESSION + "/archive", session_id=made["id"], expect=200)
    assert again == archived
    _, back = api.post(SESSION + "/unarchive", session_id=made["id"], expect=200)
    assert back["session"]["archived_at"] is None
    assert "permission_policy" in back["session"]["lineage"]


@pytest.mark.parametrize("action", ["", "/archive", "/unarchive"])
def test_session_routes_for_an_unknown_session_are_404(api: ContractClient, action: str) -> None:
    method = "GET" if action == "" else "POST"
    _, body = api.request(method, SESSION + action, session_id="sess-nope", expect=404)
    assert (body["error"]["code"], body["error"]["reason"]) == ("not_found", "session_not_found")


def test_session_id_holding_a_slash_is_an_unknown_session_not_an_unknown_route(
    api: ContractClient,
) -> None:
    _, body = api.get(SESSION, session_id="a/b", expect=404)
    assert body["error"]["reason"] == "session_not_found"


CREATE_ERRORS = [
    pytest.param({}, 400, "schema_invalid", id="no-agent-name"),
    pytest.param({"agent_name": "general", "bogus": 1}, 400, "schema_invalid", id="unknown-field"),
    pytest.param(
        {"agent_name": "general", "result_view": "full"}, 400, "schema_invalid", id="selector"
    ),
    pytest.param(
        {"agent_name": "general", "model": "m"}, 400, "schema_invalid", id="model-without-provider"
    ),
    pytest.param(
        {"agent_name": "general", "workspace_id": "ws_nope"},
        404,
        "workspace_not_found",
        id="unknown-workspace",
    ),
    pytest.param(
        {"agent_name": "general", "provider": "echo", "model": "gpt-1"},
        422,
        "model_unknown",
        id="model",
    ),
    pytest.param(
        {"agent_name": "general", "provider": "nope"}, 422, "provider_unknown", id="provider"
    ),
]


@pytest.mark.parametrize(("fields", "status", "reason"), CREATE_ERRORS)
def test_session_create_errors_have_fitting_statuses(
    api: ContractClient, fields: dict[str, Any], status: int, reason: str
) -> None:
    _, body = api.post("/api/sessions", json=fields, expect=status)
    assert body["error"]["reason"] == reason
    assert body["error"]["tool_id"] == "compozy__session_create"


def test_session_create_of_an_existing_id_is_a_409(api: ContractClient) -> None:
    made = create(api)
    _, body = api.post(
        "/api/sessions", json={"agent_name": "general", "session_id": made["id"]}, expect=409
    )
    assert (body["error"]["code"], body["error"]["reason"]) == ("tool_conflict", "session_exists")


# --- workspaces and profiles ---------------------------------------------------------------


def test_a_workspace_added_over_the_api_is_listed_and_can_hold_a_session(
    api: ContractClient, home: Home
) -> None:
    project = home.path.parent / "project-api"
    project.mkdir()
    _, body = api.post("/api/workspaces", json={"path": str(project), "name": "p"}, expect=201)
    workspace = body["workspace"]
    assert (workspace["name"], workspace["path"]) == ("p", str(project.resolve()))
    _, listed = api.get("/api/workspaces", expect=200)
    assert listed["workspaces"][0]["id"] == "ws_default"
    assert workspace in listed["workspaces"]
    session = create(api, workspace_id=workspace["id"])
    assert session["workspace_path"] == str(project.resolve())


def test_a_profile_added_over_the_api_is_listed_and_presents_a_session(
    api: ContractClient,
) -> None:
    fields = {"name": "Reviewer", "color": "#2563eb", "icon": "eye"}
    _, body = api.post("/api/profiles", json=fields, expect=201)
    profile = body["profile"]
    assert {k: profile[k] for k in fields} == fields
    _, listed = api.get("/api/profiles", expect=200)
    assert profile in listed["profiles"]
    session = create(api, profile_id=profile["id"])
    assert (session["profile_name"], session["profile_color"]) == ("Reviewer", "#2563eb")


REGISTRATION_ERRORS = [
    pytest.param("/api/workspaces", {}, 'workspace field "path" is required', id="no-path"),
    pytest.param(
        "/api/workspaces",
        {"path": "relative/dir"},
        'workspace field "path" must be an absolute path',
        id="relative-path",
    ),
    pytest.param(
        "/api/workspaces",
        {"path": "/no/such/dir"},
        "/no/such/dir is not a directory",
        id="not-a-directory",
    ),
    pytest.param(
        "/api/workspaces",
        {"path": "/tmp", "owner": "x"},
        'workspace field "owner" is not a field of a workspace',
        id="unknown-field",
    ),
    pytest.param(
        "/api/profiles",
        {"name": "  "},
        'profile field "name" must be one line of text, not blank, without control characters',
        id="blank",
    ),
    pytest.param(
        "/api/profiles", {"name": 3}, 'profile field "name" must be a string', id="not-a-string"
    ),
]


@pytest.mark.parametrize(("path", "fields", "message"), REGISTRATION_ERRORS)
def test_bad_workspace_and_profile_requests_are_400s_that_say_what_is_wrong(
    api: ContractClient, path: str, fields: dict[str, Any], message: str
) -> None:
    _, before = api.get(path, expect=200)
    _, body = api.post(path, json=fields, expect=400)
    assert (body["error"]["code"], body["error"]["message"]) == ("invalid_request", message)
    assert "tool_id" not in body["error"]
    _, after = api.get(path, expect=200)
    assert after == before


# --- bad requests ---------------------------------------------------------------------------

BAD_BODIES = [
    pytest.param(b"{not json", "body_not_json", id="not-json"),
    pytest.param(b"[1, 2]", "body_not_object", id="not-an-object"),
    pytest.param(b'{"input": [1]}', "input_not_object", id="input-not-an-object"),
    pytest.param(b'{"input": {}, "session_id": "x"}', "body_invalid", id="unknown-key"),
    pytest.param(b"", "body_missing", id="empty"),
]


@pytest.mark.parametrize(("content", "reason"), BAD_BODIES)
def test_bad_invoke_bodies_are_400_json_errors_and_the_daemon_keeps_serving(
    api: ContractClient, content: bytes, reason: str
) -> None:
    _, body = api.post(
        INVOKE,
        tool_id=STATUS,
        content=content,
        headers={"Content-Type": "application/json"},
        expect=400,
    )
    assert (body["error"]["code"], body["error"]["reason"]) == ("invalid_request", reason)
    assert body["error"]["message"]
    api.get("/api/tools", expect=200)


@pytest.mark.parametrize(("content", "reason"), BAD_BODIES[:2])
def test_bad_create_bodies_are_400_json_errors(
    api: ContractClient, content: bytes, reason: str
) -> None:
    _, body = api.post("/api/sessions", content=content, expect=400)
    assert body["error"]["reason"] == reason


def test_unknown_routes_are_404_json_errors(daemon: Daemon) -> None:
    with daemon.client() as client:
        for path in ("/api/nope", "/nope", "/api/tools/", "/api"):
            response = client.get(path)
            body = response.json()
            assert response.status_code == 404, path
            if path == "/api/tools/":  # an empty tool id reaches the tool route
                assert body["error"]["code"] == "tool_not_found"
            else:
                assert body["error"]["reason"] == "route_not_found", path


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/api/tools", "GET"),
        ("PUT", "/api/sessions", "GET, HEAD, POST"),
        ("GET", "/api/sessions/sess-x/archive", "POST"),
        ("POST", "/api/openapi.json", "GET"),
    ],
)
def test_wrong_methods_are_405_json_errors_with_allow(
    daemon: Daemon, method: str, path: str, allow: str
) -> None:
    with daemon.client() as client:
        response = client.request(method, path)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert set(allow.split(", ")) <= set(response.headers["allow"].split(", "))


def test_oversized_requests_are_413_json_errors(api: ContractClient, daemon: Daemon) -> None:
    big = json.dumps({"input": {"session_id": "x" * (4 * 1024 * 1024)}}).encode()
    _, body = api.post(
        INVOKE, tool_id=STATUS, content=big, headers={"Content-Type": "application/json"}
    )
    assert body["error"]["code"] == "request_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while reading
        for start in range(0, len(big), 1 << 20):
            yield big[start : start + (1 << 20)]

    with daemon.client() as client:
        response = client.post(INVOKE.format(tool_id=STATUS), content=chunks())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    api.get("/api/tools", expect=200)


def test_a_non_loopback_host_header_is_refused_with_421(daemon: Daemon) -> None:
    with daemon.client() as client:
        response = client.get("/api/tools", headers={"Host": "attacker.example"})
        assert response.status_code == 421
        assert response.json()["error"]["reason"] == "host_not_allowed"
        mcp = client.post("/mcp", headers={"Host": "attacker.example"}, json={})
        assert mcp.status_code == 421


def test_a_foreign_origin_is_refused_and_a_loopback_one_accepted(daemon: Daemon) -> None:
    with daemon.client() as client:
        foreign = client.get("/api/tools", headers={"Origin": "https://attacker.example"})
        assert foreign.status_code == 403
        assert foreign.json()["error"]["reason"] == "origin_not_allowed"
        local = client.get("/api/tools", headers={"Origin": "http://localhost:3000"})
        assert local.status_code == 200


# --- the OpenAPI document -------------------------------------------------------------------


def test_every_documented_operation_answers_a_body_its_schema_accepts(
    api: ContractClient, contract: Contract, tmp_path: Path
) -> None:
    made = create(api)
    # a call of the session held for approval (issue 14), so that its prompt can be answered
    api.post(
        INVOKE,
        tool_id="compozy__tool_approvals_set",
        json={"input": {"session_id": made["id"], "permission_mode": "default"}},
        expect=200,
    )
    _, waiting = api.post(
        INVOKE,
        tool_id="compozy__session_rename",
        json={"input": {"session_id": made["id"], "name": "asked"}},
        headers={"X-Compozy-Session": made["id"]},
        expect=202,
    )
    prompt = waiting["error"]["details"]["interaction_id"]
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/api/openapi.json", {}),
        ("GET", "/api/tools", {}),
        ("GET", "/api/tools/search", {"params": {"q": "skill"}}),
        ("GET", "/api/tools/{tool_id}", {"tool_id": "compozy__skill_view"}),
        ("POST", INVOKE, {"tool_id": "compozy__tool_list", "json": {"input": {}}}),
        ("GET", "/api/sessions", {"params": {"limit": 1}}),
        ("POST", "/api/sessions", {"json": {"agent_name": "general"}}),
        ("GET", SESSION, {"session_id": made["id"]}),
        (
            "POST",
            "/api/tools/{tool_id}/approvals",
            {
                "tool_id": "compozy__session_rename",
                "json": {"session_id": made["id"], "input": {"name": "minted"}},
            },
        ),
        (
            "POST",
            SESSION + "/approve",
            {
                "session_id": made["id"],
                "json": {"interaction_id": prompt, "decision": "allow-once"},
            },
        ),
        ("GET", "/api/agents", {}),
        ("POST", SESSION + "/prompt", {"session_id": made["id"], "json": {"prompt": "queued"}}),
        ("POST", SESSION + "/cancel", {"session_id": made["id"]}),
        ("GET", SESSION + "/history", {"session_id": made["id"]}),
        ("GET", SESSION + "/events", {"session_id": made["id"]}),
        ("POST", SESSION + "/archive", {"session_id": made["id"]}),
        ("POST", SESSION + "/unarchive", {"session_id": made["id"]}),
        ("GET", "/api/workspaces", {}),
        ("POST", "/api/workspaces", {"json": {"path": str(Path.cwd())}}),
        ("POST", "/api/workspaces/{workspace_id}/trust", {"workspace_id": "ws_default"}),
        ("DELETE", "/api/workspaces/{workspace_id}/trust", {"workspace_id": "ws_default"}),
        ("GET", "/api/profiles", {}),
        ("POST", "/api/profiles", {"json": {"name": "Documented"}}),
        ("GET", "/api/mcp/servers", {}),
        ("POST", "/api/store/vacuum", {}),
        ("POST", SESSION + "/archive", {"session_id": made["id"]}),  # a deletion needs it
        ("DELETE", SESSION, {"session_id": made["id"]}),
    ]
    invoked = re.compile(r"^/api/tools/compozy__\w+/invoke$")
    documented = {
        (method.upper(), INVOKE if invoked.match(path) else path)
        for path, operations in contract.document["paths"].items()
        for method in operations
    }
    loop_calls = _loop_calls(api)
    worktree_calls = _worktree_calls(api, tmp_path)
    task_calls = _task_calls(api)
    made_calls = {(method, path) for method, path, _ in calls}
    assert made_calls | loop_calls | worktree_calls | task_calls == documented
    for method, path, kw in calls:
        status, _ = api.request(method, path, **kw)
        assert status in (200, 201), (method, path)


LOOP = (
    "graph:\n  nodes:\n    - id: review\n      class: control\n      kind: gate\n"
    "      params:\n        criteria:\n          - {id: ok, prompt: Go on?}\n"
)


def _loop_calls(api: ContractClient) -> set[tuple[str, str]]:
    """The Loop operations, each answering 200 or 201 (a run's id comes from its start)."""
    done: set[tuple[str, str]] = set()

    def send(method: str, path: str, **kw: Any) -> Any:
        status, body = api.request(method, path, **kw)
        assert status in (200, 201), (method, path, body)
        done.add((method, path))
        return body

    send("POST", "/api/loops/validate", json={"definition": LOOP})
    send("POST", "/api/loops", json={"definition": LOOP, "loop_id": "documented"})
    send("GET", "/api/loops")
    send("GET", "/api/loops/{loop_id}", loop_id="documented")
    runs = "/api/loops/{loop_id}/runs"
    first = send("POST", runs, loop_id="documented", json={"wait": True})["run"]["run_id"]
    second = send("POST", runs, loop_id="documented", json={"wait": True})["run"]["run_id"]
    send("GET", "/api/loop-runs", params={"limit": 5})
    send("GET", "/api/loop-runs/{run_id}", run_id=first)
    send("POST", "/api/loop-runs/{run_id}/approve", run_id=first, json={"decision": "approve"})
    send("POST", "/api/loop-runs/{run_id}/cancel", run_id=second)
    return done


def _worktree_calls(api: ContractClient, tmp_path: Path) -> set[tuple[str, str]]:
    """The worktree and hand-off operations, in a workspace that is a git repository: each
    answers 200 or 201, but opening a pull request, which answers its documented 422 without
    the GitHub CLI (tests/worktrees open one with a stub gh)."""
    from tests.worktrees.gitrepo import make_repo

    done: set[tuple[str, str]] = set()

    def send(method: str, path: str, *, expect: tuple[int, ...] = (200, 201), **kw: Any) -> Any:
        status, body = api.request(method, path, **kw)
        assert status in expect, (method, path, body)
        done.add((method, path))
        return body

    repo = make_repo(tmp_path / "documented repo")
    workspace = send("POST", "/api/workspaces", json={"path": str(repo)})["workspace"]["id"]
    made = api.post(
        "/api/sessions",
        json={"agent_name": "general", "workspace_id": workspace, "worktree": True},
        expect=201,
    )[1]["session"]
    (Path(made["worktree"]["directory"]) / "documented.txt").write_text("x\n")
    tree = made["worktree_id"]
    send("GET", SESSION + "/diff", session_id=made["id"])
    send("GET", "/api/worktrees", params={"session_id": made["id"]})
    send("GET", "/api/worktrees/{worktree_id}", worktree_id=tree)
    send("POST", SESSION + "/merge", session_id=made["id"], json={})
    send("POST", SESSION + "/pull-request", session_id=made["id"], expect=(422,))
    send("DELETE", "/api/worktrees/{worktree_id}", worktree_id=tree, params={"force": "true"})
    send("POST", "/api/worktrees", json={"session_id": made["id"]})
    return done


def _task_calls(api: ContractClient) -> set[tuple[str, str]]:
    """The task operations (issue 27): a task queued, claimed, heartbeaten, completed, sent
    back by a review, released, claimed and failed, updated, listed and cancelled; then the
    worker's heartbeat set, shown and woken."""
    done: set[tuple[str, str]] = set()

    def send(method: str, path: str, **kw: Any) -> Any:
        status, body = api.request(method, path, **kw)
        assert status in (200, 201), (method, path, body)
        done.add((method, path))
        return body

    worker = api.post("/api/sessions", json={"agent_name": "general"}, expect=201)[1]["session"]
    task = send("POST", "/api/tasks", json={"title": "documented", "priority": 2})["task"]
    claimed = send("POST", "/api/tasks/claim", json={"session_id": worker["id"]})["task"]
    run = claimed["current_run"]["run_id"]
    send("POST", "/api/task-runs/{run_id}/heartbeat", run_id=run, json={"lease_seconds": 60})
    send("POST", "/api/task-runs/{run_id}/complete", run_id=run, json={"summary": "done"})
    again = send(
        "POST",
        "/api/tasks/{task_id}/review",
        task_id=task["task_id"],
        json={"decision": "request_changes", "comments": "more"},
    )["task"]["current_run"]["run_id"]
    send("POST", "/api/task-runs/{run_id}/release", run_id=again)
    third = send("POST", "/api/tasks/claim", json={"session_id": worker["id"]})["task"]
    send(
        "POST",
        "/api/task-runs/{run_id}/fail",
        run_id=third["current_run"]["run_id"],
        json={"reason": "broken"},
    )
    send("PATCH", "/api/tasks/{task_id}", task_id=task["task_id"], json={"priority": 1})
    listed = send("GET", "/api/tasks", params={"state": "todo,in_progress"})
    assert [t["task_id"] for t in listed["tasks"]] == [task["task_id"]]
    send("GET", "/api/tasks/{task_id}", task_id=task["task_id"])
    send("POST", "/api/tasks/{task_id}/cancel", task_id=task["task_id"])
    beat = "/api/sessions/{session_id}/heartbeat"
    send("PUT", beat, session_id=worker["id"], json={"cron": "*/30 * * * *"})
    status = send("GET", beat, session_id=worker["id"])["heartbeat"]
    assert (status["cron"], status["snapshot_id"][:4]) == ("*/30 * * * *", "pol-")
    send("POST", beat + "/wake", session_id=worker["id"])
    return done


def test_served_document_is_openapi_3_1_with_valid_component_schemas(contract: Contract) -> None:
    from jsonschema import Draft202012Validator

    document = contract.document
    assert document["openapi"].startswith("3.1")
    for name, schema in document["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
        assert isinstance(name, str)
    # every $ref in the document resolves
    refs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    assert refs
    for ref in refs:
        target: Any = document
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
        assert isinstance(target, dict), ref


def test_contract_check_rejects_a_body_that_breaks_the_schema(contract: Contract) -> None:
    request = httpx2.Request("GET", "http://x/api/tools")
    bad = httpx2.Response(200, json={"tools": [{"id": "compozy__x"}]}, request=request)
    with pytest.raises(AssertionError):
        contract.check("GET", "/api/tools", bad)
    undocumented = httpx2.Response(418, json={}, request=request)
    with pytest.raises(AssertionError):
        contract.check("GET", "/api/tools", undocumented)


# --- the hosted MCP endpoint on the daemon --------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("listener", ["tcp", "socket"])
async def test_mcp_endpoint_on_the_daemon_lists_and_calls_tools(
    daemon: Daemon, api: ContractClient, listener: str
) -> None:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    made = create(api)
    if listener == "tcp":
        assert daemon.url is not None
        http = httpx2.AsyncClient(trust_env=False, timeout=30)
        url = f"{daemon.url}/mcp"
    else:
        assert daemon.socket is not None
        transport = httpx2.AsyncHTTPTransport(uds=str(daemon.socket))
        http = httpx2.AsyncClient(transport=transport, trust_env=False, timeout=30)
        url = "http://localhost/mcp"
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        page = await client.list_tools()
        names = [tool.name for tool in page.tools]
        assert STATUS in names
        assert all(tool.output_schema is None for tool in page.tools)
        result = await client.call_tool(STATUS, {"session_id": made["id"], "result_view": "full"})
        assert result.is_error is False
        assert result.structured_content == {"session": made}
