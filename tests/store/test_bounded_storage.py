"""Bounded storage (issue 11, item 4): artifacts expire and are swept, sessions can be deleted
with everything that is theirs, and the database gives the space back."""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.errors import ResourceNotFound, ToolConflict
from compozy_mcp.store.base import HookRunQuery, HookRunRow
from compozy_mcp.upkeep import UpkeepReport

pytestmark = pytest.mark.anyio

BUDGET = 1024
ARTIFACT_READ = "compozy__tool_artifact_read"


@pytest.fixture
def file_app(tmp_path: Path, clock: FixedClock) -> Iterator[App]:
    """An app on a real file store, with a small result budget and a one-hour artifact TTL."""
    settings = Settings(
        home=tmp_path / "home",
        default_workspace_path=tmp_path,
        max_result_bytes=BUDGET,
        artifact_ttl_seconds=3600,
    )
    with open_app(settings, clock=clock) as app:
        yield app


@pytest.fixture
def fcall(file_app: App) -> Caller:
    return Caller(file_app)


async def _truncated(call: Caller, session_id: str, *, scope: CallScope | None = None) -> str:
    """Read a session in full under a 1 KiB budget: the result becomes an artifact."""
    kw: dict[str, Any] = {"scope": scope} if scope else {}
    result = await call(
        "compozy__session_status", {"session_id": session_id, "result_view": "full"}, **kw
    )
    assert result.truncated
    uri: str = result.structured["artifacts"][0]["uri"]
    return uri


async def _read(call: Caller, uri: str, **kw: Any) -> bytes:
    page = await call.structured(ARTIFACT_READ, {"artifact_uri": uri}, **kw)
    return base64.b64decode(page["data_base64"])


async def test_an_artifact_lives_its_ttl_then_is_gone_and_swept(
    file_app: App, fcall: Caller, clock: FixedClock
) -> None:
    sid = (await fcall.create(name="n" * 150))["id"]
    uri = await _truncated(fcall, sid)
    assert await _read(fcall, uri)
    clock.advance(3601)
    with pytest.raises(ResourceNotFound):  # expired: gone for callers before any sweep
        await fcall(ARTIFACT_READ, {"artifact_uri": uri})
    assert file_app.upkeep.run().artifacts_deleted == 1
    with file_app.store.read() as reader:
        assert reader.artifact(uri) is None


async def test_storing_the_same_result_again_keeps_one_copy_that_lives_on(
    file_app: App, fcall: Caller, clock: FixedClock
) -> None:
    sid = (await fcall.create(name="n" * 150))["id"]
    uri = await _truncated(fcall, sid)
    clock.advance(3000)
    assert await _truncated(fcall, sid) == uri  # deduplicated by content
    clock.advance(3000)  # past the first expiry, within the second
    assert await _read(fcall, uri)


async def test_a_managed_session_reads_only_the_artifacts_its_own_tree_stored(
    fcall: Caller,
) -> None:
    parent = (await fcall.create(name="p" * 150))["id"]
    spawned = await fcall.structured(
        "compozy__session_spawn",
        {"parent_session_id": parent, "agent_name": "w", "ttl_seconds": 600},
    )
    child = CallScope(session_id=spawned["session_id"])
    operators = await _truncated(fcall, parent)
    with pytest.raises(ResourceNotFound):
        await fcall(ARTIFACT_READ, {"artifact_uri": operators}, scope=child)
    own = await _truncated(fcall, spawned["session_id"], scope=child)
    assert await _read(fcall, own, scope=child)


async def test_deleting_needs_an_archived_session(fcall: Caller) -> None:
    sid = (await fcall.create())["id"]
    with pytest.raises(ToolConflict) as caught:
        await fcall("compozy__session_delete", {"session_id": sid})
    assert caught.value.reason == "session_not_archived"


async def test_delete_removes_the_session_its_descendants_transcripts_and_artifacts(
    file_app: App, fcall: Caller
) -> None:
    root = (await fcall.create(name="r" * 150))["id"]
    spawned = await fcall.structured(
        "compozy__session_spawn",
        {"parent_session_id": root, "agent_name": "w", "ttl_seconds": 600, "prompt": "go"},
    )
    child = spawned["session_id"]
    uri = await _truncated(fcall, child, scope=CallScope(session_id=child))
    keeper = (await fcall.create())["id"]
    await fcall("compozy__session_archive", {"session_id": root})
    deleted = (await fcall.structured("compozy__session_delete", {"session_id": root}))["deleted"]
    assert deleted == {
        "session_id": root,
        "sessions": [root, child],
        "transcript_turns": 1,
        "artifacts": 1,
    }
    with file_app.store.read() as reader:
        assert reader.session(root) is None
        assert reader.session(child) is None
        assert reader.transcript(child) == []
        assert reader.artifact(uri) is None
        assert reader.session(keeper) is not None


