"""``compozy serve`` as a process: which listeners it opens and how it stops."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest
from tests.api.support import Home, running_daemon, short_dir

pytestmark = pytest.mark.process


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home.make(tmp_path_factory.mktemp("daemon"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_daemon_cleanly_and_removes_the_socket(home: Home, sig: int) -> None:
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
    ):
        assert daemon.socket is not None
        assert daemon.socket.exists()
        code = daemon.stop(sig)
        assert code == 0, daemon.stderr
        assert not daemon.socket.exists()
        assert daemon.stderr.rstrip().endswith("compozy serve: stopped")
        assert "Traceback" not in daemon.stderr


def test_no_tcp_serves_only_the_socket_at_its_default_place(home: Home) -> None:
    default_socket = home.path / "compozy.sock"
    if len(str(default_socket)) > 100:
        pytest.skip("the scratch directory is too deep for a Unix socket path")
    with running_daemon(home, "--no-tcp", listeners=1) as daemon:
        assert daemon.url is None
        assert daemon.socket == default_socket
        with daemon.socket_client() as client:
            assert client.get("/api/sessions").json() == {"sessions": []}
        assert daemon.stop() == 0
    assert not default_socket.exists()


def test_no_uds_serves_only_tcp_and_creates_no_socket(home: Home) -> None:
    with (
        short_dir() as where,
        running_daemon(
            home, "--port", "0", "--no-uds", "--uds", str(where / "d.sock"), listeners=1
        ) as daemon,
    ):
        assert daemon.socket is None
        assert "unix:" not in daemon.stderr
        assert not (where / "d.sock").exists()
        with daemon.client() as client:
            assert client.get("/api/tools").status_code == 200


def _mapped(pid: int, library: str) -> bool:
    """Whether process ``pid`` has loaded the extension module ``library`` (its ``.so`` is in
    the process's memory map)."""
    with open(f"/proc/{pid}/maps", encoding="utf-8") as maps:
        return any(library in line for line in maps)


def test_an_idle_daemon_holds_no_template_engine_or_yaml_parser_until_asked(home: Home) -> None:
    """Issue 29, item 5 (memory): Jinja2 and PyYAML are loaded by the first board page and
    the first YAML file read, not by a daemon that serves the API and MCP alone. Seen from
    outside through the extension modules each one maps (MarkupSafe's for Jinja2)."""
    jinja, yaml = "markupsafe/_speedups", "yaml/_yaml"
    with (
        running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon,
        daemon.client() as client,
    ):
        pid = daemon.process.pid
        assert client.get("/api/sessions").status_code == 200
        assert not _mapped(pid, jinja)
        assert not _mapped(pid, yaml)
        page = client.get("/")
        assert page.status_code == 200
        assert "<html" in page.text
        assert _mapped(pid, jinja)
        lint = client.post("/api/loops/validate", json={"definition": "name: x\nnodes: [\n"})
        assert lint.status_code == 200, lint.text
        assert lint.json()["valid"] is False
        assert _mapped(pid, yaml)


#: builds the daemon's app as ``compozy serve`` does, runs its lifespan, and asks it through
#: ASGI: the HTTP API first, then MCP's initialize; says whether the MCP SDK was loaded by each
MCP_ON_DEMAND = textwrap.dedent(
    """
    import asyncio, json, os, sys
    import httpx2
    from compozy_mcp import daemon
    from compozy_mcp.api.auth import Access
    from compozy_mcp.assembly import open_app
    from compozy_mcp.config import Settings

    INITIALIZE = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }

    async def main():
        report = {}
        with open_app(Settings.from_env(os.environ)) as app:
            served = daemon.daemon_app(app, Access.for_host("127.0.0.1", None))
            async with served.router.lifespan_context(served):
                transport = httpx2.ASGITransport(app=served)
                async with httpx2.AsyncClient(
                    transport=transport, base_url="http://127.0.0.1"
                ) as client:
                    listed = await client.get("/api/sessions")
                    health = await client.get("/healthz")
                    report["api"] = [listed.status_code, health.json()["mcp_sessions"]]
                    report["sdk_before"] = "mcp" in sys.modules
                    answer = await client.post(
                        "/mcp",
                        json=INITIALIZE,
                        headers={"Accept": "application/json, text/event-stream"},
                    )
                    report["initialize"] = [
                        answer.status_code, answer.json()["result"]["serverInfo"]["name"]
                    ]
                    report["sdk_after"] = "mcp" in sys.modules
                    report["mcp_sessions"] = (await client.get("/healthz")).json()["mcp_sessions"]
        print(json.dumps(report))

    asyncio.run(main())
    """
)


def test_the_mcp_endpoint_and_the_sdk_are_loaded_by_the_first_mcp_request(home: Home) -> None:
    """Issue 29, item 5: a daemon asked only through its HTTP API never imports the MCP SDK
    (about 30 MiB and 0.7 s of CPU); the first ``/mcp`` request builds the endpoint, which then
    answers as it always did and counts its session."""
    done = subprocess.run(
        [sys.executable, "-c", MCP_ON_DEMAND],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {
        "api": [200, 0],
        "sdk_before": False,
        "initialize": [200, "compozy-mcp"],
        "sdk_after": True,
        "mcp_sessions": 1,
    }
