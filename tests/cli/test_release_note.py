"""The release note (spec, "Migration": "The release note lists every tool whose default changed
and the fields that moved to the full view"): as a pure function, and through ``compozy``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.clirun import run_cli

from compozy_mcp import releasenote
from compozy_mcp.native import build_registry

COMPOZY = Path(sys.executable).parent / "compozy"
REGISTRY = build_registry()
WITH_VIEWS = [tool.id for tool in REGISTRY if tool.has_views]
SINGLE_RESULT = [tool.id for tool in REGISTRY if not tool.has_views]
SESSION_RECORD_TOOLS = ("compozy__session_status", "compozy__session_create")
SESSION_FIELDS = (
    "session.lineage.permission_policy",
    "session.supervision",
    "session.runtime.acp_caps",
    "session.available_commands",
    "session.diagnostics",
)


def compozy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env["COMPOZY_HOME"] = str(tmp_path / "home")
    return run_cli(*args, env=env)


def sections(markdown: str) -> dict[str, list[str]]:
    """tool -> the field paths listed under the ``#### `a`, `b` `` heading that names it."""
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("#### `"):
            current = [name.strip().strip("`") for name in line[5:].split(",")]
            for name in current:
                out[name] = []
        elif line.startswith("#"):
            current = []
        elif current and line.startswith("- `"):
            for name in current:
                out[name].append(line[3:].split("`", 1)[0])
    return out


# --- the pure function ------------------------------------------------------------------------


def test_every_tool_with_views_is_listed_in_catalog_order() -> None:
    assert [c.tool_id for c in releasenote.changes(REGISTRY)] == WITH_VIEWS


def test_single_result_tools_are_not_listed() -> None:
    listed = {c.tool_id for c in releasenote.changes(REGISTRY)}
    assert SINGLE_RESULT
    assert not listed & set(SINGLE_RESULT)


def test_fields_come_from_the_view_definitions() -> None:
    for change, tool in zip(
        releasenote.changes(REGISTRY), [t for t in REGISTRY if t.views], strict=True
    ):
        assert tool.views is not None
        assert change.moved == tool.views.moved_to_full


@pytest.mark.parametrize("tool_id", SESSION_RECORD_TOOLS)
def test_session_record_tools_list_the_moved_session_fields(tool_id: str) -> None:
    change = next(c for c in releasenote.changes(REGISTRY) if c.tool_id == tool_id)
    paths = [m.path for m in change.moved]
    for field in SESSION_FIELDS:
        assert field in paths
    # kept in compact, so not moved
    assert "session.lineage.root_session_id" not in paths
    assert "session.pending_interactions" not in paths


def test_spawn_lists_only_the_permission_echo() -> None:
    change = next(c for c in releasenote.changes(REGISTRY) if c.tool_id == "compozy__session_spawn")
    assert [m.path for m in change.moved] == ["permissions"]


def test_a_conditional_drop_carries_its_condition() -> None:
    change = next(c for c in releasenote.changes(REGISTRY) if c.tool_id == "compozy__skill_list")
    diagnostics = next(m for m in change.moved if m.path == "skills[].diagnostics")
    assert diagnostics.condition is not None
    assert "every diagnostic is valid" in diagnostics.condition


def test_markdown_puts_each_field_under_its_tool() -> None:
    found = sections(releasenote.markdown(releasenote.changes(REGISTRY)))
    assert sorted(found) == sorted(WITH_VIEWS)  # grouped: catalog order within a group
    assert "permissions" in found["compozy__session_spawn"]
    assert "session.supervision" not in found["compozy__session_spawn"]
    assert "sessions[].lineage.permission_policy" in found["compozy__session_list"]
    assert "tools[].output_views" in found["compozy__tool_list"]


def test_the_task_and_heartbeat_tools_are_listed_keeping_the_ids_the_spec_names() -> None:
    """Issue 27: the note lists the new tools; what the spec says their compact records keep
    (the policy snapshot_id, a review's delivery_id) is not among the fields that moved."""
    found = sections(releasenote.markdown(releasenote.changes(REGISTRY)))
    new_tools = [
        tool
        for tool in WITH_VIEWS
        if tool.startswith(("compozy__task_", "compozy__agent_heartbeat_"))
    ]
    assert len(new_tools) == 14
    heartbeat = found["compozy__agent_heartbeat_status"]
    assert {"heartbeat.prompt", "heartbeat.cron", "heartbeat.interval_seconds"} <= set(heartbeat)
    assert "heartbeat.snapshot_id" not in heartbeat
    review = found["compozy__task_run_review_submit"]
    assert "review.comments" in review
    assert "review.delivery_id" not in review
    assert "task.reviews[].delivery_id" not in found["compozy__task_status"]


