"""Worktrees (issue 25): what a session's own checkout costs, and what its diff weighs.

- **Creation**: ``compozy__session_create`` with ``worktree: true`` in a repository of
  ``--files`` files (10,000 by default, in 100 folders), against ``git worktree add`` of the
  same repository by hand (the floor: the checkout itself). Target: under 1 s.
- **Diff**: ``compozy__session_diff`` after ``--changed`` files (1,000 by default) were edited
  in the worktree: the bytes of the compact result and of the full one (with the patch), the
  record as the handler built it, and what the call returned (a result over the budget is
  stored whole as an artifact and returned as a continuation).

    python -m benchmarks.worktrees [--files 10000] [--changed 1000] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import emit_json, machine, machine_line, median, table
from compozy_mcp import jsonutil
from compozy_mcp.assembly import open_app
from compozy_mcp.calls import CallInfo
from compozy_mcp.config import Settings
from compozy_mcp.store import SQLiteStore

ROUNDS = 5
IDENTITY = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True)


def make_repository(path: Path, files: int) -> None:
    """``files`` small files in 100 folders, one commit."""
    path.mkdir(parents=True)
    for index in range(files):
        folder = path / f"pkg{index % 100:02d}"
        folder.mkdir(exist_ok=True)
        lines = [f"# module {index}", *(f"value_{n} = {n * index}" for n in range(8))]
        (folder / f"module_{index:05d}.py").write_text("\n".join(lines) + "\n")
    _git(path, "init", "--quiet", "--initial-branch", "main")
    _git(path, "add", "--all")
    _git(path, "commit", "--quiet", "-m", "first")


def _by_hand(repo: Path, scratch: Path, rounds: int) -> list[float]:
    seconds = []
    for index in range(rounds):
        target = scratch / f"by-hand-{index}"
        started = time.perf_counter()
        _git(repo, "worktree", "add", "--quiet", "-b", f"hand-{index}", str(target), "HEAD")
        seconds.append(time.perf_counter() - started)
    return seconds


async def _through_compozy(
    repo: Path, home: Path, rounds: int, changed: int
) -> tuple[list[float], dict[str, Any]]:
    settings = Settings(home=home, default_workspace_path=repo, permission_mode="bypass")
    seconds: list[float] = []
    with open_app(settings, store=SQLiteStore.memory()) as app:
        call = app.dispatcher.call
        sessions = []
        for index in range(rounds):
            started = time.perf_counter()
            made = await call(
                "compozy__session_create",
                {"agent_name": "bench", "name": f"bench {index}", "worktree": True},
            )
            seconds.append(time.perf_counter() - started)
            sessions.append(made.structured["session"]["id"])
        full_session = await call(
            "compozy__session_status", {"session_id": sessions[0], "result_view": "full"}
        )
        directory = Path(full_session.structured["session"]["worktree"]["directory"])
        edited = sorted(directory.glob("pkg*/module_*.py"))[:changed]
        for path in edited:
            path.write_text(path.read_text().replace("value_3", "value_three") + "extra = 1\n")
        diff: dict[str, Any] = {"changed_files": len(edited)}
        for view in ("compact", "full"):
            started = time.perf_counter()
            result = await call(
                "compozy__session_diff", {"session_id": sessions[0], "result_view": view}
            )
            elapsed = time.perf_counter() - started
            # the record itself, whether or not the call stored it as an artifact
            record = await app.sessions.diff(CallInfo("compozy__session_diff"), sessions[0])
            kept = record if view == "full" else {k: v for k, v in record.items() if k != "patch"}
            diff[view] = {
                "ms": elapsed * 1000,
                "returned_bytes": len(result.structured_json),
                "truncated_to_artifact": result.truncated,
                "record_bytes": len(jsonutil.dumps(kept)),
            }
        diff["files_listed"] = len(record["files"])
        diff["totals"] = record["totals"]
        await app.shutdown()
    return seconds, diff


def measure(files: int, changed: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compozy-bench-wt-") as scratch_text:
        scratch = Path(scratch_text)
        repo = scratch / "repo"
        make_repository(repo, files)
        by_hand = _by_hand(repo, scratch, rounds)
        created, diff = anyio.run(_through_compozy, repo, scratch / "home", rounds, changed)
    compact, full = diff["compact"]["record_bytes"], diff["full"]["record_bytes"]
    return {
        "files": files,
        "rounds": rounds,
        "create_ms": {"median": median(created) * 1000, "max": max(created) * 1000},
        "git_worktree_add_ms": {"median": median(by_hand) * 1000, "max": max(by_hand) * 1000},
        "target_create_under_ms": 1000,
        "create_met": median(created) < 1.0,
        "diff": diff,
        "diff_compact_to_full": round(compact / full, 4) if full else None,
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    diff = result["diff"]
    rows = [
        [
            "session_create with worktree",
            result["create_ms"]["median"],
            result["create_ms"]["max"],
        ],
        [
            "git worktree add (by hand)",
            result["git_worktree_add_ms"]["median"],
            result["git_worktree_add_ms"]["max"],
        ],
    ]
    diff_rows = [
        [
            view,
            diff[view]["record_bytes"],
            diff[view]["returned_bytes"],
            "yes" if diff[view]["truncated_to_artifact"] else "no",
            diff[view]["ms"],
        ]
        for view in ("compact", "full")
    ]
    return "\n".join(
        [
            f"Worktree creation in a {result['files']:,}-file repository, {result['rounds']} "
            f"rounds (target under 1 s: {'met' if result['create_met'] else 'missed'})",
            table(["ms", "median", "max"], rows),
            "",
            f"session_diff after {diff['changed_files']:,} files changed "
            f"({diff['totals']['files']:,} in the totals, {diff['files_listed']} listed); "
            f"compact/full = {result['diff_compact_to_full']}",
            table(["view", "record bytes", "returned bytes", "to artifact", "ms"], diff_rows),
            machine_line(result["machine"]),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worktrees", description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=1_000)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="200 files, 50 changed, two rounds")
    args = parser.parse_args(argv)
    quick = args.quick
    result = measure(200, 50, 2) if quick else measure(args.files, args.changed, ROUNDS)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
