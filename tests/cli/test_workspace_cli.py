"""``compozy workspace`` and ``compozy profile``: sessions can live in registered workspaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import run_cli

COMPOZY = Path(sys.executable).parent / "compozy"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COMPOZY_HOME": str(home)}
    return run_cli(*args, env=env)


def _json(home: Path, *args: str) -> Any:
    done = _run(home, *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_registered_workspace_and_profile_can_hold_a_session(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    workspace = _json(home, "workspace", "add", str(project), "--name", "project")["workspaces"][0]
    assert (workspace["name"], workspace["path"]) == ("project", str(project.resolve()))
    profile = _json(home, "profile", "add", "Reviewer", "--color", "#2563eb")["profiles"][0]
    listed = _json(home, "workspace", "list")["workspaces"]
    assert {w["id"] for w in listed} == {"ws_default", workspace["id"]}
    session = _json(
        home,
        "tool",
        "invoke",
        "compozy__session_create",
        "--input",
        json.dumps(
            {
                "agent_name": "general",
                "workspace_id": workspace["id"],
                "profile_id": profile["id"],
                "result_view": "full",
            }
        ),
    )["result"]["structured"]["session"]
    assert session["workspace_path"] == str(project.resolve())
    assert (session["profile_name"], session["profile_color"]) == ("Reviewer", "#2563eb")
    assert session["lineage"]["permission_policy"]["workspace_paths"] == [str(project.resolve())]


def test_adding_a_path_that_is_not_a_directory_is_a_clear_usage_error(tmp_path: Path) -> None:
    done = _run(tmp_path / "home", "workspace", "add", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {tmp_path / 'missing'} is not a directory (invalid_request: path_not_directory)\n"
    )
    assert _json(tmp_path / "home", "workspace", "list")["workspaces"][0]["id"] == "ws_default"
    assert len(_json(tmp_path / "home", "workspace", "list")["workspaces"]) == 1


@pytest.mark.process
def test_a_relative_path_is_taken_from_where_the_command_runs(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    env = {**os.environ, "COMPOZY_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [str(COMPOZY), "workspace", "add", "project", "-o", "json"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [workspace] = json.loads(done.stdout)["workspaces"]
    assert (workspace["name"], workspace["path"]) == (
        "project",
        str((tmp_path / "project").resolve()),
    )


def test_text_output_is_one_line_per_row(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _run(home, "profile", "add", "Ops", "--icon", "gear").returncode == 0
    lines = _run(home, "profile", "list").stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "COLOR", "ICON"]
    assert len(lines) == 3  # the header, the default profile, Ops
    assert lines[2].startswith("prof_")
    assert lines[2].split()[1:] == ["Ops", "gear"]


def test_workspace_trust_lets_its_hooks_file_run_and_hooks_list_reports_an_untrusted_one(
    tmp_path: Path,
) -> None:
    """Issue 22, item 4: ``compozy workspace trust PATH``, shown by ``workspace list``."""
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".compozy").mkdir(parents=True)
    (project / ".compozy" / "hooks.yaml").write_text(
        "hooks:\n  - {id: planted, event: tool.pre_call, command: 'true'}\n", encoding="utf-8"
    )
    workspace = _json(home, "workspace", "add", str(project))["workspaces"][0]
    assert workspace["trusted_at"] is None
    listed = _run(home, "hooks", "list")
    assert listed.returncode == 0, listed.stderr
    assert (
        f"compozy: warning: .compozy/hooks.yaml of workspace {workspace['id']}: not run: "
        f'workspace "{workspace["id"]}" is not trusted'
    ) in listed.stderr
    assert "planted" not in listed.stdout

    trusted = _json(home, "workspace", "trust", str(project))["workspaces"][0]
    assert trusted["id"] == workspace["id"]
    assert trusted["trusted_at"] is not None
    table = _run(home, "workspace", "list").stdout.splitlines()
    assert table[0].split() == ["ID", "NAME", "PATH", "TRUSTED"]
    row = next(line for line in table if line.startswith(workspace["id"]))
    assert row.split()[-1] == trusted["trusted_at"]
    after = _run(home, "hooks", "list")
    assert "not trusted" not in after.stderr
    assert f"{workspace['id']}.planted" in after.stdout

    revoked = _json(home, "workspace", "trust", workspace["id"], "--revoke")["workspaces"][0]
    assert revoked["trusted_at"] is None
    assert "not trusted" in _run(home, "hooks", "list").stderr


def test_trusting_a_directory_that_is_no_workspace_is_not_found(tmp_path: Path) -> None:
    done = _run(tmp_path / "home", "workspace", "trust", str(tmp_path))
    assert done.returncode != 0
    assert "compozy workspace add" in done.stderr
