"""Issue 28, items 2-4: several daemons on one store (SQLite, and PostgreSQL in the postgres
tier). A session made on one daemon,
prompted on another, its permission request answered on a third; a cancel taken by a daemon
that does not run the agent; events of a turn streamed by a daemon that does not run it; a
one-shot token replayed through three daemons at once; the owner killed with -9 mid-turn and
its session taken over by another daemon once its lease expires."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import COMPOZY, Daemon
from tests.cluster.support import children, one_store_daemons, turns, wait_for

from compozy_mcp.runtime import _procfs as procfs

pytestmark = pytest.mark.process


def _create(daemon: Daemon) -> str:
    with daemon.client() as http:
        made = http.post("/api/sessions", json={"agent_name": "g", "provider": "echo"})
    assert made.status_code == 201, made.text
    return str(made.json()["session"]["id"])


def _prompt(daemon: Daemon, session_id: str, text: str, **fields: Any) -> dict[str, Any]:
    with daemon.client() as http:
        sent = http.post(f"/api/sessions/{session_id}/prompt", json={"prompt": text, **fields})
    assert sent.status_code == 200, sent.text
    body: dict[str, Any] = sent.json()
    return body


def _follow(daemon: Daemon, session_id: str, frames: list[dict[str, Any]]) -> threading.Thread:
    """Stream the session's events from ``daemon`` until the next turn ends."""

    def stream() -> None:
        with (
            daemon.client() as http,
            http.stream(
                "GET",
                f"/api/sessions/{session_id}/events",
                params={"until": "turn_end", "cursor": 0},
                headers={"Accept": "text/event-stream"},
            ) as response,
        ):
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[6:]))

    follower = threading.Thread(target=stream, daemon=True)
    follower.start()
    return follower


def test_made_on_one_daemon_prompted_on_another_answered_on_a_third(
    tmp_path: Path, store_url: str | None
) -> None:
    with one_store_daemons(tmp_path, 3, store_url) as (first, second, third):
        identities = []
        for daemon in (first, second, third):
            with daemon.client() as http:
                identities.append(http.get("/api/health").json()["daemon"])
        assert [d["address"] for d in identities] == [first.url, second.url, third.url]
        assert len({d["id"] for d in identities}) == 3
        sid = _create(first)
        frames: list[dict[str, Any]] = []
        follower = _follow(first, sid, frames)
        _prompt(second, sid, "write the notes")

        def pending() -> str | None:
            with third.client() as http:
                record = http.get(f"/api/sessions/{sid}").json()["session"]
            waiting = record["pending_interactions"]
            return str(waiting[0]["interaction_id"]) if waiting else None

        interaction = wait_for(pending, "the permission request, seen on the third daemon")
        with third.client() as http:
            answer = http.post(
                f"/api/sessions/{sid}/approve",
                json={"interaction_id": interaction, "decision": "allow-once"},
            )
        assert answer.status_code == 200, answer.text
        assert answer.json()["decision"] == "allow-once"
        follower.join(timeout=60)
        # the first daemon's stream saw the turn the second daemon's agent ran
        kinds = [frame["kind"] for frame in frames]
        assert "permission_requested" in kinds
        assert kinds[-1] == "turn_ended"
        assert frames[-1]["payload"] == {"status": "completed", "stop_reason": "end_turn"}
        said = "".join(
            f["payload"]["content"]["text"] for f in frames if f["kind"] == "agent_message_chunk"
        )
        assert said == "wrote notes.txt"
        # the agent runs on the daemon that took the first prompt, and only there
        assert len(children(second.process.pid)) == 1
        assert children(first.process.pid) == children(third.process.pid) == set()

        # a prompt (waited for) taken by the third daemon runs on the second one's agent
        done = _prompt(third, sid, "hello", wait=True, timeout_seconds=25)
        assert done["turn"]["status"] == "completed"
        assert done["turn"]["final_message"] == "echo: hello"
        assert children(first.process.pid) == children(third.process.pid) == set()

        # a cancel taken by the first daemon stops the turn running on the second
        slow = _prompt(first, sid, "slow 30")["turn"]["turn_id"]
        wait_for(
            lambda: any(
                t["turn_id"] == slow and t["status"] == "running" for t in turns(first, sid)
            ),
            "the slow turn to run",
        )
        with first.client() as http:
            cancelled = http.post(f"/api/sessions/{sid}/cancel", json={})
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["running_turn_id"] == slow
        ended = wait_for(
            lambda: next(
                (t for t in turns(third, sid) if t["turn_id"] == slow and t["ended_at"]), None
            ),
            "the cancelled turn to end",
        )
        assert ended["status"] == "cancelled"
        # the agent is still the second daemon's, ready for the next turn
        again = _prompt(first, sid, "still there", wait=True, timeout_seconds=25)
        assert again["turn"]["final_message"] == "echo: still there"
        assert len(children(second.process.pid)) == 1
        # archived on the third daemon: the second one ends its agent
        with third.client() as http:
            assert http.post(f"/api/sessions/{sid}/archive", json={}).status_code == 200
        wait_for(lambda: children(second.process.pid) == set(), "the owner to end its agent")


