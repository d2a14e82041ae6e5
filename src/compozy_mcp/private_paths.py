"""Directories and files under ``COMPOZY_HOME`` that only their owner may read.

Upstream servers' logs hold what they wrote to stderr (arguments, tokens they echo); ``run/``
holds which processes compozy started. ``Path.mkdir(parents=True, mode=...)`` gives the
parents it creates the default mode (0755 under the usual umask), and ``open`` gives a new file
0644: these helpers create (or tighten) every level below the home at 0700 and files at 0600.
Blocking: call them off the event loop.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dirs(home: Path, relative: Path) -> Path:
    """``home / relative``, each level below ``home`` created or tightened to 0700 (the home
    itself is the operator's: left as it is)."""
    current = home
    for part in relative.parts:
        current = current / part
        current.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        if current.stat().st_mode & 0o777 != PRIVATE_DIR:
            current.chmod(PRIVATE_DIR)  # mkdir's mode is cut by the umask; this one is exact
    return current


def open_private_append(path: Path) -> TextIO:
    """``path`` opened for appending text, created 0600 (an existing file is tightened)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)
        return os.fdopen(fd, "a", encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise
