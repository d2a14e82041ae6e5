"""Issue 28, item 2: hooks behave the same whichever daemon takes the call. A command hook
stored through one daemon (a ``tool.pre_call`` deny) refuses the call when it reaches another
daemon of the same store (SQLite, and PostgreSQL in the postgres tier), and stops refusing on
every daemon once a third one disables it."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Daemon
from tests.cluster.support import one_store_daemons, wait_for

pytestmark = pytest.mark.process

RENAME = "compozy__session_rename"
#: a deny: exit code 2, stderr the reason (docs/hooks.md, "Command hooks: the conventions")
FROZEN = "echo 'renaming is frozen' >&2; exit 2"


def _invoke(daemon: Daemon, tool: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with daemon.client() as http:
        answer = http.post(f"/api/tools/{tool}/invoke", json={"input": arguments})
    body: dict[str, Any] = answer.json()
    return answer.status_code, body


def _name(daemon: Daemon, session_id: str) -> str | None:
    with daemon.client() as http:
        session = http.get(f"/api/sessions/{session_id}", params={"result_view": "full"})
    name: str | None = session.json()["session"].get("name")
    return name


def test_a_hook_stored_through_one_daemon_denies_the_call_another_daemon_takes(
    tmp_path: Path, store_url: str | None
) -> None:
    with one_store_daemons(tmp_path, 3, store_url) as (first, second, third):
        with first.client() as http:
            made = http.post("/api/sessions", json={"agent_name": "g", "provider": "echo"})
        assert made.status_code == 201, made.text
        sid = str(made.json()["session"]["id"])
        hook = {
            "id": "no-rename",
            "event": "tool.pre_call",
            "matcher": {"tool": RENAME},
            "command": FROZEN,
        }
        code, body = _invoke(first, "compozy__hooks_create", hook)
        assert code == 200, body
        attempts = iter(range(1_000_000))

        def denied_on(daemon: Daemon) -> dict[str, Any] | None:
            """A rename through ``daemon``: its error once the daemon has the hook (a daemon
            picks up a hook another one stored within a second), else ``None``."""
            code, body = _invoke(daemon, RENAME, {"session_id": sid, "name": f"n{next(attempts)}"})
            if code == 200:
                return None
            assert code == 403, body
            error: dict[str, Any] = body["error"]
            return error

        def allowed_on(daemon: Daemon) -> bool:
            return denied_on(daemon) is None

        for daemon in (second, third):
            error = wait_for(partial(denied_on, daemon), "the other daemon to run the stored hook")
            assert (error["code"], error["reason"]) == ("tool_denied", "hook_denied"), error
        # a denied call changed nothing: the name is the last one a daemon let through
        before = _name(first, sid)
        assert denied_on(second) is not None
        assert _name(third, sid) == before

        # disabled through the third daemon: the first and the second let the rename through
        code, body = _invoke(third, "compozy__hooks_disable", {"hook_id": "no-rename"})
        assert code == 200, body
        for daemon in (first, second):
            wait_for(partial(allowed_on, daemon), "the disabled hook to stop running everywhere")