def test_the_owner_killed_mid_turn_is_taken_over_once_its_lease_expires(
    tmp_path: Path, store_url: str | None
) -> None:
    # a short lease, for a quick failover; long enough that a daemon starved of CPU on a busy
    # machine (renewing every third of it) is not taken for dead while it runs the slow turn
    lease = "5"
    with one_store_daemons(tmp_path, 2, store_url, COMPOZY_LEASE_SECONDS=lease) as (owner, other):
        sid = _create(owner)
        assert _prompt(owner, sid, "hi", wait=True)["turn"]["status"] == "completed"
        cut = _prompt(owner, sid, "slow 30")["turn"]["turn_id"]
        wait_for(
            lambda: any(
                t["turn_id"] == cut and t["status"] == "running" for t in turns(other, sid)
            ),
            "the slow turn to run on its owner",
        )
        agents = children(owner.process.pid)
        assert len(agents) == 1
        killed_at = time.monotonic()
        owner.process.send_signal(signal.SIGKILL)
        owner.process.wait(timeout=10)
        # acknowledged while the owner is dead and its lease still runs: not lost
        done = _prompt(other, sid, "after the failover", wait=True, timeout_seconds=25)
        failover = time.monotonic() - killed_at
        assert done["turn"]["status"] == "completed", (done, turns(other, sid))
        assert done["turn"]["final_message"] == "echo: after the failover"
        print(f"\nfailover (kill -9 to the next completed turn, lease {lease} s): {failover:.2f} s")
        history = {t["turn_id"]: t for t in turns(other, sid)}
        # the turn cut off is marked as a restart marks it
        assert history[cut]["status"] == "cancelled"
        assert history[cut]["stop_reason"] == "daemon_restarted"
        assert [t["status"] for t in history.values()] == ["completed", "cancelled", "completed"]
        assert len(children(other.process.pid)) == 1
        # the killed daemon's agent ended on its own (its stdin closed)
        wait_for(lambda: not any(procfs.running(pid) for pid in agents), "the orphan to end")


RENAME = "compozy__session_rename"
EXIT_APPROVAL = 7


def test_one_token_replayed_through_three_daemons_at_once_runs_once(
    tmp_path: Path, store_url: str | None
) -> None:
    with one_store_daemons(tmp_path, 3, store_url, COMPOZY_PERMISSION_MODE="default") as daemons:
        target = ("--url", str(daemons[0].url))
        env = {"PATH": "/usr/bin:/bin", "COMPOZY_HOME": str(tmp_path / "cli-home")}
        base = [str(COMPOZY)]

        def cli(*args: str, url: str | None) -> subprocess.CompletedProcess[str]:
            at = ("--url", url) if url else target
            return subprocess.run(
                [*base, *at, *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )

        made = cli("session", "create", "--agent", "general", "--id", "sess-racer", url=None)
        assert made.returncode == 0, made.stderr
        minted = cli(
            "approvals",
            "mint",
            RENAME,
            "--session",
            "sess-racer",
            "--input",
            json.dumps({"session_id": "sess-racer", "name": "raced"}),
            "-o",
            "json",
            url=None,
        )
        assert minted.returncode == 0, minted.stderr
        token = json.loads(minted.stdout)["approval"]["token"]
        args = [
            "tool",
            "invoke",
            RENAME,
            "--session",
            "sess-racer",
            "--approval-token",
            token,
            "--input",
            json.dumps({"session_id": "sess-racer", "name": "raced", "result_view": "full"}),
            "-o",
            "json",
        ]
        racers = [
            subprocess.Popen(
                [*base, "--url", str(daemon.url), *args],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for daemon in daemons
            for _ in range(2)
        ]
        outcomes = []
        for racer in racers:
            try:
                out, err = racer.communicate(timeout=60)
            finally:
                if racer.poll() is None:
                    racer.kill()
                    racer.wait()
            outcomes.append((racer.returncode, out, err))
        codes = sorted(code for code, _, _ in outcomes)
        assert codes == [0] + [EXIT_APPROVAL] * (len(racers) - 1), outcomes
        for code, out, _ in outcomes:
            if code != 0:
                error = json.loads(out)["error"]
                assert error["reason"] == "approval_token_replayed"
