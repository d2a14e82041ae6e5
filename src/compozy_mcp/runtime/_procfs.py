"""What ``/proc`` says of processes: when one started (so that a reused process id is never
taken for it), its children, the members of a process group, its command line. Without
``/proc`` every answer is empty."""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), ``None`` for a
    process that does not run (a zombie included)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else fields


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    return _stat(pid) is not None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), ``None`` if it does not run."""
    fields = _stat(pid)
    return int(fields[19]) if fields is not None else None


def _every() -> list[tuple[int, list[str]]]:
    found = []
    try:
        entries = list(PROC.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name.isdigit() and (fields := _stat(entry.name)) is not None:
            found.append((int(entry.name), fields))
    return found


def children(pid: int) -> dict[int, int]:
    """The running children of ``pid``, each with its start time."""
    return {child: int(f[19]) for child, f in _every() if int(f[1]) == pid}


def group_members(pgid: int) -> list[int]:
    return [pid for pid, fields in _every() if int(fields[2]) == pgid]
