"""Loop runs as stored: each run's row written with a compare-and-swap on its version (a
runner that lost a race carries on unless the run ended; an answer that lost one is refused),
and read back for a caller who may act on it (a managed session: runs started by itself or
its descendants)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.loops._runner import ENDED, RunStopped
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import StaleWrite, Store
from compozy_mcp.store.loops import LoopRunRow


class RunRecords:
    def __init__(
        self, store: Store, tools: ToolRegistry, sessions: Sessions, offload: Offload
    ) -> None:
        self._store = store
        self._tools = tools
        self._sessions = sessions
        self._offload = offload
        #: each run's stored version, as this process last wrote or read it
        self.versions: dict[str, int] = {}

    def row_of(self, doc: Mapping[str, Any]) -> LoopRunRow:
        return LoopRunRow(
            id=doc["run_id"],
            loop_id=doc["loop_id"],
            loop_version=doc["loop_version"],
            status=doc["status"],
            owner=doc.get("owner"),
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            doc=dict(doc),
            version=self.versions.get(doc["run_id"], 0),
            started_by=doc.get("started_by"),
        )

    async def write_new(self, doc: dict[str, Any]) -> None:
        def insert() -> LoopRunRow:
            with self._store.write() as writer:
                return writer.put_loop_run(self.row_of(doc))

        stored = await self._offload(insert)
        self.versions[doc["run_id"]] = stored.version

    async def save(self, doc: dict[str, Any], *, answer_of: CallInfo | None = None) -> None:
        """Write the run. A runner that lost a race keeps going unless the run ended meanwhile
        (cancelled elsewhere: :class:`RunStopped`); an answer to a gate (``answer_of``) that
        lost one is refused, so two answers never both count."""
        run_id = doc["run_id"]

        def write() -> LoopRunRow:
            with self._store.write() as writer:
                try:
                    return writer.put_loop_run(self.row_of(doc))
                except StaleWrite:
                    if answer_of is not None:
                        raise ToolConflict(
                            answer_of.tool_id,
                            f'loop run "{run_id}" changed while it was being answered (answered '
                            "or cancelled by another caller); read it again",
                            reason=Reason.WRITE_CONFLICT,
                        ) from None
                    current = writer.loop_run(run_id)
                    if current is None or current.status in ENDED:
                        raise RunStopped(run_id) from None
                    self.versions[run_id] = current.version
                    return writer.put_loop_run(self.row_of(doc))

        stored = await self._offload(write)
        self.versions[run_id] = stored.version

    def load(self, call: CallInfo, run_id: str) -> LoopRunRow:
        with self._store.read() as reader:
            row = reader.loop_run(run_id)
        if row is None:
            raise ResourceNotFound(call.tool_id, "loop run", run_id)
        self.check_access(call, row.doc)
        return row

    def read_doc(self, call: CallInfo, run_id: str) -> dict[str, Any]:
        doc = self.load(call, run_id).doc
        return superseded.translate_run(doc, self._tools)

    def check_access(self, call: CallInfo, doc: Mapping[str, Any]) -> None:
        caller = call.scope.session_id
        if caller is None:
            return
        starter = doc.get("started_by")
        if starter is not None and self._sessions.access.within(caller, starter):
            return
        raise ToolDenied(
            call.tool_id,
            f'loop run "{doc["run_id"]}" was started by '
            f"{'the operator' if starter is None else f'session {starter!r}'}; session "
            f'"{caller}" may act only on runs started by itself and its descendants',
            reason=Reason.SESSION_NOT_IN_SCOPE,
        )
