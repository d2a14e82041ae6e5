"""``compozy session ...`` in-process on the embedded store, as a user types it.

``-o json`` prints the session route's payload: the complete record, the same one
``compozy__session_status`` returns with ``result_view: "full"``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from tests.api.support import Home, compozy

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_CONFLICT = 2, 3, 5
CREATE = (
    "session",
    "create",
    "--agent",
    "general",
    "--id",
    "sess-example",
    "--name",
    "Fix flaky upload test",
    "--branch",
    "fix/upload-flake",
    "--provider",
    "claude",
    "--model",
    "claude-opus-5-5",
    "--reasoning-effort",
    "medium",
    "-o",
    "json",
)


def ok_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def error_json(done: subprocess.CompletedProcess[str], code: int) -> dict[str, Any]:
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    parsed = json.loads(done.stdout)
    assert list(parsed) == ["error"]
    error: dict[str, Any] = parsed["error"]
    return error


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Home, dict[str, Any]]:
    home = Home.make(tmp_path_factory.mktemp("sessions"))
    created = ok_json(compozy(home, *CREATE))
    return home, created


def test_session_create_prints_the_full_record_from_its_flags(
    shared: tuple[Home, dict[str, Any]],
) -> None:
    _, created = shared
    assert list(created) == ["session"]
    session = created["session"]
    assert (session["id"], session["name"], session["branch"]) == (
        "sess-example",
        "Fix flaky upload test",
        "fix/upload-flake",
    )
    assert session["runtime"]["selected"] == {
        "provider": "claude",
        "model": "claude-opus-5-5",
        "reasoning_effort": "medium",
    }
    assert session["lineage"]["permission_policy"]["tools"] == ["*"]  # full, not compact


def test_session_status_json_is_the_record_session_status_returns_in_full(
    shared: tuple[Home, dict[str, Any]],
) -> None:
    home, created = shared
    status = ok_json(compozy(home, "session", "status", "sess-example", "-o", "json"))
    tool_input = json.dumps({"session_id": "sess-example", "result_view": "full"})
    invoked = ok_json(
        compozy(
            home, "tool", "invoke", "compozy__session_status", "--input", tool_input, "-o", "json"
        )
    )
    assert status == invoked["result"]["structured"] == created


def test_session_status_text_is_a_readable_summary(shared: tuple[Home, dict[str, Any]]) -> None:
    home, _ = shared
    done = compozy(home, "session", "status", "sess-example")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "sess-example  Fix flaky upload test"
    text = done.stdout
    assert "agent:      general (user)" in text
    assert "branch fix/upload-flake" in text
    assert "claude/claude-opus-5-5 (medium)" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_session_list_pages_with_limit_and_cursor(tmp_path_factory: pytest.TempPathFactory) -> None:
    home = Home.make(tmp_path_factory.mktemp("pages"))
    for ident in ("sess-one", "sess-two"):
        ok_json(
            compozy(home, "session", "create", "--agent", "general", "--id", ident, "-o", "json")
        )
    first = ok_json(compozy(home, "session", "list", "--limit", "1", "-o", "json"))
    assert [s["id"] for s in first["sessions"]] == ["sess-two"]
    cursor = first["next_cursor"]
    second = ok_json(
        compozy(home, "session", "list", "--limit", "1", "--cursor", cursor, "-o", "json")
    )
    assert [s["id"] for s in second["sessions"]] == ["sess-one"]
    assert "next_cursor" not in second

    text = compozy(home, "session", "list", "--limit", "1")
    assert text.returncode == 0, text.stderr
    header, row, more = text.stdout.splitlines()
    assert header.split()[:4] == ["ID", "STATE", "BADGE", "AGENT"]
    assert row.split()[0] == "sess-two"
    # the next page keeps the limit (issue 17)
    assert more == f"more: compozy session list --limit 1 --cursor {cursor}"


def test_session_archive_and_unarchive_move_a_session_off_and_back_on_the_board(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    home = Home.make(tmp_path_factory.mktemp("archive"))
    ok_json(
        compozy(home, "session", "create", "--agent", "general", "--id", "sess-a", "-o", "json")
    )
    archived = ok_json(compozy(home, "session", "archive", "sess-a", "-o", "json"))
    assert archived["session"]["archived_at"] is not None
    assert ok_json(compozy(home, "session", "list", "-o", "json")) == {"sessions": []}
    listed = ok_json(compozy(home, "session", "list", "--archived", "-o", "json"))
    assert listed == {"sessions": [archived["session"]]}
    back = ok_json(compozy(home, "session", "unarchive", "sess-a", "-o", "json"))
    assert back["session"]["archived_at"] is None
    text = compozy(home, "session", "archive", "sess-a")
    assert "  archived:   " in text.stdout


def test_session_status_of_an_unknown_session_exits_3_with_the_structured_error(
    shared: tuple[Home, dict[str, Any]],
) -> None:
    home, _ = shared
    error = error_json(
        compozy(home, "session", "status", "sess-nope", "-o", "json"), EXIT_NOT_FOUND
    )
    assert error == {
        "code": "not_found",
        "reason": "session_not_found",
        "message": 'session "sess-nope" does not exist',
        "tool_id": "compozy__session_status",
    }
    text = compozy(home, "session", "status", "sess-nope")
    assert text.returncode == EXIT_NOT_FOUND
    assert text.stdout == ""
    assert text.stderr.splitlines() == [
        'error: session "sess-nope" does not exist (not_found: session_not_found)'
    ]


def test_session_create_with_a_model_but_no_provider_exits_2_redacted(
    shared: tuple[Home, dict[str, Any]],
) -> None:
    home, _ = shared
    done = compozy(
        home, "session", "create", "--agent", "general", "--model", "m", "-o", "json", "-v"
    )
    error = error_json(done, EXIT_USAGE)
    assert (error["code"], error["reason"], error["message"]) == (
        "tool_invalid_input",
        "schema_invalid",
        "invalid tool request",
    )
    assert 'input "provider" is required when "model" is given' in done.stderr


def test_an_unknown_provider_exits_2_saying_what_was_meant(
    shared: tuple[Home, dict[str, Any]],
) -> None:
    home, _ = shared
    done = compozy(home, "session", "create", "--agent", "general", "--provider", "clude")
    assert done.returncode == EXIT_USAGE
    assert 'provider "clude" is not known' in done.stderr
    assert 'hint: did you mean "claude"' in done.stderr


def test_session_create_of_an_existing_id_exits_5(shared: tuple[Home, dict[str, Any]]) -> None:
    home, _ = shared
    done = compozy(home, *CREATE)
    assert error_json(done, EXIT_CONFLICT)["reason"] == "session_exists"


#: psycopg too: only a postgresql:// store imports it (compozy_mcp.store.open)
HEAVY = ("mcp.server", "uvicorn", "starlette", "httpx2", "psycopg")
PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from compozy_mcp.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    heavy = {heavy!r}
    loaded = sorted(
        name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in heavy)
    )
    print(json.dumps({{"code": code, "loaded": loaded}}))
    """
)


@pytest.mark.process
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["session", "status", "sess-example"], id="status"),
        pytest.param(["session", "list"], id="list"),
    ],
)
def test_session_commands_in_process_never_import_the_http_stack_or_mcp_server(
    shared: tuple[Home, dict[str, Any]], args: list[str]
) -> None:
    home, _ = shared
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"code": 0, "loaded": []}
