"""``benchmarks/records.py``: the generated day holds everything the records must show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks.driver import COMMANDS
from benchmarks.records import DEFAULT_SEED, build_world, open_world_app

pytestmark = [pytest.mark.bench, pytest.mark.anyio]


async def full_records(tmp_path: Path, seed: int) -> list[dict[str, Any]]:
    with open_world_app(tmp_path) as (app, clock, driver):
        world = await build_world(app, clock, driver, seed)
        out = []
        for session_id in world.sessions:
            result = await app.dispatcher.call(
                "compozy__session_status", {"session_id": session_id, "result_view": "full"}
            )
            out.append(result.structured["session"])
        return out


async def test_the_default_world_is_realistic(tmp_path: Path) -> None:
    records = await full_records(tmp_path, DEFAULT_SEED)
    assert len(COMMANDS) == 30
    assert any(len(r["available_commands"]) == 30 for r in records)
    assert any(r["lineage"]["kind"] == "spawn" for r in records)
    assert any(r["lineage"]["spawn_depth"] == 2 for r in records)
    assert any(r["lineage"]["permission_policy"]["tools"] != ["*"] for r in records)
    assert any(r["diagnostics"] for r in records)
    assert any(r["pending_interactions"] for r in records)
    assert any("children" in r for r in records)
    assert any(r["pull_request"] for r in records)
    assert any("queue" in r for r in records)
    assert any(r["runtime"].get("acp_caps", {}).get("config_options") for r in records)


async def test_the_same_seed_gives_the_same_records(tmp_path: Path) -> None:
    first = await full_records(tmp_path / "one", 3)
    second = await full_records(tmp_path / "two", 3)
    assert [len(str(r)) for r in first] == [len(str(r)) for r in second]
    assert [(r["name"], r["badge"], r["lineage"]["kind"]) for r in first] == [
        (r["name"], r["badge"], r["lineage"]["kind"]) for r in second
    ]
