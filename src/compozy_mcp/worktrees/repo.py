"""What compozy asks of a git repository: where it is, its commits and branches, worktrees
added and removed, a snapshot of a working tree, diffs and merges computed without touching
anybody's checkout.

Nothing here changes a checkout the caller did not name: a snapshot is written through a
private copy of the index, a merge is computed with ``git merge-tree`` (no working tree), and a
target branch moves only by fast-forward (of its checkout, when it has one, which must be
clean).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.worktrees.git import Git, GitError

#: who a commit compozy makes is by, when the repository's configuration names nobody
FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "compozy",
    "GIT_AUTHOR_EMAIL": "compozy@localhost",
    "GIT_COMMITTER_NAME": "compozy",
    "GIT_COMMITTER_EMAIL": "compozy@localhost",
}


class NotARepository(GitError):
    """The directory is not inside a git working tree."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a directory sits in its repository: the working tree's root and the path from it
    (``""`` at the root, else ending in ``/``)."""

    root: Path
    prefix: str


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """``git merge-tree``'s answer: the merged tree, or the files in conflict."""

    tree: str
    conflicts: tuple[str, ...]


class Repository:
    """One repository, reached through any of its working trees (``root``)."""

    def __init__(self, git: Git, root: Path) -> None:
        self.git = git
        self.root = root

    # --- where -----------------------------------------------------------------------------

    @staticmethod
    def locate(git: Git, directory: Path) -> Location:
        # no .git above it: not a repository, known without starting git
        if not any((place / ".git").exists() for place in (directory, *directory.parents)):
            raise NotARepository(("rev-parse",), f"{directory} is not in a git repository")
        try:
            out = git.run(directory, "rev-parse", "--show-toplevel", "--show-prefix").stdout
        except GitError as exc:
            raise NotARepository(exc.args_run, str(exc), stderr=exc.stderr) from None
        lines = out.split("\n")
        return Location(Path(lines[0]), lines[1] if len(lines) > 1 else "")

    # --- commits and branches ---------------------------------------------------------------

    def commit(self, ref: str) -> str | None:
        """The commit ``ref`` names, or ``None`` (unknown ref, or a branch with no commit)."""
        found = self.git.run(
            self.root,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{ref}^{{commit}}",
            check=False,
        )
        return found.stdout.strip() or None if found.returncode == 0 else None

    def current_branch(self) -> str | None:
        found = self.git.run(self.root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return found.stdout.strip() or None if found.returncode == 0 else None

    def is_branch_name(self, name: str) -> bool:
        return (
            self.git.run(self.root, "check-ref-format", "--branch", name, check=False).returncode
            == 0
        )

    def branch_tip(self, name: str) -> str | None:
        return self.commit(f"refs/heads/{name}")

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        found = self.git.run(
            self.root, "merge-base", "--is-ancestor", ancestor, descendant, check=False
        )
        return found.returncode == 0

    def identity(self) -> dict[str, str]:
        """Environment for a commit by compozy: the repository's own identity when it has one."""
        found = self.git.run(self.root, "var", "GIT_COMMITTER_IDENT", check=False)
        if found.returncode == 0 and "@" in found.stdout and "(none)" not in found.stdout:
            name = self.git.run(self.root, "config", "user.name", check=False).stdout.strip()
            if name:
                return {}
        return dict(FALLBACK_IDENTITY)

    def commit_tree(self, tree: str, parents: tuple[str, ...], message: str) -> str:
        args = ["-c", "commit.gpgsign=false", "commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.git.text(self.root, *args, "-m", message, env=self.identity())

    def update_branch(self, name: str, new: str, old: str) -> None:
        """Move ``refs/heads/NAME`` from ``old`` to ``new`` (refused if it moved meanwhile)."""
        self.git.run(self.root, "update-ref", f"refs/heads/{name}", new, old)

    # --- worktrees -------------------------------------------------------------------------

    def add_worktree(self, path: Path, *, branch: str, start: str | None) -> None:
        """Check ``branch`` out at ``path``: a new branch at ``start``, or the existing branch
        when ``start`` is ``None``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if start is not None:
            self.git.run(self.root, "worktree", "add", "--quiet", "-b", branch, str(path), start)
        else:
            self.git.run(self.root, "worktree", "add", "--quiet", str(path), branch)

    def remove_worktree(self, path: Path) -> None:
        """Remove the worktree at ``path`` (its branch stays); one already gone is pruned."""
        if path.is_dir():
            self.git.run(self.root, "worktree", "remove", "--force", "--force", str(path))
        else:
            self.prune()

    def prune(self) -> None:
        self.git.run(self.root, "worktree", "prune")

    def worktrees(self) -> dict[Path, str | None]:
        """Every working tree of the repository and the branch it has checked out."""
        out = self.git.text(self.root, "worktree", "list", "--porcelain", "-z")
        found: dict[Path, str | None] = {}
        current: Path | None = None
        for field in out.split("\0"):
            if field.startswith("worktree "):
                current = Path(field.removeprefix("worktree "))
                found[current] = None
            elif field.startswith("branch ") and current is not None:
                found[current] = field.removeprefix("branch ").removeprefix("refs/heads/")
        return found

    def checkout_of(self, branch: str) -> Path | None:
        """The working tree that has ``branch`` checked out, if any."""
        for path, checked_out in self.worktrees().items():
            if checked_out == branch:
                return path
        return None

    # --- working trees ---------------------------------------------------------------------

    def changed_files(self, checkout: Path) -> list[str]:
        """Paths with uncommitted changes (untracked files included) in a working tree."""
        out = self.git.run(
            checkout,
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
        ).stdout
        paths: list[str] = []
        fields = iter(out.split("\0"))
        for entry in fields:
            if len(entry) < 4:
                continue
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename's source follows it
                next(fields, None)
        return paths

    def snapshot_tree(self, checkout: Path) -> str:
        """The tree of a working tree as it is now, untracked files included (ignored ones
        not): written through a private copy of its index, so the checkout is untouched."""
        with self._private_index(checkout) as env:
            self.git.run(checkout, "add", "--all", "--", ".", env=env)
            return self.git.text(checkout, "write-tree", env=env)

    def snapshot(self, checkout: Path, message: str) -> tuple[str, str] | None:
        """``(head, commit)``: a commit of the working tree's uncommitted changes on top of its
        HEAD, referenced by nothing yet; ``None`` when there is nothing uncommitted."""
        head = Repository(self.git, checkout).commit("HEAD")
        if head is None:
            return None
        tree = self.snapshot_tree(checkout)
        if tree == self.git.text(checkout, "rev-parse", f"{head}^{{tree}}"):
            return None
        return head, self.commit_tree(tree, (head,), message)

    def commit_all(self, checkout: Path, branch: str, message: str) -> str | None:
        """Commit every uncommitted change of a working tree to its branch (no hooks run);
        returns the new commit, or ``None`` when it was clean."""
        made = self.snapshot(checkout, message)
        if made is None:
            return None
        head, commit = made
        self.update_branch(branch, commit, head)
        # the files already are the new commit's: only the index follows
        self.git.run(checkout, "reset", "--quiet")
        return commit

    def fast_forward_checkout(self, checkout: Path, commit: str) -> None:
        self.git.run(checkout, "merge", "--ff-only", "--quiet", commit)

    @contextmanager
    def _private_index(self, checkout: Path) -> Iterator[Mapping[str, str]]:
        index = Path(
            self.git.text(checkout, "rev-parse", "--path-format=absolute", "--git-path", "index")
        )
        with tempfile.TemporaryDirectory(prefix="compozy-index-") as scratch:
            private = Path(scratch) / "index"
            if index.exists():
                # its stat data spares hashing every unchanged file again; its own mtime is
                # kept, so that git still sees a file changed within the second of the last
                # index write as "racily clean" and reads its content
                shutil.copy2(index, private)
            yield {"GIT_INDEX_FILE": os.fspath(private)}

    # --- comparing and merging ----------------------------------------------------------------

    def merge_tree(self, ours: str, theirs: str) -> MergeOutcome:
        found = self.git.run(
            self.root,
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            "-z",
            ours,
            theirs,
            check=False,
        )
        if found.returncode not in (0, 1):
            said = found.stderr.strip().splitlines()
            raise GitError(("merge-tree",), said[-1] if said else "git merge-tree failed")
        fields = [f for f in found.stdout.split("\0") if f]
        return MergeOutcome(fields[0], tuple(dict.fromkeys(fields[1:])))
