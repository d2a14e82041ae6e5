"""``compozy proxy`` as an operator starts it: what it prints, the socket it creates, and the
errors it reports instead of starting."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
from urllib.parse import urlsplit

import pytest
from tests.proxy.support import (
    COMPOZY,
    STARTUP_DEADLINE,
    UDS_READY,
    Home,
    ProxyPool,
    UdsProxy,
    create_session,
    record,
    uds_client,
)

from compozy_mcp import net
from compozy_mcp.cli._proxy import parse_address
from compozy_mcp.errors import ConfigError, InvalidRequest

pytestmark = [pytest.mark.process, pytest.mark.anyio]

EXIT_SETUP = 6
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3


def run_proxy(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    """A proxy expected to refuse to start: it must exit on its own, quickly."""
    return subprocess.run(
        [str(COMPOZY), "proxy", *args],
        env=home.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_DEADLINE,
        check=False,
    )


def assert_refused(done: subprocess.CompletedProcess[str], code: int, message: str) -> None:
    assert done.returncode == code, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""


def test_the_http_proxy_prints_its_url_and_how_to_point_clients_at_it(pool: ProxyPool) -> None:
    server = pool.http()
    parts = urlsplit(server.url)
    assert (parts.scheme, parts.hostname, parts.path) == ("http", "127.0.0.1", "/mcp")
    assert parts.port not in (None, 0)
    snippet = server.process.wait_for_line(".mcp.json:").split(".mcp.json:", 1)[1]
    lines = server.process.stderr.splitlines()
    assert f"claude mcp add --transport http compozy {server.url}" in "\n".join(lines)
    assert json.loads(snippet) == {"mcpServers": {"compozy": {"type": "http", "url": server.url}}}


async def test_the_unix_socket_is_created_with_mode_0600(pool: ProxyPool) -> None:
    server = pool.uds()  # started with umask 0
    mode = server.path.lstat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    async with uds_client(server.path, server.url, "auto") as client:
        assert (await create_session(client))["id"]


async def test_a_second_proxy_refuses_a_socket_another_proxy_serves(
    pool: ProxyPool, proxy_home: Home
) -> None:
    first = pool.uds()
    inode = first.path.lstat().st_ino
    done = run_proxy(proxy_home, "--uds", str(first.path))
    assert_refused(done, EXIT_SETUP, f"another process is serving on {first.path}")
    assert first.path.lstat().st_ino == inode
    async with uds_client(first.path, first.url, "legacy") as client:
        sid = (await create_session(client))["id"]
        assert record(await client.call_tool("compozy__session_status", {"session_id": sid}))


async def test_a_stale_socket_is_replaced_and_any_other_file_is_refused(
    pool: ProxyPool, proxy_home: Home
) -> None:
    path = proxy_home.root / "sockets" / "stale.sock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left_behind:
        left_behind.bind(str(path))  # bound, never listening, closed: a stale socket file
    assert stat.S_ISSOCK(path.lstat().st_mode)
    server = UdsProxy(pool.start(["proxy", "--uds", str(path)], proxy_home.env, UDS_READY), path)
    async with uds_client(server.path, server.url, "auto") as client:
        assert (await create_session(client))["id"]
    assert server.process.stop() in (0, -15)  # SIGTERM: a graceful stop, then the signal
    assert "Traceback" not in server.process.stderr, server.process.stderr

    regular = proxy_home.root / "sockets" / "not-a-socket"
    regular.write_text("keep me")
    assert_refused(
        run_proxy(proxy_home, "--uds", str(regular)), EXIT_SETUP, "exists and is not a socket"
    )
    assert regular.read_text() == "keep me"


def test_an_address_already_in_use_is_reported_not_raised(
    pool: ProxyPool, proxy_home: Home
) -> None:
    taken = urlsplit(pool.http().url).netloc
    assert_refused(run_proxy(proxy_home, "--http", taken), EXIT_SETUP, f"cannot listen on {taken}")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(["--page-size", "0"], EXIT_USAGE, "--page-size must be at least 1", id="page"),
        pytest.param(["--http", "nowhere"], EXIT_USAGE, "--http takes HOST:PORT", id="address"),
        pytest.param(
            ["--session", "sess-ghost"],
            EXIT_NOT_FOUND,
            'session "sess-ghost" does not exist',
            id="session",
        ),
    ],
)
def test_bad_options_are_reported_without_starting(
    proxy_home: Home, args: list[str], code: int, message: str
) -> None:
    assert_refused(run_proxy(proxy_home, *args), code, message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope", "--http takes HOST:PORT"),
        ("127.0.0.1:http", "--http port must be a number"),
        ("127.0.0.1:99999", "--http port must be between 0 and 65535"),
    ],
)
def test_a_bad_http_address_is_a_usage_error(text: str, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        parse_address(text)


def test_http_addresses_parse_with_a_loopback_default() -> None:
    assert parse_address(":0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:8765") == ("::1", 8765)
    assert parse_address("localhost:80") == ("localhost", 80)


@pytest.mark.parametrize("host", ["no-such-host.invalid", "256.1.1.1"])
def test_an_address_that_cannot_be_bound_is_a_config_error(host: str) -> None:
    with pytest.raises(ConfigError, match=f"cannot listen on {host}:0"):
        net.bind_tcp(host, 0)
