"""Who may talk to the daemon: the Host/Origin allow-list and the bearer token.

The policy is checked as a unit (``Access.check``), through the ASGI middleware in-process, and
on a real daemon bound to a non-loopback host (``0.0.0.0``), which must refuse to start without
a token and then answer 401 to every request without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tests.api.support import (
    Daemon,
    Home,
    compozy,
    compozy_process,
    running_daemon,
    short_dir,
)

from compozy_mcp.api.auth import Access, Guard
from compozy_mcp.credentials import session_credential
from compozy_mcp.net import is_loopback

TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.10", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _reason(access: Access, **headers: str) -> str | None:
    error = access.check({k.replace("_", "-"): v for k, v in headers.items()})
    return None if error is None else error.reason


def test_loopback_policy_accepts_loopback_hosts_with_or_without_a_port() -> None:
    access = Access.for_host("127.0.0.1", None)
    for host in ("127.0.0.1:8765", "localhost", "localhost:1", "[::1]:8765", "127.0.0.1"):
        assert _reason(access, host=host) is None, host
    for host in ("attacker.example", "127.0.0.1.attacker.example", "localhost.evil:80", ""):
        assert _reason(access, host=host) == "host_not_allowed", host


@pytest.mark.parametrize(
    "host",
    [
        "localhost:x@evil.example",
        "localhost:@evil.example",
        "localhost:8765/evil",
        "localhost:8765:1",
        "localhost evil",
        "127.0.0.1:80@evil.example",
        "[::1]@evil.example",
    ],
)
def test_a_host_header_is_parsed_not_matched_by_prefix(host: str) -> None:
    """Issue 11: ``localhost:x@evil.example`` was accepted because it starts with
    ``localhost:``; the header is now parsed into a name and a port."""
    assert _reason(Access.for_host("127.0.0.1", None), host=host) == "host_not_allowed"


@pytest.mark.parametrize(
    "origin", ["http://localhost:x@evil.example", "http://localhost/evil", "ftp://localhost"]
)
def test_an_origin_is_parsed_too(origin: str) -> None:
    access = Access.for_host("127.0.0.1", None)
    assert _reason(access, host="localhost", origin=origin) == "origin_not_allowed"


def test_loopback_policy_accepts_the_bound_loopback_address() -> None:
    assert _reason(Access.for_host("127.0.0.2", None), host="127.0.0.2:9") is None
    assert _reason(Access.for_host("127.0.0.1", None), host="127.0.0.2:9") == "host_not_allowed"


def test_loopback_policy_refuses_foreign_origins_only() -> None:
    access = Access.for_host("127.0.0.1", None)
    assert _reason(access, host="localhost", origin="http://localhost:5173") is None
    assert _reason(access, host="localhost", origin="https://evil.example") == (
        "origin_not_allowed"
    )
    assert _reason(access, host="localhost", origin="http://localhost.evil.example") == (
        "origin_not_allowed"
    )


def test_non_loopback_policy_checks_no_host_but_the_token() -> None:
    access = Access.for_host("0.0.0.0", TOKEN)
    assert access.names is None
    assert _reason(access, host="10.1.2.3:8765") == "token_missing"
    assert _reason(access, host="x", authorization="Bearer nope") == "token_invalid"
    assert _reason(access, host="x", authorization=f"Basic {TOKEN}") == "token_invalid"
    assert _reason(access, host="x", authorization=f"Bearer {TOKEN}x") == "token_invalid"
    assert _reason(access, host="x", authorization=f"Bearer {TOKEN}") is None
    assert _reason(access, host="x", authorization=f"bearer {TOKEN}") is None


def test_token_compare_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # auth looks it up on the module
    assert _reason(Access(token=TOKEN), authorization="Bearer guess") == "token_invalid"
    assert calls == [(b"guess", TOKEN.encode())]


@pytest.fixture
def guarded() -> Starlette:
    async def ok(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    app = Starlette(routes=[Route("/x", ok)])
    app.add_middleware(Guard, access=Access.for_host("127.0.0.1", TOKEN))
    return app


@pytest.mark.anyio
async def test_guard_answers_401_json_with_a_challenge_before_any_route(
    guarded: Starlette,
) -> None:
    transport = httpx2.ASGITransport(app=guarded)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:1") as client:
        for path in ("/x", "/not-a-route"):
            response = await client.get(path)
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json() == {
                "error": {
                    "code": "unauthorized",
                    "reason": "token_missing",
                    "message": "this daemon requires a bearer token (Authorization: Bearer ...)",
                }
            }
        wrong = await client.get("/x", headers={"Authorization": "Bearer wrong"})
        assert (wrong.status_code, wrong.json()["error"]["reason"]) == (401, "token_invalid")
        right = await client.get("/x", headers={"Authorization": f"Bearer {TOKEN}"})
        assert (right.status_code, right.json()) == (200, {"ok": True})


# --- session credentials (issue 22, item 4) ----------------------------------------------------


def _as_session(session: str, credential: str, path: str) -> str | None:
    error = Access.for_host("127.0.0.1", TOKEN).check(
        {
            "host": "127.0.0.1:1",
            "authorization": f"Bearer {credential}",
            "x-compozy-session": session,
        },
        path,
    )
    return None if error is None else error.reason


@pytest.mark.parametrize(
    "path", ["/mcp", "/api/tools", "/api/tools/search", "/api/tools/compozy__x/invoke"]
)
def test_a_session_credential_acts_as_its_session_on_the_tool_surfaces(path: str) -> None:
    assert _as_session("sess-a", session_credential("sess-a"), path) is None


@pytest.mark.parametrize(
    "path",
    ["/api/sessions", "/api/sessions/sess-a", "/api/tools/compozy__x/approvals", "/api/loops"],
)
def test_a_session_credential_is_refused_where_calls_act_as_the_operator(path: str) -> None:
    assert _as_session("sess-a", session_credential("sess-a"), path) == "credential_out_of_scope"


def test_a_session_credential_is_refused_for_another_session_or_none() -> None:
    credential = session_credential("sess-a")
    assert _as_session("sess-b", credential, "/mcp") == "credential_out_of_scope"
    error = Access.for_host("127.0.0.1", TOKEN).check(
        {"host": "localhost", "authorization": f"Bearer {credential}"}, "/mcp"
    )
    assert error is not None
    assert (error.code, error.reason) == ("forbidden", "credential_out_of_scope")


def test_a_forged_session_credential_is_not_valid() -> None:
    forged = session_credential("sess-a").replace("sess-a", "sess-b")
    assert _as_session("sess-b", forged, "/mcp") == "token_invalid"
    assert _as_session("sess-b", "compozy-session:sess-b:" + "0" * 64, "/mcp") == "token_invalid"


# --- a real daemon on a non-loopback host ------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home.make(tmp_path_factory.mktemp("auth"))


@pytest.mark.process
def test_non_loopback_host_without_a_token_refuses_to_start(home: Home) -> None:
    done = compozy_process(
        home, "serve", "--host", "0.0.0.0", "--port", "0", "--no-uds", timeout=30
    )
    assert done.returncode == 6
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert "not a loopback address" in line
    assert "COMPOZY_TOKEN" in line


@pytest.fixture(scope="module")
def token_daemon(home: Home) -> Iterator[Daemon]:
    ready = {"Authorization": f"Bearer {TOKEN}"}
    with (
        short_dir() as where,
        running_daemon(
            home.with_env(COMPOZY_TOKEN=TOKEN),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--uds",
            str(where / "d.sock"),
            ready_headers=ready,
        ) as running,
    ):
        yield running


def _loopback_url(daemon: Daemon) -> str:
    assert daemon.url is not None
    return daemon.url.replace("0.0.0.0", "127.0.0.1")


def _clients(daemon: Daemon) -> list[httpx2.Client]:
    loopback = httpx2.Client(base_url=_loopback_url(daemon), trust_env=False, timeout=30)
    return [loopback, daemon.socket_client()]


@pytest.mark.process
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/openapi.json"),
        ("GET", "/api/tools"),
        ("GET", "/api/sessions"),
        ("POST", "/api/sessions"),
        ("POST", "/mcp"),
        ("GET", "/no-such-route"),
    ],
)
def test_token_daemon_answers_401_to_every_route_without_the_token(
    token_daemon: Daemon, method: str, path: str
) -> None:
    for client in _clients(token_daemon):
        with client:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                response = client.request(method, path, headers=headers, json={})
                assert response.status_code == 401, (path, headers)
                assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.process
def test_token_daemon_serves_requests_with_the_token_on_tcp_and_the_socket(
    token_daemon: Daemon,
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for client in _clients(token_daemon):
        with client:
            response = client.get("/api/tools", headers=headers)
            assert response.status_code == 200
            assert response.json()["tools"]


@pytest.mark.process
def test_cli_sends_compozy_token_and_without_it_exits_6_in_one_line(
    home: Home, token_daemon: Daemon
) -> None:
    url = _loopback_url(token_daemon)
    args: Any = ("--url", url, "session", "list", "-o", "json")
    refused = compozy(home, *args)
    assert refused.returncode == 6
    assert "Traceback" not in refused.stderr
    assert '"code": "unauthorized"' in refused.stdout
    accepted = compozy(home.with_env(COMPOZY_TOKEN=TOKEN), *args)
    assert accepted.returncode == 0, accepted.stderr
    assert "sessions" in accepted.stdout
