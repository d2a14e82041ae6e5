"""Issue 30, item 5 (processes): an upstream server stuck at start-up never outlives what
started it. ``compozy proxy`` started by an SDK client ends (with its servers) within the
client's grace when the client closes, and ``compozy serve`` stops promptly on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.api.support import COMPOZY, running_daemon
from tests.api.support import Home as DaemonHome
from tests.leftovers import running
from tests.proxy.support import INITIALIZE, INITIALIZED, Home, make_home, spawned
from tests.upstream.real import REPO, define, wait_for

from compozy_mcp.upstream.supervisor import SETTLE_SECONDS

pytestmark = [pytest.mark.process, pytest.mark.anyio]

#: the stuck server's start-up timeout: far longer than any of these tests
STUCK_TIMEOUTS = {"startup": 120, "call": 30, "ping_interval": 5, "ping_timeout": 5}
#: a hang guard, not a measure: the figures are printed
DEADLINE = 30.0


#: the stuck servers' pids a test saw: any still alive at its end is killed (a failing test
#: must not leave the very processes it is about behind)
_SEEN: list[int] = []


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    yield make_home(tmp_path)
    while _SEEN:
        pid = _SEEN.pop()
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def define_stuck(home: Home) -> Path:
    """``compozy mcp add stuck -- python -m tests.upstream.servers.stuck PIDFILE``."""
    pidfile = home.root / "stuck.pid"
    stuck = (
        "-e",
        f"PYTHONPATH={REPO}",
        "stuck",
        "--",
        sys.executable,
        "-m",
        "tests.upstream.servers.stuck",
        str(pidfile),
    )
    define(home, notes=False, extra=[stuck], timeouts=STUCK_TIMEOUTS)
    return pidfile


def started_pid(pidfile: Path) -> int:
    wait_for(pidfile.exists, "the stuck server started")
    wait_for(lambda: pidfile.read_text().strip() != "", "the stuck server wrote its pid")
    pid = int(pidfile.read_text())
    _SEEN.append(pid)
    return pid


async def test_a_client_closing_ends_the_proxy_and_its_stuck_server_within_its_grace(
    home: Home,
) -> None:
    """The SDK's stdio client closes the proxy's stdin, waits 2 s, then sends SIGTERM: the
    proxy is gone before that (it never hears SIGTERM), and so is the stuck server."""
    pidfile = define_stuck(home)
    params = StdioServerParameters(
        command=str(COMPOZY), args=["--log-level", "info", "proxy"], env=dict(home.env)
    )
    log = home.root / "proxy.log"
    with log.open("w") as errlog:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None):
            # the proxy answered initialize while its server is still starting
            pid = await anyio.to_thread.run_sync(started_pid, pidfile)
            assert running(pid)
            closing = time.monotonic()
    took = time.monotonic() - closing
    print(f"the proxy and its stuck server were gone {took:.2f} s after the client closed")
    assert not running(pid), "the stuck server outlived the proxy"
    said = log.read_text()
    assert "SIGTERM" not in said, said  # it ended by itself, within the client's grace
    assert "Traceback" not in said, said


async def test_sigterm_stops_the_proxy_and_its_stuck_server(home: Home) -> None:
    pidfile = define_stuck(home)
    proxy = subprocess.Popen(
        [str(COMPOZY), "proxy"],
        env=home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdin is not None  # a client's handshake: its servers start then
        proxy.stdin.write(json.dumps(INITIALIZE) + "\n" + json.dumps(INITIALIZED) + "\n")
        proxy.stdin.flush()
        pid = await anyio.to_thread.run_sync(started_pid, pidfile)
        stopping = time.monotonic()
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(DEADLINE) == 0
        print(f"SIGTERM: the proxy exited after {time.monotonic() - stopping:.2f} s")
        assert not running(pid)
        assert proxy.stderr is not None
        assert "Traceback" not in proxy.stderr.read()
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
        for stream in (proxy.stdin, proxy.stderr):
            if stream is not None:
                stream.close()


async def test_sigterm_stops_the_daemon_promptly_with_a_stuck_server(home: Home) -> None:
    """SIGTERM while a server is still starting, then once the daemon serves: each time the
    daemon exits 0 and takes the stuck server with it. It never waits out its servers'
    start-up first (``SETTLE_SECONDS``), which is what the bound below checks."""
    pidfile = define_stuck(home)
    daemon = subprocess.Popen(
        [str(COMPOZY), "serve", "--port", "0", "--no-uds"],
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pid = await anyio.to_thread.run_sync(started_pid, pidfile)
        stopping = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(SETTLE_SECONDS) == 0
        print(
            f"SIGTERM while starting: the daemon stopped after {time.monotonic() - stopping:.2f} s"
        )
        assert not running(pid)
        assert daemon.stderr is not None
        assert "Traceback" not in daemon.stderr.read()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        if daemon.stderr is not None:
            daemon.stderr.close()

    pidfile.unlink()
    daemon_home = DaemonHome(home.root / "home", home.env)
    with running_daemon(daemon_home, "--port", "0", "--no-uds", listeners=1) as serving:
        pid = await anyio.to_thread.run_sync(started_pid, pidfile)
        assert serving.url is not None
        async with Client(serving.url + "/mcp", mode="legacy", cache=None) as client:
            assert client.protocol_version == "2025-11-25"  # it serves while the server starts
        stopping = time.monotonic()
        assert serving.stop() == 0
        print(f"SIGTERM once serving: the daemon stopped after {time.monotonic() - stopping:.2f} s")
        assert not running(pid)
        assert "Traceback" not in serving.stderr


async def test_a_proxy_that_lists_waits_for_a_starting_server_then_lists_it(home: Home) -> None:
    """Start-up no longer blocks reading the client: the first listing waits instead."""
    define(home)  # the notes server (stdio), which starts in a moment
    params = StdioServerParameters(command=str(COMPOZY), args=["proxy"], env=dict(home.env))
    async with spawned(home, params, "legacy", "lists") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "notes__lookup" in names