def test_a_registry_without_views_has_an_empty_note() -> None:
    single = [tool for tool in REGISTRY if not tool.has_views]
    assert releasenote.changes(single) == []
    assert sections(releasenote.markdown([])) == {}


# --- through the executable -----------------------------------------------------------------


def test_cli_prints_markdown_by_default(tmp_path: Path) -> None:
    done = compozy(tmp_path, "catalog", "release-note")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## ")
    found = sections(done.stdout)
    assert sorted(found) == sorted(WITH_VIEWS)  # grouped: catalog order within a group
    for tool_id in SESSION_RECORD_TOOLS:
        for field in SESSION_FIELDS:
            assert field in found[tool_id]
    assert found["compozy__session_spawn"] == ["permissions"]
    for tool_id in SINGLE_RESULT:
        assert tool_id not in done.stdout


def test_cli_json_lists_tools_and_fields(tmp_path: Path) -> None:
    done = compozy(tmp_path, "catalog", "release-note", "-o", "json")
    assert done.returncode == 0, done.stderr
    note = json.loads(done.stdout)
    by_tool = {t["tool_id"]: [m["path"] for m in t["moved_to_full"]] for t in note["tools"]}
    assert list(by_tool) == WITH_VIEWS
    assert "session.runtime.acp_caps" in by_tool["compozy__session_status"]
    assert by_tool["compozy__session_spawn"] == ["permissions"]


def test_cli_text_output(tmp_path: Path) -> None:
    done = compozy(tmp_path, "catalog", "release-note", "-o", "text")
    assert done.returncode == 0, done.stderr
    assert "17 fields moved to the full view in:\n  compozy__session_create\n" in done.stdout
    assert "\n  compozy__session_status\n" in done.stdout
    assert "    session.available_commands" in done.stdout
    # each group's fields once, whatever the number of tools in it
    assert done.stdout.count("    session.available_commands\n") == 1


@pytest.mark.process
def test_cli_needs_no_store_and_no_mcp_server(tmp_path: Path) -> None:
    probe = (
        "import contextlib, io, sys\n"
        "from compozy_mcp.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['catalog', 'release-note'])\n"
        "loaded = [m for m in sys.modules if m == 'mcp.server' or m.startswith('mcp.server.')]\n"
        "print(code, loaded)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env["COMPOZY_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "0 []"
    assert not (tmp_path / "home" / "compozy.db").exists()


def test_tools_that_moved_the_same_fields_are_one_group_said_once() -> None:
    """Issue 17, item 6: 13 tools return the session record; their 16 paths appear once."""
    note = releasenote.markdown(releasenote.changes(REGISTRY))
    assert note.count("- `session.available_commands`") == 1
    [heading] = [
        line
        for line in note.splitlines()
        if line.startswith("#### ") and "`compozy__session_status`" in line
    ]
    for tool_id in SESSION_RECORD_TOOLS:
        assert f"`{tool_id}`" in heading
    grouped = releasenote.groups(releasenote.changes(REGISTRY))
    assert sorted(t for g in grouped for t in g.tool_ids) == sorted(WITH_VIEWS)
    assert len({g.moved for g in grouped}) == len(grouped)
    # one heading per group, each moved path listed under its group only
    assert sum(line.startswith("#### ") for line in note.splitlines()) == len(grouped)
    assert sum(line.startswith("- `") for line in note.splitlines()) == sum(
        len(g.moved) for g in grouped
    )


def test_the_note_claims_nothing_about_earlier_releases() -> None:
    """A first release: no "unchanged from earlier releases", no "now"."""
    note = releasenote.markdown(releasenote.changes(REGISTRY)).lower()
    for claim in ("earlier release", "unchanged from", " now ", "previous release"):
        assert claim not in note


def test_json_groups_and_tools_agree(tmp_path: Path) -> None:
    done = compozy(tmp_path, "catalog", "release-note", "-o", "json")
    document = json.loads(done.stdout)
    per_tool = {t["tool_id"]: t["moved_to_full"] for t in document["tools"]}
    for group in document["groups"]:
        for tool_id in group["tool_ids"]:
            assert per_tool[tool_id] == group["moved_to_full"]
