"""The git layer (``compozy_mcp.worktrees``): a repository located, a working tree's snapshot
that leaves its index alone, diffs read whole (spaces, renames, binary files), merges
computed without a checkout, and git under a deadline."""

from __future__ import annotations

from pathlib import Path

import pytest

from compozy_mcp.worktrees import diff
from compozy_mcp.worktrees.git import Git, GitError, GitMissing, GitTimeout
from compozy_mcp.worktrees.repo import NotARepository, Repository

from .gitrepo import commit_all, git, make_repo

pytestmark = pytest.mark.process


def test_a_directory_is_located_in_its_repository_with_its_prefix(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"pkg/sub/a.py": "x\n"})
    where = Repository.locate(Git(), root / "pkg" / "sub")
    assert where.root == root.resolve()
    assert where.prefix == "pkg/sub/"
    assert Repository.locate(Git(), root).prefix == ""


def test_a_directory_outside_any_repository_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepository):
        Repository.locate(Git(), tmp_path / "plain")


def test_a_missing_git_and_a_command_past_its_deadline_are_errors_of_their_own(
    tmp_path: Path,
) -> None:
    with pytest.raises(GitMissing):
        Git("git-that-does-not-exist").run(tmp_path, "status")
    slow = tmp_path / "slow-git"
    slow.write_text("#!/bin/sh\nsleep 30 & sleep 30\n")
    slow.chmod(0o755)
    with pytest.raises(GitTimeout) as caught:
        Git(str(slow), timeout=0.3).run(tmp_path, "status")
    assert "took longer than 0.3 s" in str(caught.value)


def test_a_failure_quotes_what_git_said(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    with pytest.raises(GitError) as caught:
        Git().run(root, "rev-parse", "--verify", "no-such-branch")
    assert "fatal" in caught.value.stderr


def test_a_snapshot_holds_untracked_files_and_leaves_the_index_alone(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    (root / "a.txt").write_text("two\n")
    (root / "new file.txt").write_text("new\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored\n")
    repo = Repository(Git(), root)
    before = git(root, "status", "--porcelain")
    head, commit = repo.snapshot(root, "snap") or ("", "")
    assert git(root, "status", "--porcelain") == before  # the checkout is as it was
    assert git(root, "rev-parse", "HEAD") == head  # and so is its branch
    listed = git(root, "ls-tree", "-r", "--name-only", commit).split("\n")
    assert sorted(listed) == [".gitignore", "a.txt", "new file.txt"]
    assert git(root, "show", f"{commit}:a.txt") == "two"
    assert repo.snapshot(make_repo(tmp_path / "clean"), "x") is None


def test_changed_files_lists_renames_once_and_paths_with_spaces(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"old name.txt": "a\nb\nc\n"})
    git(root, "mv", "old name.txt", "new name.txt")
    (root / "untracked.txt").write_text("u\n")
    changed = Repository(Git(), root).changed_files(root)
    assert sorted(changed) == ["new name.txt", "untracked.txt"]


def test_a_diff_lists_status_counts_renames_and_binary_files(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {"keep.txt": "1\n2\n3\n", "gone.txt": "x\n", "moved.txt": "a\nb\nc\nd\ne\n"},
    )
    base = git(root, "rev-parse", "HEAD")
    (root / "keep.txt").write_text("1\nTWO\n3\n4\n")
    (root / "gone.txt").unlink()
    (root / "dir with space").mkdir()
    git(root, "mv", "moved.txt", "dir with space/moved.txt")
    (root / "image.bin").write_bytes(b"\x00\x01\x02\xff")
    head = commit_all(root, "changes")
    files = {f.path: f for f in diff.changed_files(Git(), root, base, head)}
    assert files["keep.txt"].record() == {
        "path": "keep.txt",
        "status": "modified",
        "added": 2,
        "removed": 1,
    }
    assert files["gone.txt"].status == "deleted"
    assert files["dir with space/moved.txt"].record() == {
        "path": "dir with space/moved.txt",
        "status": "renamed",
        "old_path": "moved.txt",
        "added": 0,
        "removed": 0,
    }
    assert files["image.bin"].record() == {"path": "image.bin", "status": "added", "binary": True}
    summary = diff.summary(list(files.values()), limit=2)
    assert summary["totals"] == {"files": 4, "added": 2, "removed": 2}
    assert summary["truncated"] == {"files_shown": 2, "files_total": 4}
    assert "+TWO" in diff.patch(Git(), root, base, head)


def test_a_merge_is_computed_without_a_checkout_and_names_its_conflicts(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.txt": "base\n", "b.txt": "base\n"})
    git(root, "checkout", "--quiet", "-b", "topic")
    (root / "a.txt").write_text("topic\n")
    topic = commit_all(root, "topic")
    git(root, "checkout", "--quiet", "main")
    (root / "b.txt").write_text("main\n")
    main = commit_all(root, "main")
    repo = Repository(Git(), root)
    clean = repo.merge_tree(main, topic)
    assert clean.conflicts == ()
    assert git(root, "show", f"{clean.tree}:a.txt") == "topic"
    assert git(root, "show", f"{clean.tree}:b.txt") == "main"
    (root / "a.txt").write_text("main\n")
    conflicting = commit_all(root, "main too")
    assert repo.merge_tree(conflicting, topic).conflicts == ("a.txt",)
    assert git(root, "status", "--porcelain") == ""  # no checkout was touched
    assert git(root, "rev-parse", "HEAD") == conflicting
