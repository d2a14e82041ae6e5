"""After kill -9 of a daemon, what its agents started in the background is ended by the next
daemon (issue 22): every agent's process group is noted while it runs
(``$COMPOZY_HOME/run/agents``), and a daemon starting ends the groups whose owner is gone."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from tests.api.support import Home, running_daemon

from compozy_mcp.runtime import _procfs as procfs

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def test_a_daemon_killed_with_sigkill_leaves_nothing_the_next_one_does_not_end(
    tmp_path: Path,
) -> None:
    home = Home.make(tmp_path)
    pidfile = tmp_path / "child.pid"
    home.path.mkdir(parents=True, exist_ok=True, mode=0o700)
    args = ["-m", "tests.runtime.hostile_agents", "background-child", str(pidfile)]
    (home.path / "agents.yaml").write_text(
        "agents:\n  background:\n"
        f"    command: {sys.executable}\n"
        f"    args: [{', '.join(repr(a) for a in args)}]\n"
        f"    env: {{PYTHONPATH: {str(ROOT)!r}}}\n"
    )
    child = 0
    try:
        with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon:
            with daemon.client() as http:
                made = http.post(
                    "/api/sessions", json={"agent_name": "a", "provider": "background"}
                ).json()
                sid = made["session"]["id"]
                turn = http.post(
                    f"/api/sessions/{sid}/prompt", json={"prompt": "hello", "wait": True}
                ).json()["turn"]
            assert turn["status"] == "completed"
            child = int(pidfile.read_text())
            assert (home.path / "run" / "agents").is_dir()
            daemon.process.send_signal(signal.SIGKILL)
            daemon.process.wait(timeout=30)
        time.sleep(0.5)
        assert procfs.running(child)  # the agent went with its stdin; what it started did not
        with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as again:
            with again.client() as http:
                assert http.get("/api/health").status_code in (200, 503)
            deadline = time.monotonic() + 10
            while procfs.running(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not procfs.running(child)
            assert list((home.path / "run" / "agents").glob("*.json")) == []
    finally:
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
