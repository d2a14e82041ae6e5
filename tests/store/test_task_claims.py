"""Claims across daemons (issue 27): two stores on one database (a SQLite file, a PostgreSQL
database), each claiming from its own threads, never take the same task; each claim is one
conditional UPDATE (on PostgreSQL a row another claimer is taking is passed over)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from tests import pg

from compozy_mcp.store.tasks import TaskQuery, TaskRow

TASKS = 10
CLAIMERS = 20


def _task(n: int) -> TaskRow:
    return TaskRow(
        id=f"task-{n:02d}",
        workspace_id="ws",
        title=f"task {n}",
        description="",
        acceptance_criteria="[]",
        labels="[]",
        priority=n % 3,
        state="todo",
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
    )


@pytest.mark.parametrize("engine", pg.ENGINES)
def test_two_stores_on_one_database_claim_each_task_once(
    engine: str, request: pytest.FixtureRequest
) -> None:
    with pg.stores_on(engine, request, 2) as (first, second):
        with first.write() as writer:
            for n in range(TASKS):
                writer.put_task(_task(n))

        def claim(n: int) -> str | None:
            store = first if n % 2 else second
            with store.write() as writer:
                return writer.claim_next("ws", f"trun-{n:02d}", "2026-01-01T00:00:01Z")

        with ThreadPoolExecutor(max_workers=8) as pool:
            won = list(pool.map(claim, range(CLAIMERS)))
        taken = [task for task in won if task is not None]
        assert sorted(taken) == [f"task-{n:02d}" for n in range(TASKS)]
        assert won.count(None) == CLAIMERS - TASKS
        with second.read() as reader:
            rows = {row.id: row for row in reader.tasks(TaskQuery(workspace_id="ws"))}
        holders = {row.current_run_id for row in rows.values()}
        assert len(holders) == TASKS  # each task held by one run, each run holding one task
        assert {row.state for row in rows.values()} == {"in_progress"}
