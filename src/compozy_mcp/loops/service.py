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

import contextlib
import logging
import os
import secrets
from collections.abc import Mapping
from typing import Any, Protocol

import anyio

from compozy_mcp.background import Job, TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import (
    CompozyError,
    LoopInvalid,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
)
from compozy_mcp.loops import _contracts as contracts
from compozy_mcp.loops import _ownership as ownership
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.loops._definitions import LoopDefinitions
from compozy_mcp.loops._kinds import input_schema
from compozy_mcp.loops._lint import errors
from compozy_mcp.loops._model import ERROR, WARNING, Definition
from compozy_mcp.loops._records import run_record
from compozy_mcp.loops._run_records import RunRecords
from compozy_mcp.loops._runner import (
    CANCELLED,
    ENDED,
    FAILED,
    INTERRUPTED,
    PENDING,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    WAITING,
    Runner,
    RunStopped,
    ToolCaller,
    failure,
    safe_to_repeat,
    shielded,
)
from compozy_mcp.loops.limits import LoopLimits
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import Store
from compozy_mcp.store.loops import OVERSIZED, LoopRunQuery, LoopRunRow
from compozy_mcp.validation import compile_validator, describe

log = logging.getLogger(__name__)

RUN_CURSOR = "l"
DEFAULT_RUNS = 50
FORMAT = superseded.VIEWS_FORMAT


