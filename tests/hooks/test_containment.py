"""Issue 13, item 4, for hooks that need no process (webhooks served by a thread, in-process
hooks): a hook that times out, fails or answers garbage never breaks a call or holds it past
its timeout; a sync tool.pre_call hook that fails follows ``on_error``; every run is recorded
with why. Command hooks: ``test_command_hooks.py`` (process tier)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import anyio
import pytest
from tests.conftest import Caller
from tests.hooks.support import Answer, Webhook, patch_answer, runs

from compozy_mcp.assembly import App
from compozy_mcp.errors import HookDenied, HookFailed

pytestmark = pytest.mark.anyio

#: a bound no call waiting on a 0.3 s hook may reach: generous on a loaded machine
BOUND = 5.0
#: how long a webhook holds its answer at most, waiting for the test to release it
HELD = 10.0


async def _hook(call: Caller, server: Webhook, **extra: Any) -> None:
    await call(
        "compozy__hooks_create",
        {"id": "h", "event": "tool.pre_call", "url": server.url, **extra},
    )


async def _timed_create(call: Caller) -> float:
    started = time.monotonic()
    await call.create()
    return time.monotonic() - started


async def test_a_webhook_past_its_timeout_lets_the_call_run_and_is_recorded(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: Answer(delay=3)
    await _hook(call, server, timeout=0.3)
    assert await _timed_create(call) < BOUND
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["detail"]) == (
        "timeout",
        "allow",
        "timed out after 0.3 s",
    )


async def test_with_on_error_deny_a_failed_hook_refuses_the_call(
    app: App, call: Caller, server: Webhook
) -> None:
    server.respond = lambda path, payload: Answer(status=500)
    await _hook(call, server, on_error="deny", matcher={"tool": "compozy__session_create"})
    with pytest.raises(HookFailed) as caught:
        await call.create()
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        "tool_denied",
        "hook_failed",
        'tool "compozy__session_create" call denied: hook "h" answered HTTP 500 and its '
        'on_error is "deny"',
    )
    assert await call.structured("compozy__session_list") == {"sessions": []}
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"]) == ("error", "deny")


@pytest.mark.parametrize(
    ("answer", "outcome", "detail"),
    [
        (Answer(status=502), "error", "answered HTTP 502"),
        (Answer(status=302), "error", "answered HTTP 302"),
        (Answer(body=b"not json"), "invalid_output", "printed output that is not JSON: 'not json'"),
        (
            Answer(body=b"[1, 2]"),
            "invalid_output",
            "printed JSON that is a list, not an object",
        ),
        (
            patch_answer({"deny": "yes"}),
            "invalid_output",
            'patch field "deny" must be a boolean',
        ),
    ],
)
async def test_a_failing_hook_is_allowed_by_default_and_the_run_log_says_why(
    app: App, call: Caller, server: Webhook, answer: Answer, outcome: str, detail: str
) -> None:
    server.respond = lambda path, payload: answer
    await _hook(call, server)
    await call.create()
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["detail"]) == (outcome, "allow", detail)


async def test_an_unreachable_webhook_is_a_failed_run(app: App, call: Caller) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    await call(
        "compozy__hooks_create",
        {"id": "gone", "event": "tool.pre_call", "url": f"http://127.0.0.1:{port}/"},
    )
    await call.create()
    (run,) = await runs(app)
    assert run["outcome"] == "error"
    assert run["detail"].startswith("could not be reached (")


async def test_an_async_hook_does_not_hold_the_call_and_is_recorded_when_it_ends(
    app: App, call: Caller, server: Webhook
) -> None:
    released = threading.Event()

    def held(path: str, payload: dict[str, Any]) -> Answer:
        released.wait(HELD)  # until the call has returned
        return Answer(body=b'{"deny": true}')

    server.respond = held
    await _hook(call, server, mode="async", timeout=HELD * 2)
    started = time.monotonic()
    await call.create()  # a deny from an async hook changes nothing
    assert time.monotonic() - started < HELD / 2
    released.set()
    (run,) = await runs(app)  # waits for the hook
    assert (run["outcome"], run["decision"], run["patch_applied"]) == ("denied", "none", False)


async def test_a_deny_is_recorded_with_its_reason(app: App, call: Caller, server: Webhook) -> None:
    server.respond = lambda path, payload: patch_answer({"deny": True, "deny_reason": "frozen"})
    await _hook(call, server)
    with pytest.raises(HookDenied, match='denied by hook "h": frozen'):
        await call.create()
    (run,) = await runs(app)
    assert (run["outcome"], run["decision"], run["detail"]) == ("denied", "deny", "denied: frozen")


async def test_an_in_process_hook_that_raises_or_hangs_never_breaks_the_call(
    app: App, call: Caller, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(payload: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    async def stuck(payload: dict[str, Any]) -> None:
        await anyio.sleep(60)

    app.dispatcher.add_hook(broken)
    app.hooks.registry.add_code_hook(stuck, timeout=0.2)
    started = time.monotonic()
    await call.create()
    assert time.monotonic() - started < BOUND
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "raised an exception" in logged
    assert "timed out after 0.2 s" in logged
