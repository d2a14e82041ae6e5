"""``compozy hooks ...`` in-process on the embedded store, as a user types it (issue 13, items 1
and 5). Hooks here are webhooks served by a thread; command hooks through the CLI run in
``tests/hooks/test_daemon_hooks.py`` (process tier)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Home, compozy
from tests.hooks.support import Answer, Webhook, patch_answer, webhook, write_hooks

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_CONFLICT = 2, 3, 5


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def ok_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(ok(done))
    return parsed


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


@pytest.fixture
def server() -> Iterator[Webhook]:
    with webhook() as served:
        yield served


def _status(home: Home) -> subprocess.CompletedProcess[str]:
    return compozy(
        home, "tool", "invoke", "compozy__session_status", "--input", '{"session_id":"sess-x"}'
    )


def test_create_then_list_shows_each_hooks_last_outcome_and_failed_runs(
    home: Home, server: Webhook
) -> None:
    server.respond = lambda path, payload: Answer(status=500 if path == "/broken" else 200)
    for name in ("broken", "fine"):
        ok(
            compozy(
                home,
                "hooks",
                "create",
                "--id",
                name,
                "--event",
                "tool.pre_call",
                "--url",
                server.at(f"/{name}"),
                "--tool",
                "compozy__session_*",
            )
        )
    # the operator's command goes through the dispatcher as the tool does: hooks see it
    ok(compozy(home, "session", "create", "--agent", "general", "--id", "sess-x"))
    ok(_status(home))
    ok(_status(home))
    table = ok(compozy(home, "hooks", "list")).splitlines()
    assert table[0].split() == [
        "ID",
        "EVENT",
        "SOURCE",
        "ENABLED",
        "ON_ERROR",
        "RUNS",
        "FAILED",
        "LAST",
    ]
    assert table[1].split() == [
        "broken",
        "tool.pre_call",
        "store",
        "yes",
        "allow",
        "3",
        "3",
        "error",
    ]
    assert table[2].split() == ["fine", "tool.pre_call", "store", "yes", "allow", "3", "0", "ok"]
    listed = ok_json(compozy(home, "hooks", "list", "-o", "json"))
    assert "url" not in listed["hooks"][0]  # compact by default
    full = ok_json(compozy(home, "hooks", "list", "--full", "-o", "json"))
    assert full["hooks"][0]["url"] == server.at("/broken")


def test_runs_shows_why_a_run_failed(home: Home, server: Webhook) -> None:
    server.respond = lambda path, payload: Answer(body=b"garbage")
    ok(
        compozy(
            home, "hooks", "create", "--id", "g", "--event", "tool.pre_call", "--url", server.url
        )
    )
    ok(compozy(home, "session", "create", "--agent", "general"))
    ok(compozy(home, "tool", "invoke", "compozy__session_list"))
    text = ok(compozy(home, "hooks", "runs", "--failed"))
    assert "invalid_output (allow)" in text
    assert "printed output that is not JSON: 'garbage'" in text
    runs = ok_json(compozy(home, "hooks", "runs", "--full", "-o", "json"))["runs"]
    assert runs[0]["tool_id"] == "compozy__session_list"
    assert runs[0]["stderr_tail"] == ""


def test_update_enable_disable_info_and_delete(home: Home, server: Webhook) -> None:
    ok(
        compozy(
            home, "hooks", "create", "--id", "h", "--event", "tool.post_call", "--url", server.url
        )
    )
    changed = ok_json(
        compozy(home, "hooks", "update", "h", "--timeout", "2.5", "--mode", "async", "-o", "json")
    )
    assert (changed["hook"]["timeout"], changed["hook"]["mode"]) == (2.5, "async")
    assert ok(compozy(home, "hooks", "disable", "h")).strip() == "h disabled"
    assert ok(compozy(home, "hooks", "enable", "h")).strip() == "h enabled"
    info = ok(compozy(home, "hooks", "info", "h"))
    assert "tool.post_call  async, timeout 2.5 s, on_error allow" in info
    assert ok(compozy(home, "hooks", "delete", "h")).strip() == "h deleted"
    missing = compozy(home, "hooks", "info", "h", "-o", "json")
    assert missing.returncode == EXIT_NOT_FOUND
    assert json.loads(missing.stdout)["error"]["reason"] == "hook_not_found"


def test_create_with_headers_never_shows_their_values(home: Home, server: Webhook) -> None:
    made = ok_json(
        compozy(
            home,
            "hooks",
            "create",
            "--event",
            "tool.pre_call",
            "--url",
            server.url,
            "--header",
            "Authorization: Bearer s3cret",
            "-o",
            "json",
        )
    )
    assert made["hook"]["headers"] == {"Authorization": "<redacted>"}
    assert "s3cret" not in ok(compozy(home, "hooks", "list", "--full", "-o", "json"))


def test_test_shows_decision_patch_checked_input_and_stderr(home: Home, server: Webhook) -> None:
    server.respond = lambda path, payload: patch_answer(
        {"tool_input": {**payload["tool_input"], "result_view": "full"}}
    )
    ok(
        compozy(
            home,
            "hooks",
            "create",
            "--id",
            "full",
            "--event",
            "tool.pre_call",
            "--url",
            server.url,
            "--tool",
            "compozy__session_status",
        )
    )
    text = ok(compozy(home, "hooks", "test", "full"))
    assert text.splitlines()[0].startswith("hook full on tool.pre_call: ok, decision allow (")
    assert 'patch: {"tool_input":{"session_id":"sess-example","result_view":"full"}}' in text
    assert (
        'tool_input (checked as the call would): {"session_id":"sess-example",'
        '"result_view":"full"}' in text
    )
    assert "result_view: full" in text
    assert "stderr: (empty)" in text
    refused = ok(compozy(home, "hooks", "test", "full", "--tool", "compozy__skill_view"))
    assert (
        'the call would fail: tool_invalid_input/schema_invalid: tool "compozy__skill_view" '
        'returns a single result and does not accept "result_view"' in refused
    )
    # nothing ran: no session was made, no run recorded
    assert ok_json(compozy(home, "hooks", "runs", "-o", "json")) == {"runs": []}


def test_test_with_a_payload_file(home: Home, server: Webhook, tmp_path: Path) -> None:
    server.respond = lambda path, payload: patch_answer({})
    ok(
        compozy(
            home, "hooks", "create", "--id", "o", "--event", "tool.post_call", "--url", server.url
        )
    )
    payload = {"event": "tool.post_call", "tool_id": "compozy__session_status", "tool_input": {}}
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload))
    result = ok_json(compozy(home, "hooks", "test", "o", "--payload", str(path), "-o", "json"))
    assert result["payload"] == payload
    assert server.payloads("/") == [payload]
    assert (result["outcome"], result["decision"]) == ("ok", "none")


def test_test_of_a_hook_on_many_tools_asks_which_tool(home: Home, server: Webhook) -> None:
    ok(
        compozy(
            home, "hooks", "create", "--id", "all", "--event", "tool.pre_call", "--url", server.url
        )
    )
    done = compozy(home, "hooks", "test", "all")
    assert done.returncode == EXIT_USAGE
    assert 'hook "all" matches every tool: name the tool of the sample with --tool' in done.stderr


def test_list_warns_about_a_hooks_file_that_cannot_be_loaded(home: Home) -> None:
    home.path.mkdir(parents=True, exist_ok=True)
    home.path.chmod(0o700)  # as compozy makes it: a wider home draws a warning of its own
    (home.path / "hooks.yaml").write_text("hooks: [")
    done = compozy(home, "hooks", "list")
    assert ok(done).strip() == "no hooks"
    assert done.stderr == (
        "compozy: warning: $COMPOZY_HOME/hooks.yaml: is not valid YAML at line 1\n"
    )


def test_file_hooks_are_listed_and_read_only(home: Home, server: Webhook) -> None:
    write_hooks(home.path / "hooks.yaml", {"id": "f", "event": "tool.pre_call", "url": server.url})
    assert ok(compozy(home, "hooks", "list")).splitlines()[1].split()[:3] == [
        "f",
        "tool.pre_call",
        "home",
    ]
    done = compozy(home, "hooks", "disable", "f", "-o", "json")
    assert done.returncode == EXIT_CONFLICT
    assert json.loads(done.stdout)["error"]["reason"] == "hook_read_only"


def test_events_explains_the_conventions(home: Home) -> None:
    text = ok(compozy(home, "hooks", "events"))
    assert "exit code 2 denies with stderr as the reason" in text
    assert text.startswith("tool.pre_call\n")


def test_create_needs_an_event_and_one_way_to_run(home: Home) -> None:
    both = compozy(
        home, "hooks", "create", "--event", "tool.pre_call", "--command", "x", "--url", "y"
    )
    assert both.returncode == EXIT_USAGE
    assert "not allowed with argument" in both.stderr
    missing = compozy(home, "hooks", "create", "--event", "tool.pre_call", "--argv", "[1")
    assert missing.returncode == EXIT_USAGE
    assert "--argv is not valid JSON" in missing.stderr


HEAVY = ("mcp.server", "uvicorn", "starlette")
PROBE = (
    "import contextlib, io, json, sys\n"
    "from compozy_mcp.cli.main import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(sys.argv[1:])\n"
    f"heavy = {HEAVY!r}\n"
    "print(json.dumps({'code': code, 'loaded': sorted(name for name in sys.modules "
    "if any(name == h or name.startswith(h + '.') for h in heavy))}))\n"
)


@pytest.mark.process
@pytest.mark.parametrize("args", [["hooks", "list"], ["hooks", "events"]], ids=" ".join)
def test_hooks_commands_never_import_the_mcp_server_or_http_stack(
    home: Home, args: list[str]
) -> None:
    """Project rule: a command that needs no MCP server does not pay for importing one."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"code": 0, "loaded": []}
