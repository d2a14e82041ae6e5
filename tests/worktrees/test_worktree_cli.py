"""Worktrees as a user types them (issue 25): ``compozy session create --worktree``, ``session
diff`` (the patch, ``--stat``, colour on a terminal), ``session merge``, ``session pr`` with a
stub ``gh`` and a local bare remote (never the network), ``compozy worktree ...``, and the HTTP
routes of a daemon checked against its OpenAPI document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import (
    COMPOZY,
    Contract,
    ContractClient,
    Home,
    compozy,
    running_daemon,
    short_dir,
)
from tests.terminal import on_terminal

from .gitrepo import branches, git, make_repo

pytestmark = pytest.mark.process

EXIT_FAILED, EXIT_CONFLICT = 1, 5


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = Home.make(tmp_path / "with space")
    make_repo(Path(made.env["COMPOZY_WORKSPACE"]), {"app.py": "print(1)\n"})
    return made.with_env(COMPOZY_URL="none")


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def _session(home: Home, *extra: str) -> dict[str, Any]:
    out = ok(
        compozy(home, "session", "create", "--agent", "echo", "--worktree", *extra, "-o", "json")
    )
    session: dict[str, Any] = json.loads(out)["session"]
    return session


def test_session_create_worktree_diff_merge_and_worktree_commands(home: Home) -> None:
    workspace = Path(home.env["COMPOZY_WORKSPACE"])
    session = _session(home, "--name", "Add greeting")
    assert session["branch"] == "compozy/add-greeting"
    directory = Path(session["worktree"]["directory"])
    assert directory.is_dir()
    assert " " in str(directory)
    (directory / "app.py").write_text("print('hello')\n")
    (directory / "NEW.md").write_text("new\n")

    stat = ok(compozy(home, "session", "diff", session["id"], "--stat"))
    assert " app.py | " in stat
    assert " NEW.md | " in stat
    assert "2 files changed, 2 insertions(+), 1 deletion(-) against main" in stat
    patch = ok(compozy(home, "session", "diff", session["id"]))
    assert "+print('hello')" in patch
    assert "\x1b[" not in patch
    record = json.loads(ok(compozy(home, "session", "diff", session["id"], "-o", "json")))
    assert record["patch"] == patch.rstrip("\n") + "\n"

    listed = ok(compozy(home.with_env(COLUMNS="300"), "worktree", "list"))  # no column cut
    assert session["worktree_id"] in listed
    assert "compozy/add-greeting" in listed
    shown = ok(compozy(home, "worktree", "inspect", session["worktree_id"]))
    assert "uncommitted: 2 file(s)" in shown

    merged = ok(compozy(home, "session", "merge", session["id"]))
    assert "compozy/add-greeting fast-forwarded into main" in merged
    assert "uncommitted changes were committed to the branch first" in merged
    assert (workspace / "NEW.md").read_text() == "new\n"


def test_worktree_remove_refuses_dirty_work_until_forced_and_loses_nothing(home: Home) -> None:
    workspace = Path(home.env["COMPOZY_WORKSPACE"])
    session = _session(home)
    (Path(session["worktree"]["directory"]) / "keep.txt").write_text("keep\n")
    refused = compozy(home, "worktree", "remove", session["worktree_id"], "-o", "json")
    assert refused.returncode == EXIT_CONFLICT
    error = json.loads(refused.stdout)["error"]
    assert (error["code"], error["reason"]) == ("tool_conflict", "worktree_dirty")
    assert error["details"]["files"] == ["keep.txt"]
    removed = ok(compozy(home, "worktree", "remove", session["worktree_id"], "--force"))
    assert "committed:  uncommitted work as" in removed
    assert not Path(session["worktree"]["path"]).exists()
    assert git(workspace, "show", f"{session['branch']}:keep.txt") == "keep"


def test_a_workspace_that_is_not_a_repository_is_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    plain = Home.make(tmp_path).with_env(COMPOZY_URL="none")
    done = compozy(plain, "session", "create", "--agent", "echo", "--worktree")
    assert done.returncode == EXIT_FAILED
    assert "is not a git repository" in done.stderr
    assert "(worktree_unavailable: not_a_git_repository)" in done.stderr


def test_the_diff_is_coloured_on_a_terminal(home: Home) -> None:
    session = _session(home)
    (Path(session["worktree"]["directory"]) / "app.py").write_text("print(2)\n")
    env = {**home.env, "TERM": "xterm", "NO_COLOR": ""}
    with on_terminal([str(COMPOZY), "session", "diff", session["id"]], env) as terminal:
        assert terminal.wait() == 0
        text = terminal.text
    assert "\x1b[32m+print(2)" in text
    assert "\x1b[31m-print(1)" in text


# --- a pull request, with a stub gh and a local bare remote ---------------------------------

STUB_GH = textwrap.dedent(
    """\
    #!{python}
    # a stand-in for the GitHub CLI, written for the test: it records what it was asked
    import json, os, sys
    log = os.environ["GH_STUB_LOG"]
    args = sys.argv[1:]
    with open(log, "a") as out:
        out.write(json.dumps(args) + "\\n")
    state_file = log + ".pr"
    if args[:2] == ["auth", "status"]:
        sys.exit(0 if os.environ.get("GH_STUB_AUTH") == "yes" else 1)
    if args[:2] == ["pr", "view"]:
        if not os.path.exists(state_file):
            print("no pull requests found", file=sys.stderr)
            sys.exit(1)
        print(open(state_file).read())
        sys.exit(0)
    if args[:2] == ["pr", "create"]:
        head = args[args.index("--head") + 1]
        title = args[args.index("--title") + 1]
        pr = {{"number": 7, "url": "https://github.example/o/r/pull/7", "state": "OPEN",
              "isDraft": "--draft" in args, "title": title, "head": head}}
        with open(state_file, "w") as out:
            json.dump(pr, out)
        print(pr["url"])
        sys.exit(0)
    sys.exit(2)
    """
)


@pytest.fixture
def published(home: Home, tmp_path: Path) -> tuple[Home, Path, Path]:
    """``home`` with a bare repository as its workspace's ``origin`` and a stub ``gh`` on
    PATH (logged in); yields it with the bare repository and the stub's log."""
    workspace = Path(home.env["COMPOZY_WORKSPACE"])
    remote = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(workspace, "remote", "add", "origin", str(remote))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(STUB_GH.format(python=sys.executable))
    gh.chmod(0o755)
    log = tmp_path / "gh.log"
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{home.env.get('PATH', '')}",
        "GH_STUB_LOG": str(log),
        "GH_STUB_AUTH": "yes",
    }
    return home.with_env(**env), remote, log


