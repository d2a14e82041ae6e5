"""A daemon whose store another process holds: reads of every route stay fast, writes fail
fast as ``store_busy`` (HTTP 503 with ``Retry-After``, a tool error over MCP), and work again
once the lock is released. The figures are printed; the only bound on time is a generous one.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from tests.api.support import Home, running_daemon

pytestmark = [pytest.mark.process, pytest.mark.anyio]
BUSY_WAIT_MS = 500
HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    conn.execute("ROLLBACK")
    """
)


@contextmanager
def lock_held_by_another_process(db: Path) -> Iterator[None]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        assert holder.stdout is not None
        holder.stdin.close()
        holder.wait(timeout=10)
        holder.stdout.close()


def _timed(
    client: httpx2.Client, method: str, path: str, **kw: object
) -> tuple[float, httpx2.Response]:
    started = time.perf_counter()
    response = client.request(method, path, **kw)  # type: ignore[arg-type]
    return (time.perf_counter() - started) * 1000, response


def test_reads_stay_fast_and_writes_fail_fast_while_another_process_holds_the_store(
    tmp_path: Path,
) -> None:
    home = Home.make(tmp_path).with_env(COMPOZY_STORE_BUSY_TIMEOUT_MS=str(BUSY_WAIT_MS))
    with (
        running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon,
        daemon.client() as api,
    ):
        made = api.post("/api/sessions", json={"agent_name": "general", "session_id": "sess-busy"})
        assert made.status_code == 201, made.text
        figures: dict[str, float] = {}
        with lock_held_by_another_process(home.path / "compozy.db"):
            for name, path in (
                ("GET /api/tools", "/api/tools"),
                ("GET /api/sessions/sess-busy", "/api/sessions/sess-busy"),
                ("GET /api/sessions", "/api/sessions"),
            ):
                figures[name], response = _timed(api, "GET", path)
                assert response.status_code == 200, response.text
            figures["POST /api/sessions"], created = _timed(
                api, "POST", "/api/sessions", json={"agent_name": "general"}
            )
            figures["POST .../invoke (rename)"], invoked = _timed(
                api,
                "POST",
                "/api/tools/compozy__session_rename/invoke",
                json={"input": {"session_id": "sess-busy", "name": "renamed"}},
            )
            figures["GET /api/tools during the failed writes"], after = _timed(
                api, "GET", "/api/tools"
            )
            assert after.status_code == 200
        print("\n".join(f"  {name}: {ms:.1f} ms" for name, ms in figures.items()))
        for response in (created, invoked):
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"] == "1"
            error = response.json()["error"]
            assert (error["code"], error["reason"]) == ("store_busy", "store_locked")
        # generous bounds: reads never wait for the lock; a write waits about BUSY_WAIT_MS
        assert max(v for k, v in figures.items() if k.startswith("GET")) < 1000
        assert figures["POST /api/sessions"] < BUSY_WAIT_MS + 5000
        # nothing half-done: the failed rename changed nothing, and a retry now succeeds
        assert "name" not in api.get("/api/sessions/sess-busy").json()["session"]
        retried = api.post(
            "/api/tools/compozy__session_rename/invoke",
            json={"input": {"session_id": "sess-busy", "name": "renamed"}},
        )
        assert retried.status_code == 200, retried.text


async def test_over_mcp_a_busy_store_is_a_tool_error_naming_store_busy(tmp_path: Path) -> None:
    from mcp.client import Client

    home = Home.make(tmp_path).with_env(COMPOZY_STORE_BUSY_TIMEOUT_MS=str(BUSY_WAIT_MS))
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon:
        assert daemon.url is not None
        async with Client(daemon.url + "/mcp", cache=None) as client:
            with lock_held_by_another_process(home.path / "compozy.db"):
                result = await client.call_tool("compozy__session_create", {"agent_name": "g"})
                listed = await client.call_tool("compozy__session_list", {})
            assert result.is_error is True
            assert isinstance(result.structured_content, dict)
            error = result.structured_content["error"]
            assert (error["code"], error["reason"]) == ("store_busy", "store_locked")
            assert listed.is_error is False  # a read went on meanwhile
