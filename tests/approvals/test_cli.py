"""Issue 14 on the command line: ``compozy approvals list | set | revoke | mint``, ``compozy
session approve``, ``compozy tool invoke --approval-token``, and the exit code of a call that
waits for approval (7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import run_cli

SESSION = "sess-cli"
RENAME = "compozy__session_rename"
EXIT_APPROVAL = 7


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "workspace").mkdir()
    made = {
        "COMPOZY_HOME": str(tmp_path / "home"),
        "COMPOZY_WORKSPACE": str(tmp_path / "workspace"),
    }
    assert (
        run_cli("session", "create", "--agent", "general", "--id", SESSION, env=made).returncode
        == 0
    )
    return made


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env)


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def rename_input(name: str, **extra: Any) -> str:
    return json.dumps({"session_id": SESSION, "name": name, **extra})


def invoke_as_session(env: dict[str, str], name: str, *extra: str, **fields: Any) -> Any:
    return cli(
        env, "tool", "invoke", RENAME, "--session", SESSION, "--input",
        rename_input(name, **fields), "-o", "json", *extra,
    )  # fmt: skip


def test_a_held_call_exits_7_with_the_prompt_and_session_approve_answers_it(
    env: dict[str, str],
) -> None:
    held = invoke_as_session(env, "cli", result_view="full")
    assert held.returncode == EXIT_APPROVAL, held.stderr
    error = as_json(held)["error"]
    assert (error["code"], error["reason"]) == ("tool_approval_required", "approval_required")
    interaction = error["details"]["interaction_id"]
    assert f"compozy session approve {SESSION} {interaction} allow-once" in error["message"]
    status = as_json(cli(env, "session", "status", SESSION, "-o", "json"))["session"]
    assert (status["badge"], status["board_column"]) == ("waiting-for-auth", "needs_you")
    assert status["pending_interactions"][0]["tool_input"] == json.loads(
        rename_input("cli", result_view="full")
    )
    answered = cli(env, "session", "approve", SESSION, interaction, "allow-always")
    assert answered.returncode == 0, answered.stderr
    assert "remembered as grant-" in answered.stdout
    ran = invoke_as_session(env, "cli", result_view="compact")  # the grant matches either view
    assert ran.returncode == 0, ran.stderr


def test_approvals_list_set_revoke(env: dict[str, str]) -> None:
    made = cli(env, "approvals", "set", RENAME, "--reject", "--agent", "general", "-o", "json")
    assert made.returncode == 0, made.stderr
    grant = as_json(made)["grant"]
    assert (grant["scope"], grant["decision"]) == ("agent", "reject")
    refused = invoke_as_session(env, "no")
    assert as_json(refused)["error"]["reason"] == "approval_rejected"
    listed = as_json(cli(env, "approvals", "list", "-o", "json"))["grants"]
    assert [g["id"] for g in listed] == [grant["id"]]
    assert "profile_archived" in listed[0]
    assert "source" not in listed[0]  # compact
    full = as_json(cli(env, "approvals", "list", "--full", "-o", "json"))["grants"]
    assert full[0]["source"] == "operator"
    text = cli(env, "approvals", "list")
    assert grant["id"] in text.stdout
    assert "reject" in text.stdout
    revoked = cli(env, "approvals", "revoke", grant["id"])
    assert revoked.returncode == 0
    assert f"{grant['id']} revoked" in revoked.stdout
    assert cli(env, "approvals", "revoke", grant["id"]).returncode == 3  # not found


def test_approvals_set_a_permission_mode(env: dict[str, str]) -> None:
    done = cli(env, "approvals", "set", "--session", SESSION, "--mode", "bypass")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{SESSION}: bypass"
    assert invoke_as_session(env, "free").returncode == 0
    assert cli(env, "approvals", "set", "--mode", "plan").returncode == 2


def test_approvals_mint_and_a_one_shot_token(env: dict[str, str]) -> None:
    minted = cli(
        env, "approvals", "mint", RENAME, "--session", SESSION, "--input", rename_input("tok")
    )
    assert minted.returncode == 0, minted.stderr
    token = minted.stdout.strip()
    first = invoke_as_session(env, "tok", "--approval-token", token, result_view="full")
    assert first.returncode == 0, first.stderr
    again = invoke_as_session(env, "tok", "--approval-token", token)
    assert again.returncode == EXIT_APPROVAL
    assert as_json(again)["error"]["reason"] == "approval_token_replayed"


@pytest.mark.process
@pytest.mark.parametrize("args", [["approvals", "list"], ["session", "list"]], ids=" ".join)
def test_approval_commands_never_import_the_mcp_server_or_http_stack(
    env: dict[str, str], args: list[str]
) -> None:
    probe = (
        "import contextlib, io, json, sys\n"
        "from compozy_mcp.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(sys.argv[1:])\n"
        "heavy = ('mcp.server', 'uvicorn', 'starlette')\n"
        "print(json.dumps({'code': code, 'loaded': sorted(name for name in sys.modules "
        "if any(name == h or name.startswith(h + '.') for h in heavy))}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"code": 0, "loaded": []}
