"""Agent process groups a process started and could not end (it was killed: ``kill -9`` of a
daemon), ended by the next one.

Each agent runs in a process group of its own. While it runs, a note in
``$COMPOZY_HOME/run/agents/<pgid>.json`` names the group, when its leader started (so that a
reused process id is never mistaken for it) and which process owns it. An agent whose owner
died usually exits when its stdin closes, but what it started in the background does not:
:func:`reap` ends every group whose owner is gone, and forgets its note.

Process start times come from ``/proc``; where there is none, nothing is noted or reaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.private_paths import open_private_append, private_dirs
from compozy_mcp.runtime._procfs import PROC, group_members, start_ticks


@dataclass(frozen=True, slots=True)
class Note:
    pgid: int
    started: int
    owner: int
    owner_started: int

    def owner_alive(self) -> bool:
        return start_ticks(self.owner) == self.owner_started

    def group_is_ours(self) -> bool:
        """Whether the group still holds processes of the agent this note is for: its leader
        (the same process, by start time), or, once the leader is gone, any member (a group id
        is never given out again while a member of the group lives)."""
        leader = start_ticks(self.pgid)
        if leader is not None:
            return leader == self.started
        return bool(group_members(self.pgid))


def note(run_dir: Path, pgid: int) -> Path | None:
    """Note a group this process started; the note's path (``None`` without ``/proc``)."""
    started, owner_started = start_ticks(pgid), start_ticks(os.getpid())
    if started is None or owner_started is None:
        return None
    folder = run_dir / "agents"
    try:
        private_dirs(run_dir.parent, Path(run_dir.name, "agents"))
        path = folder / f"{pgid}.json"
        record = {
            "pgid": pgid,
            "started": started,
            "owner": os.getpid(),
            "owner_started": owner_started,
        }
        with open_private_append(path) as out:
            out.truncate(0)
            out.write(json.dumps(record))
    except OSError:
        return None
    return path


def forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _read(path: Path) -> Note | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        fields = (int(raw[name]) for name in ("pgid", "started", "owner", "owner_started"))
        return Note(*fields)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def reap(run_dir: Path) -> list[int]:
    """End the groups of agents whose owner is gone; the group ids ended."""
    folder = run_dir / "agents"
    if not folder.is_dir() or not PROC.is_dir():
        return []
    ended = []
    for path in folder.glob("*.json"):
        found = _read(path)
        if found is None:
            forget(path)
            continue
        if found.owner_alive():
            continue
        if found.group_is_ours():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(found.pgid, signal.SIGKILL)
                ended.append(found.pgid)
        forget(path)
    return ended
