"""Real upstream servers for the process tier: ``notes`` on stdio (the SDK's low-level server,
started by the proxy) and ``docs`` on Streamable HTTP (the SDK's ``MCPServer``, started here),
defined the way a user does it (``compozy mcp add``, then timeouts edited in ``mcp.yaml``), and
a ``compozy proxy`` that an SDK client starts on stdio."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.clirun import run_cli
from tests.proxy.support import COMPOZY, Home, Mode, spawned

REPO = Path(__file__).resolve().parents[2]
READY = re.compile(r"docs serving at (http://\S+)")
DEADLINE = 30.0
#: short checks, so that a failure is found in a moment; backoff long enough that a test can
#: see a server down before it comes back
TIMEOUTS = {"startup": 30, "call": 30, "ping_interval": 0.3, "ping_timeout": 2}
RESTART = {"initial_delay": 2, "max_delay": 4}


def wait_for(check: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline} s")
        time.sleep(0.05)


class DocsServer:
    """``python -m tests.upstream.servers.docs`` as a process; ``restart`` serves again at the
    same address."""

    def __init__(self, port: int = 0) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.upstream.servers.docs", "--port", str(port)],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        ready = threading.Event()
        found: list[str] = []

        def drain() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.lines.append(line)
                match = READY.search(line)
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=drain, daemon=True)
        self._reader.start()
        if not ready.wait(DEADLINE) or not found:
            self.stop()
            raise AssertionError(f"the docs server did not start: {''.join(self.lines)}")
        self.url = found[0]
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(DEADLINE)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        if self.process.stderr is not None:
            self.process.stderr.close()

    def restart(self) -> DocsServer:
        self.stop()
        return DocsServer(self.port)


def mcp(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("mcp", *args, env=home.env)


def define(
    home: Home,
    *,
    docs_url: str | None = None,
    notes: bool = True,
    extra: Sequence[tuple[str, ...]] = (),
    timeouts: dict[str, Any] | None = None,
    restart: dict[str, Any] | None = None,
) -> None:
    """``compozy mcp add`` the test servers, then set their timeouts in ``mcp.yaml``."""
    if notes:
        added = mcp(
            home,
            "add",
            "-e",
            f"PYTHONPATH={REPO}",
            "notes",
            "--",
            sys.executable,
            "-m",
            "tests.upstream.servers.notes",
        )
        assert added.returncode == 0, added.stderr
    if docs_url is not None:
        added = mcp(home, "add", "docs", docs_url)
        assert added.returncode == 0, added.stderr
    for args in extra:
        added = mcp(home, "add", *args)
        assert added.returncode == 0, added.stderr
    path = Path(home.env["COMPOZY_HOME"]) / "mcp.yaml"
    data = yaml.safe_load(path.read_text())
    for server in data["servers"].values():
        server["timeouts"] = timeouts or TIMEOUTS
        server["restart"] = restart or RESTART
    path.write_text(yaml.safe_dump(data))


def listing(home: Home, *args: str) -> dict[str, dict[str, Any]]:
    """``compozy mcp list -o json``, by server name."""
    import json

    done = mcp(home, "list", "-o", "json", *args)
    assert done.returncode == 0, done.stderr
    return {row["name"]: row for row in json.loads(done.stdout)["servers"]}


def connection(home: Home, server: str) -> dict[str, Any] | None:
    """What the one running proxy reports about ``server``."""
    rows = listing(home)
    found = rows[server]["connections"] if server in rows else []
    return found[0] if found else None


@asynccontextmanager
async def proxy_client(
    home: Home, mode: Mode = "legacy", *, args: Sequence[str] = (), **client: Any
) -> AsyncIterator[Client]:
    """``compozy proxy ARGS`` started by the SDK's stdio client; a client on it."""
    params = StdioServerParameters(
        command=str(COMPOZY), args=["proxy", *args], env=dict(home.env), cwd=str(REPO)
    )
    async with spawned(home, params, mode, "upstream", **client) as opened:
        yield opened


def stop_process(pid: int, sig: int = signal.SIGKILL) -> None:
    os.kill(pid, sig)
