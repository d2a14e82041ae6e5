"""A session's git worktree (issue 25), through the tools: made on create, spawn and fork, the
agent working in it, diffs in two views, merges and their conflicts, cleanup that loses
nothing, a restart, and who may act on whose worktree.

The agents are the echo agent run in this process; git is the real one (process tier).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import open_app
from compozy_mcp.calls import CallScope
from compozy_mcp.config import Settings
from compozy_mcp.errors import (
    MergeConflict,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
    WorktreeDirty,
    WorktreeUnavailable,
)
from compozy_mcp.store import SQLiteStore

from .gitrepo import branches, commit_all, git, make_repo, worktree_paths

pytestmark = [pytest.mark.anyio, pytest.mark.process]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The default workspace is a git repository (its path has a space in it)."""
    return make_repo(tmp_path / "the repo", {"README.md": "hello\n", "src/app.py": "print(1)\n"})


async def _create(call: Caller, **fields: Any) -> dict[str, Any]:
    fields.setdefault("agent_name", "echo")
    fields.setdefault("worktree", True)
    return await call.session("compozy__session_create", fields)


async def _worktree(call: Caller, session_id: str) -> dict[str, Any]:
    tree: dict[str, Any] = (await call.full(session_id))["worktree"]
    return tree


async def _prompt(call: Caller, sid: str, text: str) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "wait": True, "timeout_seconds": 30}
    turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def _written(call: Caller, sid: str, name: str, text: str) -> dict[str, Any]:
    """Echo's ``write NAME TEXT`` turn, its permission request allowed."""
    results: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tasks:

        async def prompt() -> None:
            results.append(await _prompt(call, sid, f"write {name} {text}"))

        tasks.start_soon(prompt)
        with anyio.fail_after(30):
            while not (session := await call.full(sid))["pending_interactions"]:
                await anyio.sleep(0.01)
        item = session["pending_interactions"][0]
        await call.structured(
            "compozy__session_approve",
            {"session_id": sid, "interaction_id": item["interaction_id"], "decision": "allow-once"},
        )
    return results[0]


# --- real worktrees ------------------------------------------------------------------------


async def test_a_session_created_with_worktree_works_in_its_own_checkout(
    call: Caller, workspace: Path, settings: Settings
) -> None:
    session = await _create(call, name="Fix the flaky upload test!")
    assert session["branch"] == "compozy/fix-the-flaky-upload-test"
    assert session["worktree_id"].startswith("wt-")
    assert "worktree" not in session  # compact keeps the id and branch; the path is full only
    tree = await _worktree(call, session["id"])
    path = settings.home / "worktrees" / "ws_default" / session["id"]
    assert tree["path"] == str(path)
    assert tree["state"] == "active"
    assert tree["base"] == {"ref": "main", "commit": git(workspace, "rev-parse", "HEAD")}
    assert (path / "src" / "app.py").read_text() == "print(1)\n"
    assert str(path) in worktree_paths(workspace)
    assert "compozy/fix-the-flaky-upload-test" in branches(workspace)


async def test_two_agents_at_once_in_one_repository_each_see_only_their_own_changes(
    call: Caller, workspace: Path
) -> None:
    one = (await _create(call, name="one", provider="echo"))["id"]
    two = (await _create(call, name="two", provider="echo"))["id"]
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_written, call, one, "notes/one.txt", "from one")
        tasks.start_soon(_written, call, two, "notes/two.txt", "from two")
    first, second = (
        Path((await _worktree(call, one))["path"]),
        Path((await _worktree(call, two))["path"]),
    )
    assert (first / "notes" / "one.txt").read_text() == "from one\n"
    assert not (first / "notes" / "two.txt").exists()
    assert (second / "notes" / "two.txt").read_text() == "from two\n"
    assert not (second / "notes" / "one.txt").exists()
    assert not (workspace / "notes").exists()  # the shared checkout is untouched
    diff = await call.structured("compozy__session_diff", {"session_id": one})
    assert [f["path"] for f in diff["files"]] == ["notes/one.txt"]


