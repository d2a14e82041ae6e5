"""A diff between two trees, as a record: the files changed with their status and line counts,
the totals, and the unified patch.

Files are read from ``git diff-tree -z`` (``--name-status`` and ``--numstat``, renames found),
so any path, spaces and newlines included, comes through as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compozy_mcp.worktrees.git import Git

#: files a diff record lists; the totals always count them all
MAX_FILES = 300

_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type_changed",
}


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    status: str
    added: int | None  # None for a binary file
    removed: int | None
    old_path: str | None = None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "status": self.status}
        if self.old_path is not None:
            out["old_path"] = self.old_path
        if self.added is None:
            out["binary"] = True
        else:
            out["added"] = self.added
            out["removed"] = self.removed
        return out


def _name_status(out: str) -> list[tuple[str, str, str | None]]:
    """``(status, path, old_path)`` per file of ``--name-status -z`` output."""
    fields = out.split("\0")
    found: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][0]
        if letter in "RC":
            found.append((_STATUS[letter], fields[i + 2], fields[i + 1]))
            i += 3
        else:
            found.append((_STATUS.get(letter, "modified"), fields[i + 1], None))
            i += 2
    return found


def _numstat(out: str) -> dict[str, tuple[int | None, int | None]]:
    """Line counts by (new) path from ``--numstat -z`` output."""
    fields = out.split("\0")
    counts: dict[str, tuple[int | None, int | None]] = {}
    i = 0
    while i < len(fields) and fields[i]:
        added, removed, path = fields[i].split("\t", 2)
        if path == "":  # a rename: the old and the new path follow
            path = fields[i + 2]
            i += 3
        else:
            i += 1
        counts[path] = (
            None if added == "-" else int(added),
            None if removed == "-" else int(removed),
        )
    return counts


def _diff_tree(git: Git, root: Path, form: str, base: str, head: str) -> str:
    return git.run(root, "diff-tree", "-r", "-z", "-M", "--no-ext-diff", form, base, head).stdout


def changed_files(git: Git, root: Path, base: str, head: str) -> list[FileChange]:
    statuses = _name_status(_diff_tree(git, root, "--name-status", base, head))
    counts = _numstat(_diff_tree(git, root, "--numstat", base, head))
    files = []
    for status, path, old_path in statuses:
        added, removed = counts.get(path, (0, 0))
        files.append(FileChange(path, status, added, removed, old_path))
    return files


def patch(git: Git, root: Path, base: str, head: str) -> str:
    """The unified diff (binary files named, not included)."""
    return git.run(
        root, "diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", base, head
    ).stdout


def summary(files: list[FileChange], limit: int = MAX_FILES) -> dict[str, Any]:
    """``totals``, ``files`` (the first ``limit``) and, when cut, ``truncated``."""
    out: dict[str, Any] = {
        "totals": {
            "files": len(files),
            "added": sum(f.added or 0 for f in files),
            "removed": sum(f.removed or 0 for f in files),
        },
        "files": [f.record() for f in files[:limit]],
    }
    if len(files) > limit:
        out["truncated"] = {"files_shown": limit, "files_total": len(files)}
    return out
