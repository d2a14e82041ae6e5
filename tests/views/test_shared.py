"""Shared records (:mod:`compozy_mcp.views.shared`): a view of a record its maker shares is
projected once and kept; a record nobody shared is projected afresh every time."""

from __future__ import annotations

from typing import Any

from compozy_mcp.views import Each, Fields, project
from compozy_mcp.views.mask import _kept_view
from compozy_mcp.views.shared import SHARED, VIEWS_PER_RECORD, SharedRecords

MASK = Fields.of("id", runtime=Fields.of("status"))


def _record() -> dict[str, Any]:
    return {"id": "sess-1", "name": "n", "runtime": {"status": "ready", "generation": 2}}


def test_a_shared_records_view_is_projected_once_and_equals_a_fresh_projection() -> None:
    record = _record()
    SHARED.share(record)
    first = project({"session": record}, Fields({"session": MASK}))["session"]
    assert first == project(_record(), MASK) == {"id": "sess-1", "runtime": {"status": "ready"}}
    assert project(record, MASK) is first
    assert project([record], Each(MASK))[0] is first


def test_a_record_nobody_shared_is_projected_afresh() -> None:
    record = _record()
    first = project(record, MASK)
    record["runtime"]["status"] = "running"  # its maker's to change: nobody shared it
    second = project(record, MASK)
    assert first is not second
    assert second["runtime"]["status"] == "running"


def test_an_equal_record_is_not_the_shared_one() -> None:
    shared = SharedRecords()
    record = _record()
    shared.share(record)
    assert shared.views(_record()) is None


def test_a_shared_record_keeps_a_few_views_and_projects_the_rest_each_time() -> None:
    shared = SharedRecords()
    record = _record()
    shared.share(record)
    kept = shared.views(record)
    assert kept is not None
    masks = [Fields.of("id", "name") for _ in range(VIEWS_PER_RECORD + 1)]
    views = [_kept_view(record, mask, kept) for mask in masks]
    assert len(kept) == VIEWS_PER_RECORD
    assert _kept_view(record, masks[-1], kept) is not views[-1]
    assert _kept_view(record, masks[0], kept) is views[0]


def test_only_the_records_shared_last_are_kept() -> None:
    shared = SharedRecords(size=2)
    records = [_record() for _ in range(3)]
    for record in records:
        shared.share(record)
    assert shared.views(records[0]) is None
    assert shared.views(records[1]) == []
    assert shared.views(records[2]) == []
