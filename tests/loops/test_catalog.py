"""Issue 15, item 6: the Loop tools appear in ``tool_list`` / ``tool_info`` like every tool,
with upstream's risk classes (§2: loop_validate, loop_list, loop_runs, loop_status,
loop_inspect read; loop_create, loop_run, loop_cancel, loop_approve mutating), and the release
note has the Loops section."""

from __future__ import annotations

import pytest
from tests.conftest import Caller

from compozy_mcp import releasenote
from compozy_mcp.native import build_registry

pytestmark = pytest.mark.anyio

RISK = {
    "compozy__loop_validate": "read",
    "compozy__loop_list": "read",
    "compozy__loop_runs": "read",
    "compozy__loop_status": "read",
    "compozy__loop_inspect": "read",
    "compozy__loop_create": "mutating",
    "compozy__loop_run": "mutating",
    "compozy__loop_cancel": "mutating",
    "compozy__loop_approve": "mutating",
}


async def test_loop_tools_are_listed_with_upstreams_risk_classes(call: Caller) -> None:
    listed = await call.structured("compozy__tool_list", {"result_view": "full"})
    found = {t["id"]: t for t in listed["tools"] if t["id"].startswith("compozy__loop_")}
    assert set(found) == set(RISK)
    for tool_id, risk in RISK.items():
        info = await call.structured("compozy__tool_info", {"tool_id": tool_id})
        descriptor = info["tool"]["descriptor"]
        assert descriptor["risk"] == risk, tool_id
        assert descriptor["toolsets"] == ["compozy__loops"]
        assert ("output_views" in descriptor) is (tool_id != "compozy__loop_validate")


def test_the_release_note_has_the_loops_section() -> None:
    note = releasenote.markdown(releasenote.changes(build_registry()))
    section = note.split("### Loops\n", 1)[1]
    assert "`result_view_field_requires_full`" in section
    assert "`result_view_pinned`" in section
    assert "#1462" in section
    assert releasenote.payload([])["loops"][0].startswith("A tool node selects its view")
