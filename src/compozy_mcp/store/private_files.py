"""The store's directory and file, readable by their owner only: every prompt and transcript
lives under them."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> None:
    """Create ``path`` (and its parents) readable by its owner only; warn if it exists wider.
    Every prompt and transcript lives under it."""
    if not path.exists():
        path.mkdir(parents=True, mode=PRIVATE_DIR)
        path.chmod(PRIVATE_DIR)  # mkdir's mode is cut by the umask; this one is exact
    elif path.stat().st_mode & 0o077:
        log.warning("%s can be read by other users; chmod 700 it", path)


def private_file(path: Path) -> None:
    """Create the database file owner-only before SQLite opens it (SQLite gives its WAL and
    shared-memory files the database's own mode); warn when an existing one is wider."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            log.warning("%s can be read by other users; chmod 600 it", path)
        return
    os.close(fd)
