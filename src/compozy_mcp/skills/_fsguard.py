"""Filesystem access that stays inside a skills root: checks before reading, and safe reads.

Every check works on resolved real paths, so a symlink anywhere on the way cannot lead a read
outside the root. SKILL.md files that are symlinks are never opened at all.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MAX_SKILL_BYTES = 256 * 1024
MAX_LISTED_FILES = 200
#: directory entries a file listing may visit, so a huge tree cannot stall a view
MAX_VISITED_ENTRIES = 10_000
# O_NOFOLLOW refuses a SKILL.md swapped for a symlink after the check; O_NONBLOCK keeps a
# FIFO from blocking the open (it is then refused as not a regular file)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class Refused(Exception):
    """A file that must not be read; the message is the diagnostic failure."""


@dataclass(frozen=True, slots=True)
class Checked:
    """A SKILL.md that passed the checks: its real path and its ``lstat``."""

    real_path: str
    stat: os.stat_result


def is_within(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_skill_file(path: str, real_root: str) -> Checked | None:
    """Check a SKILL.md without opening it: ``None`` if there is none, ``Refused`` if unsafe."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise Refused(f"SKILL.md cannot be inspected: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise Refused("SKILL.md is a symlink; symlinked skill files are never read")
    if not stat.S_ISREG(info.st_mode):
        raise Refused("SKILL.md is not a regular file")
    if info.st_nlink != 1:
        # a hard link is the same file under another name, maybe outside the root: no path
        # check can tell, so a SKILL.md must have exactly one
        raise Refused("SKILL.md has more than one hard link; linked skill files are never read")
    real_path = os.path.realpath(path)
    if not is_within(real_path, real_root):
        raise Refused("SKILL.md resolves to a file outside the skills root")
    _check_size(info.st_size)
    return Checked(real_path, info)


def read_checked(checked: Checked, real_root: str) -> tuple[bytes, os.stat_result]:
    """Read a checked SKILL.md, re-checking that the opened file is the one that was checked."""
    # re-check: the path may have changed between the scan and this read
    if not is_within(os.path.realpath(checked.real_path), real_root):
        raise Refused("SKILL.md moved outside the skills root")
    try:
        fd = os.open(checked.real_path, _OPEN_FLAGS)
    except OSError as exc:
        raise Refused(f"SKILL.md cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (checked.stat.st_dev, checked.stat.st_ino):
            raise Refused("SKILL.md changed while it was being read")
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise Refused("SKILL.md is not a regular file with one link")
        _check_size(info.st_size)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            total += len(chunk)
            _check_size(total)  # the file may grow after fstat
        return b"".join(chunks), info
    except OSError as exc:
        raise Refused(f"SKILL.md cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _check_size(size: int) -> None:
    if size > MAX_SKILL_BYTES:
        raise Refused(f"SKILL.md is {size} bytes, larger than the 256 KiB limit")


def list_files(folder: str, real_root: str) -> list[str]:
    """The other files of a skill folder: sorted relative POSIX paths, at most 200.

    Symlinks are listed only when they resolve inside the folder, and are never followed.
    """
    real_folder = os.path.realpath(folder)
    if not is_within(real_folder, real_root):
        return []
    found: list[str] = []
    pending: list[tuple[str, str]] = [(real_folder, "")]
    visited = 0
    while pending and visited < MAX_VISITED_ENTRIES:
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue
        for entry in entries:
            visited += 1
            relative = prefix + entry.name
            if relative == "SKILL.md":
                continue
            try:
                if entry.is_symlink():
                    if is_within(os.path.realpath(entry.path), real_folder):
                        found.append(relative)
                elif entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, relative + "/"))
                elif entry.is_file(follow_symlinks=False):
                    found.append(relative)
            except OSError:
                continue
    found.sort()
    return found[:MAX_LISTED_FILES]