def _hook_run(session_id: str | None) -> HookRunRow:
    return HookRunRow(
        hook_id="audit",
        event="tool.post_call",
        tool_id="compozy__session_status",
        tool_call_id=f"call-{session_id}",
        session_id=session_id,
        started_at="2026-01-01T00:00:00Z",
        duration_ms=1.0,
        outcome="ok",
        decision="none",
        patch_applied=False,
        detail=None,
        exit_code=0,
        stderr_tail="the prompt was: secret",
    )


async def test_delete_removes_the_hook_runs_of_the_deleted_sessions_calls(
    file_app: App, fcall: Caller
) -> None:
    doomed = (await fcall.create())["id"]
    keeper = (await fcall.create())["id"]
    with file_app.store.write() as writer:
        for caller in (doomed, keeper, None):
            writer.add_hook_run(_hook_run(caller), failed=False)
    await fcall("compozy__session_archive", {"session_id": doomed})
    await fcall("compozy__session_delete", {"session_id": doomed})
    with file_app.store.read() as reader:
        kept = reader.hook_runs(HookRunQuery(hook_id="audit"))
    assert sorted(str(run.session_id) for run in kept) == sorted([keeper, "None"])


async def _grow_then_delete(
    app: App, call: Caller, clock: FixedClock, roots: int, children: int, *, vacuum: bool
) -> tuple[int, int, int, UpkeepReport]:
    """Sizes empty, with ``roots`` sessions of ``children`` children (50 KB prompts) and a
    truncated result each, and after deleting them all and an upkeep (``vacuum``: with one)."""
    size = app.store.size
    app.upkeep.run(vacuum=vacuum)
    baseline = size().total
    made = []
    for n in range(roots):
        root = (await call.create(name=f"{n}" + "x" * 150))["id"]
        made.append(root)
        for _ in range(children):
            await call.structured(
                "compozy__session_spawn",
                {
                    "parent_session_id": root,
                    "agent_name": "w",
                    "ttl_seconds": 600,
                    "prompt": "p" * 50_000,
                },
            )
        await _truncated(call, root)
    app.upkeep.run()
    grown = size().total
    for root in made:
        await call("compozy__session_archive", {"session_id": root})
        await call("compozy__session_delete", {"session_id": root})
    clock.advance(3601)  # the operator's artifacts outlive the sessions until their TTL
    report = app.upkeep.run(vacuum=vacuum)
    return baseline, grown, size().total, report


async def test_the_database_size_returns_after_deleting_and_vacuuming(
    file_app: App, fcall: Caller, clock: FixedClock
) -> None:
    baseline, grown, after, report = await _grow_then_delete(
        file_app, fcall, clock, 20, 3, vacuum=True
    )
    print(f"store: {baseline} B empty, {grown} B with 80 sessions, {after} B after delete+vacuum")
    assert report.artifacts_deleted >= 20
    assert grown > baseline + 2_000_000
    assert report.after.total == after
    assert after <= baseline + 64 * 1024  # the space came back (a few pages of slack)


# --- files and exposure (issue 11, item 6) ----------------------------------------------------


def test_the_home_is_0700_and_the_database_and_wal_are_0600(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    old = os.umask(0o022)
    try:
        with open_app(Settings(home=home, default_workspace_path=tmp_path)):
            modes = {
                path.name: stat.S_IMODE(path.stat().st_mode)
                for path in (home, home / "compozy.db", home / "compozy.db-wal")
            }
    finally:
        os.umask(old)
    assert modes == {"fresh": 0o700, "compozy.db": 0o600, "compozy.db-wal": 0o600}


def test_a_wider_existing_database_is_used_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(home=tmp_path / "home", default_workspace_path=tmp_path)
    with open_app(settings):
        pass
    settings.db_path.chmod(0o644)
    with open_app(settings):
        pass
    assert any("can be read by other users" in r.getMessage() for r in caplog.records)


async def test_the_daemons_upkeep_gives_the_space_back_without_a_vacuum(
    file_app: App, fcall: Caller, clock: FixedClock
) -> None:
    """Issue 22: the upkeep freed artifacts but the file kept its size until ``compozy store
    vacuum``, while the README said the space was given back. The store vacuums incrementally:
    each upkeep gives the pages of deleted content back."""
    baseline, grown, after, report = await _grow_then_delete(
        file_app, fcall, clock, 10, 1, vacuum=False
    )
    print(f"store: {baseline} B empty, {grown} B with 20 sessions, {after} B after upkeep")
    assert not report.vacuumed
    assert grown > baseline + 400_000
    assert after <= baseline + 64 * 1024


def test_a_store_made_before_incremental_vacuuming_takes_it_at_its_next_vacuum(
    tmp_path: Path,
) -> None:
    import sqlite3

    from compozy_mcp.store import SQLiteStore

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE made_before (x)")  # auto_vacuum can no longer change by itself
    old.close()
    store = SQLiteStore(path)
    try:
        assert _auto_vacuum(path) == 0
        store.vacuum()
        assert _auto_vacuum(path) == 2  # incremental
    finally:
        store.close()


def _auto_vacuum(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA auto_vacuum").fetchone()[0])
    finally:
        conn.close()
