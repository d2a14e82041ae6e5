"""``compozy proxy`` against a daemon (``--url`` / ``--socket`` / ``COMPOZY_URL``): it relays the
daemon's ``/mcp`` and shows a client what the in-process proxy shows.

The shared proxy tests run through the relay as well (the ``relay`` kind of the ``proxy``
fixture); this module covers what only a relay has: its start-up checks, the daemon's token,
serving the relay over HTTP, and a daemon that goes away and comes back.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, cast

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.api.support import Daemon, running_daemon, short_dir
from tests.api.support import Home as DaemonHome
from tests.proxy.support import (
    COMPOZY,
    HTTP_READY,
    Home,
    Mode,
    ProxyPool,
    ProxyProcess,
    create_session,
    make_home,
    record,
    spawn_child,
    spawned,
    tool_error,
)

pytestmark = [pytest.mark.process, pytest.mark.anyio]

STATUS = "compozy__session_status"


@pytest.fixture
def daemon_home(tmp_path: Path) -> Home:
    return make_home(tmp_path / "d")


@pytest.fixture
def sockets() -> Iterator[Path]:
    with short_dir() as where:
        yield where


def _serve(home: Home, *args: str, token: str | None = None) -> Any:
    listeners = 1 if ("--no-tcp" in args or "--no-uds" in args) else 2
    if token is not None:
        token_file = home.root / "token"
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
        args = (*args, "--token-file", str(token_file))
    ready = {"Authorization": f"Bearer {token}"} if token else None
    return running_daemon(
        DaemonHome(home.root / "home", home.env), *args, listeners=listeners, ready_headers=ready
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Home, Daemon]]:
    """One daemon on a socket, and its home, for the tests that neither stop nor reconfigure
    it (each makes its own sessions)."""
    home = make_home(tmp_path_factory.mktemp("d"))
    with short_dir() as where, _serve(home, "--no-tcp", "--uds", str(where / "d.sock")) as daemon:
        yield home, daemon


def _run(
    home: Home, *args: str, program: Sequence[str] = (str(COMPOZY),)
) -> subprocess.CompletedProcess[str]:
    """``compozy ARGS`` (or ``program ARGS``) to its end; stdin is empty, so that a proxy that
    did start would stop."""
    return subprocess.run(
        [*program, *args],
        env=home.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def relay(
    home: Home,
    remote: list[str],
    *args: str,
    mode: Mode = "auto",
    env: dict[str, str] | None = None,
) -> AbstractAsyncContextManager[Client]:
    params = StdioServerParameters(
        command=str(COMPOZY), args=[*remote, "proxy", *args], env={**home.env, **(env or {})}
    )
    return spawned(home, params, mode, "relay")


def in_process(home: Home, *args: str) -> AbstractAsyncContextManager[Client]:
    params = StdioServerParameters(command=str(COMPOZY), args=["proxy", *args], env=home.env)
    return spawned(home, params, "auto", "stdio")


async def test_the_relay_lists_exactly_what_the_in_process_proxy_lists_for_a_session_too(
    served: tuple[Home, Daemon],
) -> None:
    daemon_home, daemon = served
    remote = ["--socket", str(daemon.socket)]
    async with relay(daemon_home, remote) as far, in_process(daemon_home) as near:
        assert (await far.list_tools()).tools == (await near.list_tools()).tools
        parent = (await create_session(far))["id"]
        child = await spawn_child(far, parent, [STATUS])
    bound = ("--session", child)
    async with (
        relay(daemon_home, remote, *bound) as far,
        in_process(daemon_home, *bound) as near,
    ):
        listed = (await far.list_tools()).tools
        assert [tool.name for tool in listed] == [STATUS]
        assert listed == (await near.list_tools()).tools
        full = {"session_id": child, "result_view": "full"}
        assert record(await far.call_tool(STATUS, full)) == record(
            await near.call_tool(STATUS, full)
        )
        denied = tool_error(await far.call_tool("compozy__session_list", {}))
        assert denied == tool_error(await near.call_tool("compozy__session_list", {}))
        assert denied["code"] == "tool_denied"


def test_an_unknown_session_is_refused_at_start_as_in_process(
    served: tuple[Home, Daemon],
) -> None:
    daemon_home, daemon = served
    far = _run(daemon_home, "--socket", str(daemon.socket), "proxy", "--session", "sess-nope")
    near = _run(daemon_home, "proxy", "--session", "sess-nope")
    assert (far.returncode, far.stdout) == (near.returncode, near.stdout) == (3, "")
    assert far.stderr.splitlines()[-1] == near.stderr.splitlines()[-1]
    assert 'session "sess-nope" does not exist' in near.stderr


#: ``compozy ARGS`` in this interpreter, then which modules of the app it imported
RELAY_PROBE = textwrap.dedent(
    """
    import json, sys
    from compozy_mcp.cli.main import main

    code = main(sys.argv[1:])
    app = (
        "compozy_mcp.assembly", "compozy_mcp.store", "compozy_mcp.sessions",
        "compozy_mcp.runtime", "compozy_mcp.native", "compozy_mcp.dispatch",
        "compozy_mcp.proxy.server",
    )
    loaded = sorted(
        name for name in sys.modules if any(name == a or name.startswith(a + ".") for a in app)
    )
    print(json.dumps({"code": code, "loaded": loaded}))
    """
)


def test_the_relay_imports_nothing_of_the_app_it_relays(served: tuple[Home, Daemon]) -> None:
    """Issue 29: the relay serves the daemon's tools, so it starts without the store, the
    registry, dispatch or the in-process proxy (about 150 of compozy's modules)."""
    daemon_home, daemon = served
    probe = (sys.executable, "-c", RELAY_PROBE)
    done = _run(daemon_home, "--socket", str(daemon.socket), "proxy", program=probe)
    assert done.returncode == 0, done.stderr
    assert "relaying the compozy daemon" in done.stderr
    assert json.loads(done.stdout) == {"code": 0, "loaded": []}


@pytest.mark.parametrize(
    "remote",
    [
        pytest.param(["--url", "http://127.0.0.1:1"], id="tcp"),
        pytest.param(["--socket", "/tmp/compozy-no-such-daemon.sock"], id="socket"),
    ],
)
def test_a_daemon_that_is_not_there_is_one_clear_line_and_exit_6(
    daemon_home: Home, remote: list[str]
) -> None:
    done = _run(daemon_home, *remote, "proxy")
    assert done.returncode == 6
    [line] = done.stderr.splitlines()
    assert line.startswith("error: cannot reach the compozy daemon at ")
    assert "compozy serve" in line


def test_the_relay_opens_no_store_of_its_own(served: tuple[Home, Daemon], tmp_path: Path) -> None:
    elsewhere = make_home(tmp_path / "relay-home")
    _, daemon = served
    done = _run(elsewhere, "--socket", str(daemon.socket), "proxy", "--session", "sess-nope")
    assert done.returncode == 3
    assert not (elsewhere.root / "home" / "compozy.db").exists()


async def test_a_daemon_with_a_token_needs_compozy_token(daemon_home: Home) -> None:
    with _serve(daemon_home, "--port", "0", "--no-uds", token="s3cret") as daemon:
        assert daemon.url is not None
        refused = _run(daemon_home, "--url", daemon.url, "proxy")
        assert refused.returncode == 6
        assert "COMPOZY_TOKEN" in refused.stderr
        token = {"COMPOZY_TOKEN": "s3cret"}
        async with relay(daemon_home, ["--url", daemon.url], env=token) as client:
            made = await create_session(client)
            assert record(await client.call_tool(STATUS, {"session_id": made["id"]}))


@pytest.fixture(scope="module")
def relay_over_http(served: tuple[Home, Daemon]) -> Iterator[ProxyProcess]:
    """``compozy --socket D proxy --http``, shared by both modes' test; its stderr must hold
    no traceback when it ends."""
    daemon_home, daemon = served
    pool = ProxyPool(daemon_home)
    try:
        args = ["--socket", str(daemon.socket), "proxy", "--http", "127.0.0.1:0"]
        process = pool.start(args, daemon_home.env, HTTP_READY)
        process.wait_ready()
        yield process
    finally:
        pool.close()
    assert "Traceback" not in process.stderr, process.stderr


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_relay_serves_streamable_http_too(
    relay_over_http: ProxyProcess, mode: Mode
) -> None:
    assert relay_over_http.match is not None
    url = relay_over_http.match.group(1)
    async with Client(url, mode=mode, cache=None) as client:
        made = await create_session(client, name="over http")
        status = record(await client.call_tool(STATUS, {"session_id": made["id"]}))
        assert status["session"]["id"] == made["id"]
    assert relay_over_http.alive(), relay_over_http.stderr
    assert "Traceback" not in relay_over_http.stderr, relay_over_http.stderr


@pytest.mark.parametrize("relayed", [True, False], ids=["relay", "in-process"])
async def test_a_second_signal_stops_at_once_and_the_app_still_shuts_down_cleanly(
    served: tuple[Home, Daemon], relayed: bool
) -> None:
    """Ctrl-C twice (or SIGTERM twice, as a supervisor does) must not skip the app's own
    shutdown: it releases the daemon connection (and, for a daemon, its agents)."""
    daemon_home, daemon = served
    pool = ProxyPool(daemon_home)
    try:
        remote = ["--socket", str(daemon.socket)] if relayed else []
        process = pool.start(
            [*remote, "proxy", "--http", "127.0.0.1:0"], daemon_home.env, HTTP_READY
        )
        url = process.wait_ready().group(1)
        async with Client(url, mode="legacy", cache=None) as client:
            await create_session(client)
            process.proc.send_signal(signal.SIGTERM)
            process.proc.send_signal(signal.SIGTERM)
            assert process.proc.wait(timeout=30) == 0, process.stderr
    finally:
        pool.close()
    assert "Traceback" not in process.stderr, process.stderr


async def test_a_call_while_the_daemon_is_down_is_a_tool_error_and_a_restart_is_picked_up(
    daemon_home: Home, sockets: Path
) -> None:
    path = sockets / "d.sock"
    remote = ["--socket", str(path)]
    daemon: Daemon
    with _serve(daemon_home, "--no-tcp", "--uds", str(path)) as daemon:
        async with relay(daemon_home, remote) as client:
            made = await create_session(client)
            daemon.stop()
            error = tool_error(await client.call_tool(STATUS, {"session_id": made["id"]}))
            assert (error["code"], error["reason"]) == ("tool_backend_failed", "daemon_unreachable")
            assert "cannot reach the compozy daemon" in error["message"]
            with _serve(daemon_home, "--no-tcp", "--uds", str(path)):
                again = record(await client.call_tool(STATUS, {"session_id": made["id"]}))
                assert again["session"]["id"] == made["id"]


async def test_the_relay_passes_a_calls_approval_token_to_the_daemon(
    daemon_home: Home, sockets: Path
) -> None:
    """Issue 14: a held call comes back as the typed error; a one-shot token sent in the call's
    ``_meta`` reaches the daemon, which runs the call once."""
    import json

    from mcp.types import RequestParamsMeta

    from compozy_mcp.proxy.catalog_server import META_APPROVAL_TOKEN

    home = Home(daemon_home.root, daemon_home.with_env(COMPOZY_PERMISSION_MODE="default"))
    with _serve(home, "--no-tcp", "--uds", str(sockets / "d.sock")) as daemon:
        remote = ["--socket", str(daemon.socket)]
        with daemon.socket_client() as operator:  # the operator, over the HTTP API
            made = operator.post("/api/sessions", json={"agent_name": "general"})
        assert made.status_code == 201, made.text
        session = made.json()["session"]["id"]
        rename = {"session_id": session, "name": "relayed", "result_view": "full"}
        minted = _run(
            home,
            *remote,
            "approvals",
            "mint",
            "compozy__session_rename",
            "--session",
            session,
            "--input",
            json.dumps(rename),
        )
        assert minted.returncode == 0, minted.stderr
        meta = cast(RequestParamsMeta, {META_APPROVAL_TOKEN: minted.stdout.strip()})
        async with relay(home, remote, "--session", session) as agent:
            held = tool_error(await agent.call_tool("compozy__session_rename", rename))
            assert (held["code"], held["reason"]) == ("tool_approval_required", "approval_required")
            ran = await agent.call_tool("compozy__session_rename", rename, meta=meta)
            assert record(ran)["session"]["name"] == "relayed"
            again = tool_error(await agent.call_tool("compozy__session_rename", rename, meta=meta))
            assert again["reason"] == "approval_token_replayed"


#: request ids no reply can carry back (issue 22: ``"\ud800"`` killed the stdio proxy, in
#: process and relayed; the others got no reply at all), exactly as a client wrote them
UNUSABLE_IDS = [b'"\\ud800"', b"null", b"true", b"1.5", b"[]", b"{}"]


@pytest.mark.parametrize("relayed", [False, True], ids=["in-process", "relay"])
def test_a_request_whose_id_no_reply_can_carry_is_answered_invalid_with_id_null(
    served: tuple[Home, Daemon], relayed: bool
) -> None:
    daemon_home, daemon = served
    remote = ["--socket", str(daemon.socket)] if relayed else []
    meta = (
        b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}'
    )
    lines = [
        b'{"jsonrpc":"2.0","id":' + ident + b',"method":"tools/list","params":{' + meta + b"}}"
        for ident in UNUSABLE_IDS
    ]
    lines.append(
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"compozy__session_list",'
        b'"arguments":{},' + meta + b"}}"
    )
    done = subprocess.run(
        [str(COMPOZY), *remote, "proxy"],
        input=b"\n".join(lines) + b"\n",
        env=daemon_home.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(reply) for reply in done.stdout.splitlines()]
    invalid = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request"},
    }
    assert replies[: len(UNUSABLE_IDS)] == [invalid] * len(UNUSABLE_IDS)
    assert replies[-1]["id"] == 7
    assert "sessions" in replies[-1]["result"]["structuredContent"]
    assert b"Traceback" not in done.stderr
