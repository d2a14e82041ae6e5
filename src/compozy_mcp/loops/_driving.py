"""Driving Loop runs in this process: each run a job of the app's task group that advances its
:class:`~._runner.Runner` and saves it as it moves, under the run's lease when several daemons
share the store; a cancel stops the job and records the run ``cancelled``; at shutdown each run
stays as saved, and at start-up the runs a process that is gone left are resumed or marked
``interrupted`` (:meth:`RunDriver.recover`)."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from compozy_mcp.background import Job, TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock
from compozy_mcp.errors import CompozyError
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.loops._definitions import LoopDefinitions
from compozy_mcp.loops._model import Definition
from compozy_mcp.loops._run_records import RunRecords
from compozy_mcp.loops._runner import (
    CANCELLED,
    FAILED,
    INTERRUPTED,
    PENDING,
    QUEUED,
    RUNNING,
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
from compozy_mcp.store.base import Store
from compozy_mcp.store.loops import OVERSIZED, LoopRunQuery, LoopRunRow

log = logging.getLogger(__name__)


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


class RunDriver:
    """The runs this process drives, each a job of the app's task group."""

    def __init__(
        self,
        store: Store,
        tools: ToolRegistry,
        clock: Clock,
        offload: Offload,
        group: TaskOwner,
        records: RunRecords,
        definitions: LoopDefinitions,
        limits: LoopLimits,
        now: Callable[[], str],
    ) -> None:
        self._store = store
        self._tools = tools
        self._clock = clock
        self._offload = offload
        self._group = group
        self._records = records
        self.definitions = definitions
        self._limits = limits
        self.now = now
        #: this process, as the ``owner`` a run it drives records
        self.owner = f"{os.getpid()}:{secrets.token_hex(4)}"
        self._caller: ToolCaller | None = None
        #: the runs this process drives now
        self._jobs: dict[str, Job] = {}
        self._cancelling: set[str] = set()
        #: several daemons on one store: who drives which run (``None``: this process alone)
        self.placement: RunPlacement | None = None

    def driven_runs(self) -> list[str]:
        """The runs this process drives now."""
        return sorted(self._jobs)

    def attach(self, caller: ToolCaller) -> None:
        """The dispatch path tool nodes call through (built after the services)."""
        self._caller = caller

    async def cancel(self, run_id: str) -> bool:
        """Stop driving the run, recorded ``cancelled``; ``False`` when this process does not
        drive it."""
        job = self._jobs.get(run_id)
        if job is None:
            return False
        self._cancelling.add(run_id)
        job.cancel()
        await job.wait()
        return True

    def start(self, doc: dict[str, Any], definition: Definition) -> Job:
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
        task = self._group.start(lambda: self._drive(runner), f"loop-run-{run_id}")
        self._jobs[run_id] = task
        return task

    async def _drive(self, runner: Runner) -> None:
        run_id = runner.doc["run_id"]
        try:
            await self._drive_placed(runner)
        finally:
            if (job := self._jobs.get(run_id)) is not None and job.is_current():
                del self._jobs[run_id]

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
                await shielded(self.cancelled(runner.doc))
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

    async def cancelled(self, doc: dict[str, Any]) -> None:
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

    async def recover(self) -> dict[str, list[str]]:
        """Resume or mark interrupted every run a process that is gone left running."""
        with self._store.read() as reader:
            rows = reader.loop_runs(LoopRunQuery(statuses=[RUNNING, QUEUED], limit=10_000))
        resumed: list[str] = []
        interrupted: list[str] = []
        failed: list[str] = []
        for row in rows:
            if row.id in self._jobs or not await self._resumable(row):
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
                self.start(doc, definition)
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
        tasks = list(self._jobs.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            await task.wait()

    async def settle(self, run_id: str, timeout: float) -> None:
        """Wait (at most ``timeout``) for this process's driving of a run to stop."""
        task = self._jobs.get(run_id)
        if task is not None:
            await task.wait(timeout)
