"""The soak's figures reach docs/reliability.md from .soak/figures.json, never by hand."""

from __future__ import annotations

from typing import Any

import pytest
from tests.fuzz.soak_report import BEGIN, DOC, END, rendered, table

FIGURES: dict[str, Any] = {
    "date": "2026-12-04",
    "issue_22_inputs": {"alias bomb (717 bytes) to loop validate": "413 limit_exceeded"},
    "calls": {
        "tried": 20000,
        "results": 1291,
        "typed_errors": 18709,
        "http_5xx": 0,
        "by_surface": {"mcp result": 685, "mcp typed error": 9956, "stdio result": 338},
    },
    "hostile_calls_seconds": 451,
    "rss_kib": {"start": 82884, "peak": 197140, "final": 197140},
    "integrity_check": "ok",
    "kill_9": {"rounds": 6, "acknowledged_writes": 8318, "lost": 0},
    "schemathesis": {
        "exit": 0,
        "workers": 1,
        "generated": 6370,
        "seconds": 300,
        "server_errors_5xx": 0,
        "schema_valid_refused": 0,
        "schema_invalid_accepted": 0,
        "failures": {},
        "schema_errors": 0,
        "rss_peak_kib": 88728,
    },
}


def test_the_table_states_each_figure_of_the_run() -> None:
    text = table(FIGURES)
    assert (
        "| Hostile calls tried | 20,000 in 451 s (HTTP API 0, `/mcp` 10,641, stdio proxy 338) |"
        in (text)
    )
    assert "80.9 / 192.5 / 192.5 MiB" in text
    assert "8,318 acknowledged writes, **0 lost**" in text
    assert (
        "| schemathesis (every check, 300 s, 1 worker) | 6,370 requests: exit 0, **0** 5xx"
    ) in text
    assert "`413 limit_exceeded`" in text


def test_the_figures_replace_only_what_lies_between_the_markers() -> None:
    doc = f"before\n{BEGIN}\nold figures\n{END}\nafter\n"
    new = rendered(doc, FIGURES)
    assert new.startswith(f"before\n{BEGIN}\n| What | Figure |")
    assert new.endswith(f"{END}\nafter\n")
    assert "old figures" not in new
    assert rendered(new, FIGURES) == new


def test_the_document_has_the_markers() -> None:
    text = DOC.read_text()
    assert text.count(BEGIN) == 1
    assert text.count(END) == 1


def test_a_document_without_the_markers_is_refused() -> None:
    with pytest.raises(SystemExit):
        rendered("no markers", FIGURES)
