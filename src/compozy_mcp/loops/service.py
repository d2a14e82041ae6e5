"""What the Loop tools manage (:class:`~compozy_mcp.native.context.LoopAdmin`): definitions
(versioned), runs (persisted as they move, run in this process's event loop) and their
recovery after a restart.

Who may act (:mod:`.ownership`): a Loop belongs to who stored its first version, the operator
or a session and its ancestors; a managed session lists, reads, versions and runs only the
Loops its tree owns. A run is made in the scope of the caller that starts it, narrowed to the
author of the version it runs: its tool and agent nodes call as that session, held to its
permission policy. A managed session reads, cancels and answers only the runs started by
itself or one of its descendants; the operator acts on every run.

Restart: a run records the process that drives it. When a daemon starts, each run left
``running`` by a process that is gone is resumed if every node it was in the middle of may be
repeated safely (read-only tools, transforms, branches, fan-out bookkeeping); otherwise it is
marked ``interrupted`` with the node that was cut off. A run waiting at a gate needs no process
and is answered whenever the operator answers it. No run is silently lost.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from typing import Any

from compozy_mcp.background import TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import (
    LoopInvalid,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
)
from compozy_mcp.loops import _contracts as contracts
from compozy_mcp.loops import _ownership as ownership
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.loops._definitions import LoopDefinitions
from compozy_mcp.loops._driving import RunDriver, RunPlacement
from compozy_mcp.loops._kinds import input_schema
from compozy_mcp.loops._lint import errors
from compozy_mcp.loops._model import ERROR, WARNING, Definition
from compozy_mcp.loops._records import run_record
from compozy_mcp.loops._run_records import RunRecords
from compozy_mcp.loops._runner import (
    ENDED,
    FAILED,
    PENDING,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    WAITING,
    ToolCaller,
    failure,
)
from compozy_mcp.loops.limits import LoopLimits
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import Store
from compozy_mcp.store.loops import LoopRunQuery
from compozy_mcp.validation import compile_validator, describe

log = logging.getLogger(__name__)

RUN_CURSOR = "l"
DEFAULT_RUNS = 50
FORMAT = superseded.VIEWS_FORMAT


class LoopService:
    def __init__(
        self,
        store: Store,
        tools: ToolRegistry,
        sessions: Sessions,
        clock: Clock,
        offload: Offload,
        tasks: TaskOwner,
        limits: LoopLimits | None = None,
    ) -> None:
        self._limits = limits or LoopLimits()
        self._store = store
        self._tools = tools
        self._sessions = sessions
        self._clock = clock
        self._offload = offload
        self.definitions = LoopDefinitions(store, tools, sessions, self.now, offload, self._limits)
        self._records = RunRecords(store, tools, sessions, offload)
        #: the runs this process drives (started, cancelled, recovered, stopped at shutdown)
        self._driver = RunDriver(
            store,
            tools,
            clock,
            offload,
            tasks,
            self._records,
            self.definitions,
            self._limits,
            self.now,
        )

    @property
    def owner(self) -> str:
        """This process, as the ``owner`` a run it drives records."""
        return self._driver.owner

    @property
    def placement(self) -> RunPlacement | None:
        """Several daemons on one store: who drives which run (``None``: this process alone)."""
        return self._driver.placement

    @placement.setter
    def placement(self, placement: RunPlacement | None) -> None:
        self._driver.placement = placement

    def driven_runs(self) -> list[str]:
        """The runs this process drives now."""
        return self._driver.driven_runs()

    def attach(self, caller: ToolCaller) -> None:
        """The dispatch path tool nodes call through (built after the services)."""
        self._driver.attach(caller)

    def now(self) -> str:
        return timestamp(self._clock.now())

    # --- definitions (:mod:`.definitions`) ------------------------------------------------------

    async def validate(self, call: CallInfo, definition: Any) -> dict[str, Any]:
        return await self.definitions.validate(call, definition)

    async def create(
        self, call: CallInfo, definition: Any, loop_id: str | None, *, agents: str = WARNING
    ) -> dict[str, Any]:
        return await self.definitions.create(call, definition, loop_id, agents=agents)

    async def info(self, call: CallInfo, loop_id: str, version: int | None) -> dict[str, Any]:
        return await self.definitions.info(call, loop_id, version)

    async def list_loops(self, call: CallInfo) -> dict[str, Any]:
        return await self.definitions.list_loops(call)

    # --- runs -----------------------------------------------------------------------------------

    def _inputs(self, call: CallInfo, definition: Definition, given: Mapping[str, Any]) -> Any:
        declared = definition.inputs()
        if not declared:
            return dict(given)
        inputs: dict[str, Any] = {}
        for name in given:
            if name not in declared:
                raise ToolInvalidInput.for_field(
                    call.tool_id,
                    f"inputs.{name}",
                    f"is not an input of this Loop (declared: {', '.join(sorted(declared))})",
                )
        for name, node in declared.items():
            if name in given:
                value = given[name]
            elif "default" in node.params:
                value = node.params["default"]
            else:
                raise ToolInvalidInput.for_field(call.tool_id, f"inputs.{name}", "is required")
            schema = input_schema(node.params)
            if schema:
                problems = list(compile_validator(schema).iter_errors(value))
                if problems:
                    where, problem = describe(problems, unknown="is not declared")
                    field = f"inputs.{name}" + ("" if where == "$" else f".{where}")
                    raise ToolInvalidInput.for_field(call.tool_id, field, problem)
            inputs[name] = value
        return inputs

    async def run(self, call: CallInfo, request: Mapping[str, Any]) -> dict[str, Any]:
        if "definition" in request:
            given = request["definition"]
            created = await self.create(call, given, request.get("loop_id"), agents=ERROR)
            loop_id, version = created["loop"]["id"], created["loop"]["version"]
        elif "loop_id" in request:
            loop_id, version = request["loop_id"], request.get("version")
        else:
            raise ToolInvalidInput(
                call.tool_id, f'tool "{call.tool_id}" needs "loop_id" or "definition"'
            )
        row = self.definitions.owned_row(call, loop_id, version)
        definition, items = await self._offload(self.definitions.linted, row, ERROR)
        if errors(items):  # tools or agents changed since it was stored: lint before every start
            raise LoopInvalid(call.tool_id, [item.payload() for item in items])
        inputs = self._inputs(call, definition, request.get("inputs") or {})
        now = self.now()
        run_id = f"run-{secrets.token_hex(6)}"
        doc: dict[str, Any] = {
            "format": FORMAT,
            "run_id": run_id,
            "loop_id": row.id,
            "loop_version": row.version,
            "status": QUEUED,
            "started_by": call.scope.session_id,
            "acts_as": ownership.acting_scope(
                self._sessions.access, call.scope.session_id, row.author
            ),
            "owner": self.owner,
            "inputs": inputs,
            "contracts": contracts.pin(definition, self._tools),
            "nodes": {
                node.id: {
                    "node_id": node.id,
                    "class": node.cls,
                    "kind": node.kind,
                    "status": PENDING,
                }
                for node in definition.nodes.values()
            },
            "created_at": now,
            "updated_at": now,
        }
        await self._records.write_new(doc)
        task = self._driver.start(doc, definition)
        if request.get("wait"):
            timeout = float(request.get("timeout_seconds") or 600)
            await task.wait(timeout)
        return {"run": run_record(self._records.read_doc(call, run_id))}

    # --- reading, cancelling, answering ---------------------------------------------------------

    async def status(self, call: CallInfo, run_id: str) -> dict[str, Any]:
        return {"run": run_record(self._records.read_doc(call, run_id))}

    async def runs(self, call: CallInfo, filters: Mapping[str, Any]) -> dict[str, Any]:
        """Runs, newest first; a managed session sees those it may act on."""
        cursor = filters.get("cursor")
        before = decode_cursor(call.tool_id, RUN_CURSOR, cursor) if cursor else None
        limit = int(filters.get("limit", DEFAULT_RUNS))
        statuses = [filters["status"]] if filters.get("status") else None
        scan = limit + 1 if call.scope.session_id is None else 10_000
        with self._store.read() as reader:
            rows = reader.loop_runs(LoopRunQuery(filters.get("loop_id"), statuses, before, scan))
        visible = [row for row in rows if self._may_see(call, row.doc)]
        result: dict[str, Any] = {
            "runs": [
                run_record(superseded.translate_run(row.doc, self._tools))
                for row in visible[:limit]
            ]
        }
        if len(visible) > limit:
            result["next_cursor"] = encode_cursor(RUN_CURSOR, visible[limit - 1].seq)
        return result

    def _may_see(self, call: CallInfo, doc: Mapping[str, Any]) -> bool:
        try:
            self._records.check_access(call, doc)
        except ToolDenied:
            return False
        return True

    async def cancel(self, call: CallInfo, run_id: str) -> dict[str, Any]:
        row = self._records.load(call, run_id)
        if row.status in ENDED:
            raise ToolConflict(
                call.tool_id,
                f'loop run "{run_id}" has ended ({row.status}); there is nothing to cancel',
                reason=Reason.LOOP_RUN_ENDED,
            )
        if not await self._driver.cancel(run_id):  # a run no process drives (a gate waits)
            doc = dict(row.doc)
            self._records.versions[run_id] = row.version
            await self._driver.cancelled(doc)
        return await self.status(call, run_id)

    async def approve(self, call: CallInfo, request: Mapping[str, Any]) -> dict[str, Any]:
        run_id = request["run_id"]
        row = self._records.load(call, run_id)
        doc = superseded.translate_run(dict(row.doc), self._tools)
        waiting = [nid for nid, s in doc["nodes"].items() if s["status"] == WAITING]
        node_id = request.get("node_id") or (waiting[0] if len(waiting) == 1 else None)
        if row.status != WAITING or node_id not in waiting:
            raise ToolConflict(
                call.tool_id,
                f'loop run "{run_id}" is {row.status}, not waiting at '
                f"{'gate ' + repr(node_id) if node_id else 'a gate'}"
                + (f" (waiting: {', '.join(waiting)})" if waiting else ""),
                reason=Reason.LOOP_RUN_NOT_WAITING,
            )
        state = doc["nodes"][node_id]
        decision = request["decision"]
        given = {a["criterion_id"]: a for a in request.get("answers") or []}
        criteria = state.get("gate", {}).get("criteria", [])
        for criterion_id in given:
            if criterion_id not in {c["id"] for c in criteria}:
                raise ToolInvalidInput.for_field(
                    call.tool_id,
                    "answers",
                    f'names criterion "{criterion_id}", which gate "{node_id}" does not have',
                )
        answers = [
            {
                "criterion_id": c["id"],
                "prompt": c["prompt"],
                "passed": bool(given.get(c["id"], {}).get("passed", decision == "approve")),
                **({"note": given[c["id"]]["note"]} if "note" in given.get(c["id"], {}) else {}),
            }
            for c in criteria
        ]
        who = "operator" if call.scope.session_id is None else f"session:{call.scope.session_id}"
        output: dict[str, Any] = {"decision": decision, "answered_by": who, "answers": answers}
        if request.get("note"):
            output["note"] = request["note"]
        now = self.now()
        state.update(status=SUCCEEDED if decision == "approve" else FAILED, ended_at=now)
        state["output"] = output
        state["gate"] = {**state.get("gate", {}), "decision": decision, "answered_by": who}
        self._records.versions[run_id] = row.version
        if decision != "approve":
            error = failure(
                "loop_node_failed",
                str(Reason.GATE_REJECTED),
                f'gate "{node_id}" was rejected by the {who.split(":", maxsplit=1)[0]}',
            )
            state["error"] = error
            doc.update(status=FAILED, ended_at=now, owner=None, error={**error, "node_id": node_id})
            doc["updated_at"] = now
            await self._records.save(doc, answer_of=call)
            return await self.status(call, run_id)
        doc.update(status=RUNNING, owner=self.owner, updated_at=now)
        await self._records.save(doc, answer_of=call)
        definition = await self.definitions.definition_of(
            self.definitions.row(call, row.loop_id, row.loop_version)
        )
        task = self._driver.start(doc, definition)
        if request.get("wait"):
            await task.wait(float(request.get("timeout_seconds") or 600))
        return await self.status(call, run_id)

    # --- restart and shutdown (:mod:`._driving`) ------------------------------------------------

    async def recover(self) -> dict[str, list[str]]:
        """Resume or mark interrupted every run a process that is gone left running."""
        return await self._driver.recover()

    async def shutdown(self) -> None:
        """Stop driving runs (this process ends): each stays as saved, for recovery."""
        await self._driver.shutdown()

    async def settle(self, run_id: str, timeout: float) -> None:
        """Wait (at most ``timeout``) for this process's driving of a run to stop."""
        await self._driver.settle(run_id, timeout)
