"""Command hooks, by Claude Code's conventions (issue 13, items 1 and 4): the payload as JSON on
stdin, a patch as JSON on stdout (empty: no patch), exit code 2 denies with stderr as the
reason. A hook that sleeps past its timeout, exits non-zero, prints invalid JSON or hangs
never breaks a call or holds it past its timeout, leaves no process behind, and the run log
says why."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import runs
from tests.leftovers import running

from compozy_mcp.assembly import App
from compozy_mcp.errors import HookDenied, HookFailed

pytestmark = [pytest.mark.process, pytest.mark.anyio]

#: no call that waits for a 0.5 s timeout may take this long, even on a loaded machine
BOUND = 8.0


async def _hook(call: Caller, command: str | list[str], **extra: Any) -> None:
    await call(
        "compozy__hooks_create",
        {"id": extra.pop("id", "h"), "event": "tool.pre_call", "command": command, **extra},
    )


async def _timed_create(call: Caller) -> float:
    started = time.monotonic()
    await call.create()
    return time.monotonic() - started


def _gone_within(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.02)
    return False


async def test_the_payload_arrives_on_stdin_and_the_patch_is_read_from_stdout(
    app: App, call: Caller, tmp_path: Path
) -> None:
    seen = tmp_path / "payload.json"
    await call.create(session_id="sess-example")
    patch = '{ "tool_input": { "session_id": "sess-example", "result_view": "full" } }'
    script = (
        f"cat > {seen}; echo \"$COMPOZY_HOOK_ID $COMPOZY_HOOK_EVENT\" >&2; printf '%s' '{patch}'"
    )
    await _hook(call, script, matcher={"tool": "compozy__session_status"})
    result = await call("compozy__session_status", {"session_id": "sess-example"})
    assert "supervision" in result.structured["session"]
    payload = json.loads(seen.read_text())
    assert (payload["event"], payload["tool_input"]) == (
        "tool.pre_call",
        {"session_id": "sess-example"},
    )
    (run,) = await runs(app)
    assert (run["outcome"], run["patch_applied"], run["exit_code"]) == ("ok", True, 0)
    assert run["stderr_tail"] == "h tool.pre_call\n"


async def test_an_argv_command_runs_without_a_shell(app: App, call: Caller, tmp_path: Path) -> None:
    script = tmp_path / "guard.py"
    script.write_text(
        "import json, sys\n"
        "payload = json.load(sys.stdin)\n"
        "print(json.dumps({'deny': True, 'deny_reason': 'no ' + payload['tool_id']}))\n"
    )
    await _hook(call, ["python3", str(script)])
    with pytest.raises(HookDenied, match='denied by hook "h": no compozy__session_create'):
        await call.create()


async def test_exit_code_2_denies_with_stderr_as_the_reason(app: App, call: Caller) -> None:
    await _hook(call, "echo 'frozen until Monday' >&2; exit 2")
    with pytest.raises(HookDenied) as caught:
        await call.create()
    assert caught.value.message == (
        'tool "compozy__session_create" call denied by hook "h": frozen until Monday'
    )
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["exit_code"]) == ("denied", "deny", 2)
    assert run["detail"] == "exited with code 2: frozen until Monday"


@pytest.mark.parametrize(
    ("command", "outcome", "detail"),
    [
        ("sleep 30", "timeout", "timed out after 0.5 s"),
        ("echo oops >&2; exit 1", "error", "exited with code 1"),
        ("echo '{not json'", "invalid_output", "printed output that is not JSON: '{not json'"),
        ("kill -9 $$", "error", "was killed by signal 9"),
        ("/nonexistent/guard", "error", "exited with code 127"),
    ],
    ids=["sleeps-past-timeout", "exits-non-zero", "prints-invalid-json", "crashes", "missing"],
)
@pytest.mark.parametrize("on_error", ["allow", "deny"])
async def test_a_failing_hook_ends_the_call_as_on_error_says_and_the_run_log_shows_why(
    app: App, call: Caller, command: str, outcome: str, detail: str, on_error: str
) -> None:
    # a short timeout for the hook that sleeps through it; the others have time to fail as
    # they do on a loaded machine, not at the timeout
    timeout = 0.5 if outcome == "timeout" else BOUND / 2
    await _hook(
        call,
        command,
        timeout=timeout,
        on_error=on_error,
        matcher={"tool": "compozy__session_create"},
    )
    started = time.monotonic()
    if on_error == "allow":
        await call.create()
    else:
        with pytest.raises(HookFailed) as caught:
            await call.create()
        assert caught.value.message == (
            f'tool "compozy__session_create" call denied: hook "h" {detail} and its on_error '
            'is "deny"'
        )
    assert time.monotonic() - started < BOUND
    sessions = (await call.structured("compozy__session_list"))["sessions"]
    assert len(sessions) == (1 if on_error == "allow" else 0)
    (run,) = await runs(app, hook_id="h")
    assert (run["outcome"], run["detail"]) == (outcome, detail)
    assert run["decision"] == on_error
    listed = (await call.structured("compozy__hooks_list"))["hooks"]
    assert listed[0]["stats"] == {
        "runs": 1,
        "failed": 1,
        "last_outcome": outcome,
        "last_run_at": "2026-11-10T14:02:11Z",
    }


async def test_a_hook_that_hangs_with_a_child_holding_its_stdout_is_killed_with_the_child(
    app: App, call: Caller, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    # the child keeps stdout open, so the hook's output never ends: a hang
    await _hook(call, f"sleep 300 & echo $! > {pid_file}; wait", timeout=0.5)
    assert await _timed_create(call) < BOUND
    child = int(pid_file.read_text())
    assert _gone_within(child), "the hook's child outlived the hook"
    (run,) = await runs(app)
    assert run["outcome"] == "timeout"


async def test_a_hook_that_exits_leaving_a_background_child_has_the_child_killed(
    app: App, call: Caller, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    await _hook(call, f"sleep 300 >/dev/null 2>&1 & echo $! > {pid_file}; exit 0", timeout=5)
    assert await _timed_create(call) < BOUND
    assert _gone_within(int(pid_file.read_text())), "the hook's child outlived the hook"
    (run,) = await runs(app)
    assert run["outcome"] == "ok"


async def test_an_async_command_hook_does_not_hold_the_call(
    app: App, call: Caller, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    await _hook(call, f"sleep 1; touch {done}", mode="async", timeout=5)
    started = time.monotonic()
    await call.create()
    assert time.monotonic() - started < 1.0
    assert not done.exists()
    (run,) = await runs(app)  # waits for the hook, as a process does before it ends
    assert done.exists()
    assert (run["outcome"], run["decision"]) == ("ok", "none")


async def test_a_stored_hooks_command_runs_in_compozy_home(
    app: App, call: Caller, settings: Any
) -> None:
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "guard.sh").write_text("echo 'from home' >&2; exit 2\n")
    await _hook(call, "sh ./guard.sh")
    with pytest.raises(HookDenied, match="from home"):
        await call.create()


async def test_stderr_keeps_its_tail(app: App, call: Caller) -> None:
    await _hook(call, "for i in $(seq 1 2000); do echo line-$i >&2; done; exit 1")
    await call.create()
    (run,) = await runs(app)
    assert run["stderr_tail"].endswith("line-2000\n")
    assert len(run["stderr_tail"].encode()) <= 4096