async def test_a_workspace_that_is_not_a_git_repository_is_refused(
    call: Caller, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    added = await call.app.sessions.add_workspace(plain, "plain")
    with pytest.raises(WorktreeUnavailable) as caught:
        await _create(call, workspace_id=added.id)
    assert (caught.value.code, caught.value.reason) == (
        "worktree_unavailable",
        "not_a_git_repository",
    )
    assert f"({plain}) is not a git repository" in caught.value.message
    listed = await call.structured("compozy__session_list", {"workspace_id": added.id})
    assert listed["sessions"] == []  # nothing was created


async def test_a_repository_without_a_commit_and_an_unknown_base_are_refused(
    call: Caller, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "--quiet")
    added = await call.app.sessions.add_workspace(empty, "empty")
    with pytest.raises(WorktreeUnavailable) as caught:
        await _create(call, workspace_id=added.id)
    assert caught.value.reason == "repository_empty"
    with pytest.raises(WorktreeUnavailable) as unknown:
        await _create(call, base="no-such-ref")
    assert unknown.value.reason == "base_unknown"


async def test_a_branch_that_exists_is_refused_and_a_default_name_taken_gets_a_suffix(
    call: Caller, workspace: Path
) -> None:
    git(workspace, "branch", "feature/x")
    with pytest.raises(ToolConflict) as caught:
        await _create(call, branch="feature/x")
    assert caught.value.reason == "branch_exists"
    assert 'branch "feature/x" already exists' in caught.value.message
    with pytest.raises(ToolInvalidInput):
        await _create(call, branch="bad..name")
    first = await _create(call, name="same")
    second = await _create(call, name="same")
    assert (first["branch"], second["branch"]) == ("compozy/same", "compozy/same-2")


async def test_a_base_branch_is_where_the_worktree_starts(call: Caller, workspace: Path) -> None:
    git(workspace, "checkout", "--quiet", "-b", "release")
    (workspace / "release.txt").write_text("r\n")
    release = commit_all(workspace, "release")
    git(workspace, "checkout", "--quiet", "main")
    session = await _create(call, base="release", branch="fix/on-release")
    tree = await _worktree(call, session["id"])
    assert tree["base"] == {"ref": "release", "commit": release}
    assert (Path(tree["path"]) / "release.txt").exists()


async def test_a_workspace_below_the_repository_root_runs_the_agent_in_the_same_place(
    call: Caller, workspace: Path
) -> None:
    added = await call.app.sessions.add_workspace(workspace / "src", "src")
    session = await _create(call, workspace_id=added.id, provider="echo")
    tree = await _worktree(call, session["id"])
    assert tree["directory"] == str(Path(tree["path"]) / "src")
    await _written(call, session["id"], "made.txt", "here")
    assert (Path(tree["path"]) / "src" / "made.txt").read_text() == "here\n"


# --- spawn and fork --------------------------------------------------------------------------


async def test_a_spawned_child_gets_a_real_worktree_in_both_views(call: Caller) -> None:
    parent = (await call.create())["id"]
    spawn = {"parent_session_id": parent, "agent_name": "w", "ttl_seconds": 600}
    spawn |= {"worktree": True, "branch": "wt/x", "idempotency_key": "k1"}
    compact = await call.structured("compozy__session_spawn", spawn)
    full = await call.structured("compozy__session_spawn", {**spawn, "result_view": "full"})
    assert compact["worktree"] == full["worktree"]
    assert compact["worktree"]["branch"] == "wt/x"
    child = await call.full(compact["session_id"])
    assert child["worktree_id"] == compact["worktree"]["worktree_id"]
    assert Path(child["worktree"]["path"]).is_dir()
    # the idempotent retry made no second worktree
    listed = await call.structured("compozy__worktree_list", {"session_id": compact["session_id"]})
    assert len(listed["worktrees"]) == 1
    assert len(worktree_paths(Path(child["workspace_path"]))) == 2


async def test_a_fork_gets_its_own_worktree_from_the_sources_work(call: Caller) -> None:
    source = await _create(call, name="source")
    source_path = Path((await _worktree(call, source["id"]))["path"])
    (source_path / "uncommitted.txt").write_text("in progress\n")
    fork = await call.session(
        "compozy__session_fork", {"session_id": source["id"], "transcript_epoch": 0}
    )
    assert fork["branch"] == "compozy/source-fork"
    fork_tree = await _worktree(call, fork["id"])
    assert fork_tree["path"] != str(source_path)
    assert (Path(fork_tree["path"]) / "uncommitted.txt").read_text() == "in progress\n"
    assert fork_tree["base"] == (await _worktree(call, source["id"]))["base"]
    assert git(source_path, "status", "--porcelain") == "?? uncommitted.txt"  # untouched


# --- diffs -----------------------------------------------------------------------------------


async def test_a_diff_compact_is_within_full_and_only_full_has_the_patch(call: Caller) -> None:
    session = await _create(call)
    path = Path((await _worktree(call, session["id"]))["path"])
    (path / "README.md").write_text("hello\nworld\n")
    (path / "new file.txt").write_text("new\n")
    git(path, "add", "README.md")
    git(path, "commit", "--quiet", "-m", "committed part")
    (path / "src" / "app.py").unlink()
    compact = await call.structured("compozy__session_diff", {"session_id": session["id"]})
    full = await call.structured(
        "compozy__session_diff", {"session_id": session["id"], "result_view": "full"}
    )
    assert {k: full[k] for k in compact} == compact
    assert set(full) - set(compact) == {"patch"}
    assert compact["totals"] == {"files": 3, "added": 2, "removed": 1}
    assert {(f["path"], f["status"]) for f in compact["files"]} == {
        ("README.md", "modified"),
        ("new file.txt", "added"),
        ("src/app.py", "deleted"),
    }
    assert compact["head"]["uncommitted"] is True
    assert "+world" in full["patch"]
    assert "-print(1)" in full["patch"]


async def test_a_session_without_a_worktree_has_no_diff(call: Caller) -> None:
    plain = await call.create()
    with pytest.raises(WorktreeUnavailable) as caught:
        await call("compozy__session_diff", {"session_id": plain["id"]})
    assert caught.value.reason == "no_worktree"


# --- merge -----------------------------------------------------------------------------------


async def test_a_clean_merge_fast_forwards_the_base_and_its_checkout(
    call: Caller, workspace: Path
) -> None:
    session = await _create(call)
    path = Path((await _worktree(call, session["id"]))["path"])
    (path / "feature.txt").write_text("feature\n")
    merged = await call.structured("compozy__session_merge", {"session_id": session["id"]})
    assert (merged["into"], merged["outcome"]) == ("main", "fast_forward")
    assert merged["committed_work_in_progress"] is True
    assert git(workspace, "rev-parse", "main") == merged["commit"]
    assert (workspace / "feature.txt").read_text() == "feature\n"  # the checkout followed
    assert git(workspace, "status", "--porcelain") == ""
    assert git(path, "status", "--porcelain") == ""  # the work is on the session's branch
    record = await call.session("compozy__session_status", {"session_id": session["id"]})
    assert (record["badge"], record["board_column"]) == ("merged", "done")


async def test_diverged_branches_merge_with_a_commit_or_squash(
    call: Caller, workspace: Path
) -> None:
    one, two = await _create(call, name="one"), await _create(call, name="two")
    for session, name in ((one, "one.txt"), (two, "two.txt")):
        (Path((await _worktree(call, session["id"]))["path"]) / name).write_text(f"{name}\n")
    await call.structured("compozy__session_merge", {"session_id": one["id"]})
    with pytest.raises(ToolConflict) as caught:
        await call("compozy__session_merge", {"session_id": two["id"], "mode": "fast_forward"})
    assert caught.value.reason == "not_fast_forward"
    squashed = await call.structured(
        "compozy__session_merge", {"session_id": two["id"], "mode": "squash", "message": "Two"}
    )
    assert squashed["outcome"] == "squashed"
    assert git(workspace, "log", "-1", "--format=%s %P", "main").startswith("Two ")
    assert len(git(workspace, "log", "-1", "--format=%P", "main").split()) == 1
    assert sorted(p.name for p in workspace.glob("*.txt")) == ["one.txt", "two.txt"]


async def test_a_conflicting_merge_names_the_files_and_changes_nothing(
    call: Caller, workspace: Path
) -> None:
    session = await _create(call)
    path = Path((await _worktree(call, session["id"]))["path"])
    (path / "README.md").write_text("from the session\n")
    (workspace / "README.md").write_text("from main\n")
    main_before = commit_all(workspace, "main moved on")
    branch_before = git(workspace, "rev-parse", session["branch"])
    with pytest.raises(MergeConflict) as caught:
        await call("compozy__session_merge", {"session_id": session["id"]})
    assert (caught.value.code, caught.value.reason) == ("merge_conflict", "merge_conflict")
    assert caught.value.details["files"] == ["README.md"]
    assert "conflicts in 1 file: README.md; nothing was changed" in caught.value.message
    assert git(workspace, "rev-parse", "main") == main_before
    assert git(workspace, "rev-parse", session["branch"]) == branch_before
    assert (path / "README.md").read_text() == "from the session\n"
    assert git(path, "status", "--porcelain") == " M README.md"


async def test_a_merge_into_a_dirty_checkout_is_refused(call: Caller, workspace: Path) -> None:
    session = await _create(call)
    (Path((await _worktree(call, session["id"]))["path"]) / "x.txt").write_text("x\n")
    (workspace / "README.md").write_text("operator's edit\n")
    with pytest.raises(WorktreeDirty) as caught:
        await call("compozy__session_merge", {"session_id": session["id"]})
    assert caught.value.reason == "worktree_dirty"
    assert caught.value.details["files"] == ["README.md"]
    assert (workspace / "README.md").read_text() == "operator's edit\n"


# --- cleanup that loses nothing --------------------------------------------------------------


async def test_archive_commits_a_dirty_tree_to_the_branch_and_removes_the_directory(
    call: Caller, workspace: Path
) -> None:
    session = await _create(call)
    path = Path((await _worktree(call, session["id"]))["path"])
    (path / "unsaved.txt").write_text("do not lose me\n")
    archived = await call.full(
        (await call.session("compozy__session_archive", {"session_id": session["id"]}))["id"]
    )
    assert not path.exists()
    assert archived["worktree"]["state"] == "removed"
    assert archived["worktree_id"] == session["worktree_id"]
    assert session["branch"] in branches(workspace)
    assert git(workspace, "show", f"{session['branch']}:unsaved.txt") == "do not lose me"
    message = git(workspace, "log", "-1", "--format=%s", session["branch"])
    assert message == f"compozy: work in progress of session {session['id']}"
    # the diff is still there, read from the branch
    diff = await call.structured("compozy__session_diff", {"session_id": session["id"]})
    assert [f["path"] for f in diff["files"]] == ["unsaved.txt"]


async def test_remove_refuses_a_dirty_worktree_unless_forced(call: Caller, workspace: Path) -> None:
    session = await _create(call)
    tree = await _worktree(call, session["id"])
    (Path(tree["path"]) / "wip.txt").write_text("wip\n")
    with pytest.raises(WorktreeDirty) as caught:
        await call("compozy__worktree_remove", {"worktree_id": session["worktree_id"]})
    assert caught.value.details == {"files": ["wip.txt"], "count": 1}
    assert Path(tree["path"]).is_dir()
    removed = await call.structured(
        "compozy__worktree_remove", {"worktree_id": session["worktree_id"], "force": True}
    )
    assert removed["worktree"]["state"] == "removed"
    assert git(workspace, "show", f"{session['branch']}:wip.txt") == "wip"
    again = await call.structured(
        "compozy__worktree_create", {"session_id": session["id"]}
    )  # its branch, checked out again
    assert (Path(again["worktree"]["path"]) / "wip.txt").read_text() == "wip\n"
    assert again["worktree"]["branch"] == session["branch"]


async def test_delete_removes_the_worktrees_of_the_whole_tree(call: Caller) -> None:
    session = await _create(call)
    child = await call.structured(
        "compozy__session_spawn",
        {
            "parent_session_id": session["id"],
            "agent_name": "w",
            "ttl_seconds": 60,
            "worktree": True,
        },
    )
    paths = [Path((await _worktree(call, s))["path"]) for s in (session["id"], child["session_id"])]
    await call("compozy__session_archive", {"session_id": session["id"]})
    await call("compozy__session_delete", {"session_id": session["id"]})
    assert not any(path.exists() for path in paths)
    assert (await call.structured("compozy__worktree_list", {"include_removed": True})) == {
        "worktrees": []
    }


async def test_two_sessions_never_share_a_worktree(call: Caller) -> None:
    session = await _create(call)
    with pytest.raises(ToolConflict) as caught:
        await call("compozy__worktree_create", {"session_id": session["id"]})
    assert caught.value.reason == "worktree_exists"


# --- the board ---------------------------------------------------------------------------------


async def test_a_turn_that_leaves_changes_puts_the_session_in_review_until_merged(
    call: Caller,
) -> None:
    session = await _create(call, provider="echo")
    await _prompt(call, session["id"], "hello")
    record = await call.session("compozy__session_status", {"session_id": session["id"]})
    assert record["board_column"] != "review"  # nothing changed yet
    await _written(call, session["id"], "done.txt", "work")
    record = await call.session("compozy__session_status", {"session_id": session["id"]})
    assert (record["badge"], record["board_column"]) == ("review", "review")
    full = await call.full(session["id"])
    assert full["worktree"]["changes"]["files"] == 1
    await call("compozy__session_runtime_clear", {"session_id": session["id"]})
    await call.structured("compozy__session_merge", {"session_id": session["id"]})
    record = await call.session("compozy__session_status", {"session_id": session["id"]})
    assert (record["badge"], record["board_column"]) == ("merged", "done")


# --- a restart -------------------------------------------------------------------------------


def test_a_restart_finds_its_worktrees_and_marks_a_vanished_one_missing(
    tmp_path: Path, workspace: Path
) -> None:
    settings = Settings(
        home=tmp_path / "home", default_workspace_path=workspace, permission_mode="bypass"
    )

    async def first() -> tuple[dict[str, Any], dict[str, Any]]:
        with open_app(settings) as app:
            caller = Caller(app)
            kept, gone = await _create(caller, name="kept"), await _create(caller, name="gone")
            await app.shutdown()
            return kept, gone

    kept, gone = anyio.run(first)
    gone_path = settings.home / "worktrees" / "ws_default" / gone["id"]
    git(workspace, "worktree", "remove", "--force", str(gone_path))

    async def second() -> None:
        with open_app(settings, store=SQLiteStore(settings.db_path)) as app:
            caller = Caller(app)
            assert await app.sessions.recover_worktrees() == 1
            assert (await _worktree(caller, kept["id"]))["state"] == "active"
            assert (await _worktree(caller, gone["id"]))["state"] == "missing"
            await caller(
                "compozy__session_runtime_set",
                {
                    "session_id": kept["id"],
                    "provider": "echo",
                    "selection_revision": 0,
                    "generation": 0,
                },
            )
            with pytest.raises(WorktreeUnavailable) as caught:
                await caller(
                    "compozy__session_runtime_set",
                    {
                        "session_id": gone["id"],
                        "provider": "echo",
                        "selection_revision": 0,
                        "generation": 0,
                    },
                )
            assert caught.value.reason == "worktree_missing"
            assert "compozy worktree create --session" in caught.value.message
            await app.shutdown()

    anyio.run(second)
    assert str(gone_path) not in worktree_paths(workspace)


# --- who may act on whose worktree -----------------------------------------------------------


@pytest.fixture
async def family(call: Caller) -> dict[str, str]:
    """parent ── child (restricted: session and worktree tools) ── grandchild; parent ── sibling,
    each with a worktree."""
    tools = ["compozy__session_*", "compozy__worktree_*"]
    parent = (await _create(call, name="parent"))["id"]

    async def spawn(under: str, name: str) -> str:
        made = await call.structured(
            "compozy__session_spawn",
            {
                "parent_session_id": under,
                "agent_name": "w",
                "ttl_seconds": 600,
                "tools": tools,
                "worktree": True,
                "name": name,
            },
        )
        return str(made["session_id"])

    child = await spawn(parent, "child")
    return {
        "parent": parent,
        "child": child,
        "grandchild": await spawn(child, "grandchild"),
        "sibling": await spawn(parent, "sibling"),
    }


async def test_a_restricted_child_diffs_only_its_own_and_its_descendants_sessions(
    call: Caller, family: dict[str, str]
) -> None:
    scope = CallScope(session_id=family["child"])
    for who in ("child", "grandchild"):
        await call("compozy__session_diff", {"session_id": family[who]}, scope=scope)
        tree = await call.session("compozy__session_status", {"session_id": family[who]})
        await call("compozy__worktree_inspect", {"worktree_id": tree["worktree_id"]}, scope=scope)
    for who in ("parent", "sibling"):
        with pytest.raises(ToolDenied) as caught:
            await call("compozy__session_diff", {"session_id": family[who]}, scope=scope)
        assert caught.value.reason == "session_not_in_scope"
        tree = await call.session("compozy__session_status", {"session_id": family[who]})
        for tool in ("compozy__worktree_inspect", "compozy__worktree_remove"):
            with pytest.raises(ToolDenied) as denied:
                await call(tool, {"worktree_id": tree["worktree_id"]}, scope=scope)
            assert denied.value.reason == "session_not_in_scope"
    listed = await call.structured("compozy__worktree_list", {}, scope=scope)
    assert {t["session_id"] for t in listed["worktrees"]} == {
        family["child"],
        family["grandchild"],
    }


async def test_a_restricted_child_cannot_merge_an_ancestors_work(
    call: Caller, family: dict[str, str], workspace: Path
) -> None:
    before = git(workspace, "rev-parse", "main")
    with pytest.raises(ToolDenied) as caught:
        await call(
            "compozy__session_merge",
            {"session_id": family["parent"]},
            scope=CallScope(session_id=family["child"]),
        )
    assert caught.value.reason == "session_not_in_scope"
    assert git(workspace, "rev-parse", "main") == before


# --- hooks and upstream servers see the session's directory --------------------------------


async def test_hooks_see_the_worktree_as_the_sessions_directory(
    call: Caller, workspace: Path
) -> None:
    seen: list[dict[str, Any]] = []

    async def record(payload: dict[str, Any]) -> None:
        seen.append(payload)

    call.app.hooks.registry.add_code_hook(record, events=("tool.pre_call",))
    session = await _create(call)
    plain = await call.create()
    directory = (await _worktree(call, session["id"]))["directory"]
    await call(
        "compozy__session_status",
        {"session_id": session["id"]},
        scope=CallScope(session_id=session["id"]),
    )
    await call(
        "compozy__session_status",
        {"session_id": plain["id"]},
        scope=CallScope(session_id=plain["id"]),
    )
    by_session = {p["session_id"]: p for p in seen if "session_id" in p}
    assert by_session[session["id"]]["directory"] == directory
    assert by_session[session["id"]]["workspace"] == str(workspace)
    assert "directory" not in by_session[plain["id"]]  # a session without a worktree: as before
    assert call.app.sessions.directory(session["id"]) == directory  # what roots answer
    assert call.app.sessions.directory(plain["id"]) == str(workspace)
