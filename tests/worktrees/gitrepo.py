"""Git repositories for the worktree tests, made with the real git (process tier)."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its output without the trailing newline (a failure raises)."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.rstrip("\n")


def make_repo(path: Path, files: dict[str, str] | None = None, branch: str = "main") -> Path:
    """A repository at ``path`` with one commit holding ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch", branch)
    for name, text in (files or {"README.md": "hello\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    commit_all(path, "first")
    return path


def commit_all(path: Path, message: str) -> str:
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--allow-empty", "-m", message)
    return git(path, "rev-parse", "HEAD")


def branches(path: Path) -> list[str]:
    return git(path, "branch", "--format=%(refname:short)").split("\n")


def worktree_paths(path: Path) -> list[str]:
    out = git(path, "worktree", "list", "--porcelain")
    return [
        line.removeprefix("worktree ") for line in out.split("\n") if line.startswith("worktree ")
    ]