def _pid_alive(owner: str | None) -> bool:
    if not owner:
        return False
    try:
        pid = int(owner.split(":", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunPlacement(Protocol):
    """Several daemons on one store (:mod:`compozy_mcp.cluster`): a run is advanced by the
    daemon that holds its lease, one at a time."""

    async def claim_run(self, run_id: str) -> bool:
        """Take the run's lease unless another live daemon holds it."""

    async def hold_run(self, run_id: str) -> None:
        """This daemon drives the run from now on (a start or a gate's answer here)."""

    async def release_run(self, run_id: str) -> None: ...


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
        self._caller: ToolCaller | None = None
        self.owner = f"{os.getpid()}:{secrets.token_hex(4)}"
        self._owner = tasks
        #: the runs this process drives now, each a task of the app's group
        self._tasks: dict[str, Job] = {}
        self.definitions = LoopDefinitions(store, tools, sessions, self.now, offload, self._limits)
        self._records = RunRecords(store, tools, sessions, offload)
        self._cancelling: set[str] = set()
        #: several daemons on one store: who drives which run (``None``: this process alone)
        self.placement: RunPlacement | None = None

    def driven_runs(self) -> list[str]:
        """The runs this process drives now."""
        return sorted(self._tasks)

    def attach(self, caller: ToolCaller) -> None:
        """The dispatch path tool nodes call through (built after the services)."""
        self._caller = caller

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
        task = self._start(doc, definition)
        if request.get("wait"):
            timeout = float(request.get("timeout_seconds") or 600)
            await task.wait(timeout)
        return {"run": run_record(self._records.read_doc(call, run_id))}

    def _start(self, doc: dict[str, Any], definition: Definition) -> Job:
        if self._caller is None:
            raise RuntimeError("the Loop service has no dispatch path attached")
        run_id = doc["run_id"]
        doc["owner"] = self.owner
        runner = Runner(
            definition,
            doc,
            tools=self._tools,
            caller=self._caller,
            save=self._records.save,
            clock=self._clock,
            limits=self._limits,
        )
        task = self._owner.start(lambda: self._drive(runner), f"loop-run-{run_id}")
        self._tasks[run_id] = task
        return task

    async def _drive(self, runner: Runner) -> None:
        run_id = runner.doc["run_id"]
        try:
            await self._drive_placed(runner)
        finally:
            if (job := self._tasks.get(run_id)) is not None and job.is_current():
                del self._tasks[run_id]

    async def _drive_placed(self, runner: Runner) -> None:
        run_id = runner.doc["run_id"]
        if self.placement is None:
            await self._advance(runner)
            return
        await self.placement.hold_run(run_id)
        try:
            await self._advance(runner)
        finally:
            with contextlib.suppress(Exception):  # an unreachable store: the lease expires
                await shielded(self.placement.release_run(run_id))

    async def _advance(self, runner: Runner) -> None:
        run_id = runner.doc["run_id"]
        try:
            await runner.run()
        except RunStopped:
            return
        except anyio.get_cancelled_exc_class():
            if run_id in self._cancelling:
                self._cancelling.discard(run_id)
                await shielded(self._cancelled(runner.doc))
            else:
                # this process is going away: the run stays where it is, for recovery
                runner.doc["owner"] = None
                await shielded(self._records.save(runner.doc))
            raise
        except Exception as exc:
            log.exception("loop run %s failed unexpectedly", run_id)
            runner.doc["status"] = FAILED
            runner.doc["owner"] = None
            runner.doc["error"] = failure(
                "loop_run_failed", str(Reason.HANDLER_FAILED), f"the run failed: {exc}"
            )
            await shielded(self._records.save(runner.doc))

    async def _cancelled(self, doc: dict[str, Any]) -> None:
        now = self.now()
        for state in doc["nodes"].values():
            if state["status"] in (RUNNING, WAITING):
                state["status"] = CANCELLED
                state["ended_at"] = now
        doc.update(
            status=CANCELLED,
            owner=None,
            ended_at=now,
            error=failure("loop_run_cancelled", str(Reason.RUN_CANCELLED), "the run was cancelled"),
        )
        await self._records.save(doc)

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
        task = self._tasks.get(run_id)
        if task is not None:
            self._cancelling.add(run_id)
            task.cancel()
            await task.wait()
        else:
            doc = dict(row.doc)
            self._records.versions[run_id] = row.version
            await self._cancelled(doc)
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
        task = self._start(doc, definition)
        if request.get("wait"):
            await task.wait(float(request.get("timeout_seconds") or 600))
        return await self.status(call, run_id)

    # --- restart and shutdown -------------------------------------------------------------------

    async def recover(self) -> dict[str, list[str]]:
        """Resume or mark interrupted every run a process that is gone left running."""
        with self._store.read() as reader:
            rows = reader.loop_runs(LoopRunQuery(statuses=[RUNNING, QUEUED], limit=10_000))
        resumed: list[str] = []
        interrupted: list[str] = []
        failed: list[str] = []
        for row in rows:
            if row.id in self._tasks or not await self._resumable(row):
                continue
            if OVERSIZED in row.doc:
                await self._offload(self._end_unreadable, row)
                failed.append(row.id)
                continue
            doc = superseded.translate_run(dict(row.doc), self._tools)
            self._records.versions[row.id] = row.version
            try:
                definition = await self.definitions.definition_of(
                    self.definitions.row(
                        CallInfo("compozy__loop_run"), row.loop_id, row.loop_version
                    )
                )
            except CompozyError as exc:  # its Loop cannot be read within today's limits
                log.warning("loop run %s cannot resume: %s", row.id, exc)
                await self._fail_unresumable(doc, exc)
                failed.append(row.id)
                continue
            cut = [nid for nid, s in doc["nodes"].items() if s["status"] == RUNNING]
            if all(safe_to_repeat(definition.nodes[nid], self._tools) for nid in cut):
                for nid in cut:
                    doc["nodes"][nid].update(status=PENDING, items=[])
                doc["recovered_at"] = self.now()
                self._start(doc, definition)
                resumed.append(row.id)
                continue
            now = self.now()
            for nid in cut:
                doc["nodes"][nid].update(
                    status=INTERRUPTED,
                    ended_at=now,
                    error=failure(
                        "loop_node_interrupted",
                        str(Reason.RUN_INTERRUPTED),
                        f'node "{nid}" was cut off when the process running it ended; it may '
                        "have acted, so it is not repeated",
                    ),
                )
            doc.update(
                status=INTERRUPTED,
                owner=None,
                ended_at=now,
                updated_at=now,
                error=failure(
                    "loop_run_interrupted",
                    str(Reason.RUN_INTERRUPTED),
                    f"the process running this run ended during node(s) {', '.join(cut)}",
                ),
            )
            try:
                await self._records.save(doc)
            except RunStopped:
                continue
            interrupted.append(row.id)
        if self.placement is not None:  # the leases of the runs it ended, not resumed, go
            for run_id in (*interrupted, *failed):
                await self.placement.release_run(run_id)
        return {"resumed": resumed, "interrupted": interrupted, "failed": failed}

    async def _resumable(self, row: LoopRunRow) -> bool:
        """Whether no one drives the run any more: with several daemons, the run's lease is
        free or expired (and now this daemon's); alone, the process that drove it is gone."""
        if self.placement is not None:
            return await self.placement.claim_run(row.id)
        return row.owner == self.owner or not _pid_alive(row.owner)

    def _end_unreadable(self, row: LoopRunRow) -> None:
        """A run whose record is too large to load ends ``failed``, its record left as is."""
        log.warning("loop run %s: %s", row.id, row.doc["error"]["message"])
        with self._store.write() as writer:
            writer.set_loop_run_status(row.id, FAILED, self.now())

    async def _fail_unresumable(self, doc: dict[str, Any], exc: CompozyError) -> None:
        now = self.now()
        doc.update(
            status=FAILED,
            owner=None,
            ended_at=now,
            updated_at=now,
            error={**exc.payload(redact=False), "message": f"the run cannot resume: {exc}"},
        )
        with contextlib.suppress(RunStopped):
            await self._records.save(doc)

    async def shutdown(self) -> None:
        """Stop driving runs (this process ends): each stays as saved, for recovery."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            await task.wait()

    async def settle(self, run_id: str, timeout: float) -> None:
        """Wait (at most ``timeout``) for this process's driving of a run to stop."""
        task = self._tasks.get(run_id)
        if task is not None:
            await task.wait(timeout)
