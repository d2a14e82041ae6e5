"""The hook run log: every run of a configured hook, recorded in the store.

A run is written in the background (a worker thread, as every store write), so that a call does
not wait for its hooks' bookkeeping; reading the log here first waits for this process's
pending writes, so a caller always sees the runs of the calls it made. A write that fails (a
busy store) loses that one run and is logged; it never fails a call.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from compozy_mcp.blocking import Offload
from compozy_mcp.errors import CompozyError
from compozy_mcp.native.hook_schema import FAILED_OUTCOMES
from compozy_mcp.store.base import HookRunQuery, HookRunRow, HookStatsRow, Store

log = logging.getLogger(__name__)


def run_record(row: HookRunRow) -> dict[str, Any]:
    """A run as ``compozy__hooks_runs`` shows it (the full view)."""
    out: dict[str, Any] = {
        "run_id": row.seq,
        "hook_id": row.hook_id,
        "event": row.event,
        "tool_id": row.tool_id,
        "tool_call_id": row.tool_call_id,
    }
    if row.session_id is not None:
        out["session_id"] = row.session_id
    out.update(
        started_at=row.started_at,
        duration_ms=round(row.duration_ms, 3),
        outcome=row.outcome,
        decision=row.decision,
        patch_applied=row.patch_applied,
    )
    if row.detail is not None:
        out["detail"] = row.detail
    out["exit_code"] = row.exit_code
    out["stderr_tail"] = row.stderr_tail
    if row.patch is not None:
        out["patch"] = row.patch
    return out


def stats_record(row: HookStatsRow | None) -> dict[str, Any]:
    if row is None:
        return {"runs": 0, "failed": 0}
    return {
        "runs": row.runs,
        "failed": row.failed,
        "last_outcome": row.last_outcome,
        "last_run_at": row.last_run_at,
    }


class RunLog:
    def __init__(self, store: Store, offload: Offload) -> None:
        self._store = store
        self._offload = offload
        self._pending: set[asyncio.Task[None]] = set()

    def record(self, row: HookRunRow) -> None:
        """Write one run in the background (the caller does not wait)."""
        task = asyncio.get_running_loop().create_task(self._write(row))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _write(self, row: HookRunRow) -> None:
        try:
            await self._offload(self._insert, row)
        except CompozyError as error:
            log.warning("a run of hook %s was not recorded: %s", row.hook_id, error.message)

    def _insert(self, row: HookRunRow) -> None:
        with self._store.write() as writer:
            writer.add_hook_run(row, failed=row.outcome in FAILED_OUTCOMES)

    async def settle(self) -> None:
        """Wait for the writes this process has started on this event loop."""
        loop = asyncio.get_running_loop()
        mine = [task for task in self._pending if task.get_loop() is loop]
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)

    async def runs(self, query: HookRunQuery) -> list[HookRunRow]:
        await self.settle()
        with self._store.read() as reader:
            return reader.hook_runs(query)

    async def stats(self) -> dict[str, HookStatsRow]:
        await self.settle()
        with self._store.read() as reader:
            return {row.hook_id: row for row in reader.hook_stats()}
