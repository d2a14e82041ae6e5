"""What the hook tools manage (:class:`~compozy_mcp.native.context.HookAdmin`): the hooks, their
statistics and their run log.

Stored hooks (made by the tools) can be changed; hooks from a hooks.yaml are read-only here
(``hook_read_only``: change the file). Writes run in worker threads, one transaction each, and
make this process's hook set current at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied
from compozy_mcp.hooks._config import FILE_NAME, WORKSPACE_DIR
from compozy_mcp.hooks._engine import HookEngine
from compozy_mcp.hooks._model import CODE, HOME, STORE, Hook
from compozy_mcp.hooks._sample import test_hook
from compozy_mcp.hooks.registry import HookSet
from compozy_mcp.hooks.runlog import run_record, stats_record
from compozy_mcp.native.hook_schema import (
    FAILED_OUTCOMES,
    OUTCOMES,
    RUN_CURSOR,
    check_definition,
    normalized,
)
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import HookRow, HookRunQuery, Store

DEFAULT_RUNS = 50

T = TypeVar("T")


def origin(hook: Hook) -> str:
    """Where a hook is defined, as messages name it (never an absolute path)."""
    if hook.source == HOME:
        return f"$COMPOZY_HOME/{FILE_NAME}"
    return f"{WORKSPACE_DIR}/{FILE_NAME} of workspace {hook.workspace_id}"


class HookAdminService:
    def __init__(
        self,
        engine: HookEngine,
        tools: ToolRegistry,
        store: Store,
        sessions: Sessions,
        clock: Clock,
        offload: Offload,
    ) -> None:
        self._engine = engine
        self._tools = tools
        self._store = store
        self._sessions = sessions
        self._clock = clock
        self._offload = offload

    # --- reading --------------------------------------------------------------------------------

    def _current(self) -> HookSet:
        # A command may follow a change made by another process a moment ago: look again.
        self._engine.registry.invalidate()
        return self._engine.registry.current()

    def _find(self, call: CallInfo, hook_id: str) -> Hook:
        hook = self._current().find(hook_id)
        if hook is None:
            raise ResourceNotFound(call.tool_id, "hook", hook_id)
        return hook

    async def _record(self, hook: Hook) -> dict[str, Any]:
        stats = await self._engine.runlog.stats()
        return hook.record(stats_record(stats.get(hook.id)))

    async def list(self, call: CallInfo, event: str | None) -> dict[str, Any]:
        current = self._current()
        stats = await self._engine.runlog.stats()
        hooks = [
            hook.record(stats_record(stats.get(hook.id)))
            for hook in current.hooks
            if hook.source != CODE and (event is None or hook.event == event)
        ]
        return {"hooks": hooks, "problems": list(current.problems)}

    async def info(self, call: CallInfo, hook_id: str) -> dict[str, Any]:
        return await self._record(self._find(call, hook_id))

    # --- changing stored hooks ------------------------------------------------------------------

    async def _write(self, work: Callable[[], T]) -> T:
        try:
            return await self._offload(work)
        finally:
            self._engine.registry.invalidate()

    def _stored(self, call: CallInfo, hook_id: str) -> Hook:
        hook = self._find(call, hook_id)
        if hook.source != STORE:
            raise ToolConflict(
                call.tool_id,
                f'hook "{hook_id}" is defined in {origin(hook)}; change it there',
                reason=Reason.HOOK_READ_ONLY,
            )
        return hook

    async def create(self, call: CallInfo, definition: dict[str, Any]) -> dict[str, Any]:
        hook_id = definition.get("id") or f"hook-{secrets.token_hex(4)}"
        taken = self._current().find(hook_id)
        if taken is not None:
            raise ToolConflict(
                call.tool_id,
                f'a hook "{hook_id}" exists already ({taken.source})',
                reason=Reason.HOOK_EXISTS,
            )
        now = timestamp(self._clock.now())
        row = HookRow(hook_id, normalized({**definition, "id": hook_id}), now, now)

        def insert() -> None:
            with self._store.write() as writer:
                if any(stored.id == hook_id for stored in writer.hooks()):
                    raise ToolConflict(
                        call.tool_id,
                        f'a hook "{hook_id}" exists already (store)',
                        reason=Reason.HOOK_EXISTS,
                    )
                writer.put_hook(row)

        await self._write(insert)
        return await self.info(call, hook_id)

    async def update(self, call: CallInfo, hook_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        self._stored(call, hook_id)
        now = timestamp(self._clock.now())

        def change() -> None:
            with self._store.write() as writer:
                row = next((stored for stored in writer.hooks() if stored.id == hook_id), None)
                if row is None:
                    raise ResourceNotFound(call.tool_id, "hook", hook_id)
                merged = {**row.definition, **changes}
                if "command" in changes:
                    merged.pop("url", None)
                    merged.pop("headers", None)
                if "url" in changes:
                    merged.pop("command", None)
                check_definition(call.tool_id, merged)
                writer.put_hook(HookRow(hook_id, normalized(merged), row.created_at, now))

        await self._write(change)
        return await self.info(call, hook_id)

    async def set_enabled(self, call: CallInfo, hook_id: str, enabled: bool) -> dict[str, Any]:
        return await self.update(call, hook_id, {"enabled": enabled})

    async def delete(self, call: CallInfo, hook_id: str) -> dict[str, Any]:
        self._stored(call, hook_id)

        def remove() -> bool:
            with self._store.write() as writer:
                return writer.delete_hook(hook_id)

        if not await self._write(remove):
            raise ResourceNotFound(call.tool_id, "hook", hook_id)
        return {"hook_id": hook_id, "deleted": True}

    # --- the run log ----------------------------------------------------------------------------

    def _callers(self, call: CallInfo, named: str | None) -> Sequence[str] | None:
        """The sessions whose runs ``call`` may read: any (``None``) for the operator; for a
        managed session, itself and its descendants, or the one of them it names."""
        me = call.scope.session_id
        if me is None:
            return None if named is None else [named]
        mine = self._sessions.lineage_below(me)
        if named is None:
            return mine
        if named not in mine:
            raise ToolDenied(
                call.tool_id,
                f'tool "{call.tool_id}" input "session_id" names session "{named}", which is '
                f'neither the calling session "{me}" nor one of its descendants',
                reason=Reason.SCOPE_MISMATCH,
            )
        return [named]

    async def runs(self, call: CallInfo, filters: dict[str, Any]) -> dict[str, Any]:
        cursor = filters.get("cursor")
        before = decode_cursor(call.tool_id, RUN_CURSOR, cursor) if cursor else None
        failed = filters.get("failed")
        outcomes = None
        if failed is not None:
            outcomes = [o for o in OUTCOMES if (o in FAILED_OUTCOMES) is failed]
        limit = filters.get("limit", DEFAULT_RUNS)
        rows = await self._engine.runlog.runs(
            HookRunQuery(
                hook_id=filters.get("hook_id"),
                event=filters.get("event"),
                tool_call_id=filters.get("tool_call_id"),
                session_ids=self._callers(call, filters.get("session_id")),
                outcomes=outcomes,
                before_seq=before,
                limit=limit + 1,
            )
        )
        out: dict[str, Any] = {"runs": [run_record(row) for row in rows[:limit]]}
        if len(rows) > limit:
            out["next_cursor"] = encode_cursor(RUN_CURSOR, rows[limit - 1].seq)
        return out

    async def test(self, call: CallInfo, request: dict[str, Any]) -> dict[str, Any]:
        hook = self._find(call, request["hook_id"])
        return await test_hook(self._engine, self._tools, call, hook, request)