def _process(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOZY), *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_session_pr_pushes_the_branch_opens_the_pull_request_and_records_it(
    published: tuple[Home, Path, Path],
) -> None:
    home, remote, log = published
    session = _session(home, "--name", "Greeting")
    (Path(session["worktree"]["directory"]) / "hello.txt").write_text("hi\n")
    done = _process(home, "session", "pr", session["id"], "--draft")
    assert done.returncode == 0, done.stderr
    assert "pull request #7 opened https://github.example/o/r/pull/7" in done.stdout
    assert "compozy/greeting" in branches(remote)  # pushed, with the uncommitted work
    assert git(remote, "show", "compozy/greeting:hello.txt") == "hi"
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    create = next(a for a in asked if a[:2] == ["pr", "create"])
    assert create[create.index("--base") + 1] == "main"
    assert create[create.index("--title") + 1] == "Greeting"
    assert "--draft" in create
    status = json.loads(ok(compozy(home, "session", "status", session["id"], "-o", "json")))
    assert status["session"]["pull_request"] == {
        "number": 7,
        "url": "https://github.example/o/r/pull/7",
        "state": "draft",
        "title": "Greeting",
    }
    again = _process(home, "session", "pr", session["id"])
    assert "already open: https://github.example/o/r/pull/7" in again.stdout


def test_session_pr_without_gh_says_so_and_prints_the_commands(
    published: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    home, remote, _ = published
    session = _session(home)
    no_gh = home.with_env(PATH=str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin")
    done = _process(no_gh, "session", "pr", session["id"])
    assert done.returncode == EXIT_FAILED
    assert "the GitHub CLI (gh) is not installed" in done.stderr
    assert f"push --set-upstream origin {session['branch']}" in done.stderr
    assert f"gh pr create --head {session['branch']} --base main" in done.stderr
    assert "(pull_request_unavailable: gh_missing)" in done.stderr
    assert session["branch"] not in branches(remote)  # nothing was pushed
    logged_out = _process(home.with_env(GH_STUB_AUTH="no"), "session", "pr", session["id"])
    assert "(pull_request_unavailable: gh_unauthenticated)" in logged_out.stderr


# --- the HTTP routes -------------------------------------------------------------------------


@pytest.fixture
def api(home: Home) -> Iterator[ContractClient]:
    served = home.with_env(COMPOZY_URL="")
    with (
        short_dir() as where,
        running_daemon(served, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
        daemon.client() as http,
    ):
        yield ContractClient(http, Contract(http.get("/api/openapi.json").json()))


def test_the_worktree_routes_answer_as_documented(api: ContractClient, home: Home) -> None:
    _, made = api.post(
        "/api/sessions", json={"agent_name": "echo", "worktree": True, "name": "http"}, expect=201
    )
    session = made["session"]
    tree_id = session["worktree_id"]
    Path(session["worktree"]["directory"], "web.txt").write_text("web\n")
    _, diff = api.get("/api/sessions/{session_id}/diff", session_id=session["id"], expect=200)
    assert [f["path"] for f in diff["files"]] == ["web.txt"]
    assert "+web" in diff["patch"]
    _, listed = api.get("/api/worktrees", expect=200)
    assert [t["worktree_id"] for t in listed["worktrees"]] == [tree_id]
    _, one = api.get("/api/worktrees/{worktree_id}", worktree_id=tree_id, expect=200)
    assert one["worktree"]["dirty"] == ["web.txt"]
    _, refused = api.delete("/api/worktrees/{worktree_id}", worktree_id=tree_id, expect=409)
    assert refused["error"]["reason"] == "worktree_dirty"
    _, merged = api.post(
        "/api/sessions/{session_id}/merge",
        session_id=session["id"],
        json={"mode": "squash", "message": "From the web"},
        expect=200,
    )
    assert merged["outcome"] == "squashed"
    _, gone = api.delete(
        "/api/worktrees/{worktree_id}", worktree_id=tree_id, params={"force": "true"}, expect=200
    )
    assert gone["worktree"]["state"] == "removed"
    _, again = api.post("/api/worktrees", json={"session_id": session["id"]}, expect=201)
    assert again["worktree"]["branch"] == session["branch"]
    # the CLI finds the daemon on its socket and answers the same
    stat = ok(compozy(home.with_env(COMPOZY_URL=""), "session", "diff", session["id"], "--stat"))
    assert "web.txt" in stat
