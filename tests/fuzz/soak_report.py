"""Write the figures of a soak run (``.soak/figures.json``) into ``docs/reliability.md``, between
its ``soak figures`` markers: ``make soak`` runs it after the soak passes, so the document
shows the last full run, never figures typed by hand.

``python -m tests.fuzz.soak_report [--check]``: ``--check`` only says whether the document
holds the figures of ``.soak/figures.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / ".soak" / "figures.json"
DOC = ROOT / "docs" / "reliability.md"
BEGIN = "<!-- soak figures: written by `make soak` (tests/fuzz/soak_report.py) -->"
END = "<!-- /soak figures -->"


def _mib(kib: int) -> str:
    return f"{kib / 1024:.1f}"


def table(figures: dict[str, Any]) -> str:
    """The figures as the document's table."""
    calls, rss, kill, st = (
        figures["calls"],
        figures["rss_kib"],
        figures["kill_9"],
        figures["schemathesis"],
    )
    surfaces = calls["by_surface"]

    def on(surface: str) -> int:
        return int(surfaces.get(f"{surface} result", 0) + surfaces.get(f"{surface} typed error", 0))

    inputs = "; ".join(
        f"{name}: `{outcome}`" for name, outcome in figures["issue_22_inputs"].items()
    )
    rows = [
        ("Run", f"{figures['date']}, 2 cores shared with other work"),
        (
            "Hostile calls tried",
            f"{calls['tried']:,} in {figures['hostile_calls_seconds']} s "
            f"(HTTP API {on('http'):,}, `/mcp` {on('mcp'):,}, stdio proxy {on('stdio'):,})",
        ),
        ("Ended in a result / a typed error", f"{calls['results']:,} / {calls['typed_errors']:,}"),
        ("HTTP 5xx, protocol failures, tracebacks", f"**{calls['http_5xx']}**"),
        ("The inputs of issue 22", inputs),
        (
            "Daemon RSS: start / peak / final",
            f"{_mib(rss['start'])} / {_mib(rss['peak'])} / {_mib(rss['final'])} MiB (bound 300 MB)",
        ),
        ("`PRAGMA integrity_check` after the calls", f"`{figures['integrity_check']}`"),
        (
            "`kill -9` during write bursts",
            f"{kill['rounds']} rounds, {kill['acknowledged_writes']:,} acknowledged writes, "
            f"**{kill['lost']} lost**",
        ),
        (
            f"schemathesis (every check, {st['seconds']} s, {st['workers']} worker"
            f"{'s' if st['workers'] > 1 else ''})",
            f"{st['generated']:,} requests: exit {st['exit']}, **{st['server_errors_5xx']}** 5xx, "
            f"**{st['schema_valid_refused']}** schema-valid refused, "
            f"**{st['schema_invalid_accepted']}** schema-invalid accepted, "
            f"{st['schema_errors']} schema errors; daemon RSS peak {_mib(st['rss_peak_kib'])} MiB",
        ),
    ]
    lines = ["| What | Figure |", "|---|---|", *(f"| {what} | {figure} |" for what, figure in rows)]
    return "\n".join(lines)


def rendered(doc: str, figures: dict[str, Any]) -> str:
    """``doc`` with the block between the markers replaced by the figures' table."""
    head, found, rest = doc.partition(BEGIN)
    if not found or END not in rest:
        raise SystemExit(f"{DOC}: the soak figures markers are missing")
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{table(figures)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    figures = json.loads(FIGURES.read_text())
    doc = DOC.read_text()
    new = rendered(doc, figures)
    if "--check" in argv:
        return 0 if new == doc else 1
    DOC.write_text(new)
    print(f"soak figures of {figures['date']} written to {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
