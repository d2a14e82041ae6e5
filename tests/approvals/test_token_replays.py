"""Issue 14, item 4: a one-shot token is single use across processes. One token, sent by
several ``compozy tool invoke`` processes at once against one store: exactly one call runs;
every other ends in ``tool_approval_required`` / ``approval_token_replayed``.

Also through a daemon (``compozy serve``): several processes sending the same token over HTTP.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.api.support import COMPOZY, Home, compozy, running_daemon, short_dir

pytestmark = pytest.mark.process

RACERS = 6
SESSION = "sess-racer"
RENAME = "compozy__session_rename"
#: exit code of a call waiting for approval (cli/reporting.py)
EXIT_APPROVAL = 7


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = Home.make(tmp_path)
    # these sessions are held for approval: the default mode, not the test homes' bypass
    return made.with_env(COMPOZY_PERMISSION_MODE="default")


def _setup(home: Home, *target: str) -> str:
    created = compozy(home, *target, "session", "create", "--agent", "general", "--id", SESSION)
    assert created.returncode == 0, created.stderr
    minted = compozy(
        home,
        *target,
        "approvals",
        "mint",
        RENAME,
        "--session",
        SESSION,
        "--input",
        json.dumps({"session_id": SESSION, "name": "raced"}),
        "-o",
        "json",
    )
    assert minted.returncode == 0, minted.stderr
    token: str = json.loads(minted.stdout)["approval"]["token"]
    return token


def _race(home: Home, token: str, target: Sequence[str]) -> list[subprocess.CompletedProcess[str]]:
    """Start every racer first, then collect them: they run at once."""
    args = [
        str(COMPOZY),
        *target,
        "tool",
        "invoke",
        RENAME,
        "--session",
        SESSION,
        "--approval-token",
        token,
        "--input",
        json.dumps({"session_id": SESSION, "name": "raced", "result_view": "full"}),
        "-o",
        "json",
    ]
    racers = [
        subprocess.Popen(
            args, env=home.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(RACERS)
    ]
    done: list[subprocess.CompletedProcess[str]] = []
    for racer in racers:
        try:
            out, err = racer.communicate(timeout=120)
        finally:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
        done.append(subprocess.CompletedProcess(args, racer.returncode, out, err))
    return done


def _exactly_one_ran(done: list[subprocess.CompletedProcess[str]]) -> None:
    codes = sorted(result.returncode for result in done)
    assert codes == [0] + [EXIT_APPROVAL] * (RACERS - 1), [(r.returncode, r.stderr) for r in done]
    for result in done:
        if result.returncode == 0:
            assert json.loads(result.stdout)["result"]["structured"]["session"]["name"] == "raced"
        else:
            error = json.loads(result.stdout)["error"]
            assert (error["code"], error["reason"]) == (
                "tool_approval_required",
                "approval_token_replayed",
            )


def test_concurrent_replays_of_one_token_from_several_processes_one_store(home: Home) -> None:
    token = _setup(home)
    _exactly_one_ran(_race(home, token, ()))


def test_concurrent_replays_of_one_token_through_a_daemon(home: Home) -> None:
    with (
        short_dir() as where,
        running_daemon(home, "--no-tcp", "--uds", str(where / "d.sock"), listeners=1),
    ):
        target = ("--socket", str(where / "d.sock"))
        token = _setup(home, *target)
        _exactly_one_ran(_race(home, token, target))
