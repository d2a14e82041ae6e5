"""The agent runtime: one ACP agent process per bound session, owned by this process.

It is the sessions' :class:`~compozy_mcp.sessions.runtime.RuntimeDriver` (start, release,
reconcile) and what the turn tools call (prompt, cancel, wait, approve, history, events), made
of three parts: process supervision (:mod:`._processes`), turn running (:mod:`._turns`) and
the event log (:mod:`._event_log`); what runs beside a call is a job of the app's task group
(:mod:`compozy_mcp.background`).

- **Binds** start the agent under ``COMPOZY_AGENT_START_TIMEOUT_SECONDS``; a command that
  cannot start, an agent that exits or never answers ``initialize`` is a
  :class:`~compozy_mcp.sessions.runtime.BindFailed` quoting the tail of its stderr.
- **Turns** of a session run one at a time, in order, by a runner task per agent: a prompt is
  queued in the store first (so it is never lost), the runner takes it, streams the agent's
  updates into the turn and the event log (written in batches, off the loop), and stores the
  outcome. A new ACP session whose context must hold earlier turns (after a rewind, a clear or
  a lost process) gets them as a first text block of its first prompt.
- **Permission requests** become pending interactions of kind ``permission``; one unanswered
  for ``COMPOZY_PERMISSION_TIMEOUT_SECONDS`` is rejected and recorded.
- **Processes** end with their session's runtime: unbind, stop (with its cascade), archive,
  delete, a TTL expiry (:meth:`AgentRuntime.reconcile`), and :meth:`AgentRuntime.shutdown`
  when this process exits. An agent that exits on its own fails its runtime
  (``runtime.failure``, ``stop_cause: failure``); everything persisted so far stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from compozy_mcp.agents.definitions import AgentCatalog
from compozy_mcp.background import TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.config import Settings
from compozy_mcp.errors import ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.runtime._event_log import EventLog
from compozy_mcp.runtime._live import BACKGROUND, LiveAgent, StartAbandoned
from compozy_mcp.runtime._processes import AgentProcesses
from compozy_mcp.runtime._turns import TurnRunner
from compozy_mcp.runtime.process import Launcher, SubprocessLauncher
from compozy_mcp.sessions.model import Interaction
from compozy_mcp.sessions.runtime import Binding, BindTicket

if TYPE_CHECKING:
    from compozy_mcp.runtime._placement import Placement
    from compozy_mcp.sessions.service import Sessions


class AgentRuntime:
    """The agents of this process and their turns: process supervision
    (:class:`~._processes.AgentProcesses`), turn running (:class:`~._turns.TurnRunner`), the
    event log (:class:`~._event_log.EventLog`), and what the turn tools call."""

    def __init__(
        self,
        sessions: Sessions,
        settings: Settings,
        offload: Offload,
        tasks: TaskOwner,
        launcher: Launcher | None = None,
    ) -> None:
        self._sessions = sessions
        self._offload = offload
        self._tasks = tasks
        #: what the agents report, buffered, stored and published to followers
        self.log = EventLog(sessions, offload, tasks)
        launcher = launcher or SubprocessLauncher(settings.home / "run", settings.home / "agents")
        #: the running agents by session, read by both halves
        self._live: dict[str, LiveAgent] = {}
        self._turns = TurnRunner(sessions, settings, offload, self.log, self._live)
        self._processes = AgentProcesses(
            sessions, settings, offload, tasks, launcher, self.log, self._turns, self._live
        )
        self._turns.ends = self._processes
        #: sessions a prompt of this process is binding right now
        self._binding: set[str] = set()
        #: sessions woken while their bind was under way (its claim is tried once more)
        self._woken_in_bind: set[str] = set()

    @property
    def placement(self) -> Placement | None:
        """Several daemons on one store: who runs which agent (``None``: this process alone)."""
        return self._processes.placement

    @placement.setter
    def placement(self, placement: Placement | None) -> None:
        self._processes.placement = placement

    # --- the agents (process supervision) --------------------------------------------------

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        return self._processes.agents(workspace_path)

    def live_sessions(self) -> list[str]:
        return self._processes.live_sessions()

    def pids(self) -> list[int]:
        return self._processes.pids()

    def reap_orphans(self) -> list[int]:
        """End the agent process groups a process of this home started and could not end."""
        return self._processes.reap_orphans()

    # --- the RuntimeDriver of the sessions ---------------------------------------------------

    async def start(self, ticket: BindTicket) -> Binding:
        return await self._processes.start(ticket)

    async def bound(self, session_id: str) -> None:
        await self._processes.bound(session_id)

    async def release(self, session_id: str, generation: int | None = None) -> None:
        await self._processes.release(session_id, generation)

    async def reconcile(self) -> None:
        await self._processes.reconcile()

    async def shutdown(self) -> None:
        """End every agent (this process is exiting); their sessions are unbound. Starts
        under way are given up first (their binds are shielded from cancellation)."""
        await self._processes.abandon_starts()
        for job in self._tasks.jobs(BACKGROUND):
            job.cancel()
            await job.wait()
        ids = await self._processes.close_all()
        await self.log.close()
        if ids:
            await self._offload(self._sessions.turns.release_all, ids, "runtime_shutdown")

    # --- turns (what the tools call) ---------------------------------------------------------

    async def wait_turn(
        self, call: CallInfo, session_id: str, turn_id: str, timeout: float
    ) -> dict[str, Any]:
        """The turn's record once it ended, or as it is when ``timeout`` passes."""
        return await self._turns.wait_turn(call, session_id, turn_id, timeout)

    async def turn(self, call: CallInfo, session_id: str, turn_id: str) -> dict[str, Any]:
        return await self._turns.turn(call, session_id, turn_id)

    async def cancel_live(self, session_id: str) -> str | None:
        """Cancel the turn this process's agent of the session runs; its id, or ``None``."""
        return await self._turns.cancel_live(session_id)

    def answer_live(self, session_id: str, interaction_id: str, decision: str) -> bool:
        """Answer a permission request of this process's agent; ``False`` when none such."""
        return self._turns.answer_live(session_id, interaction_id, decision)

    def placed_sessions(self) -> set[str]:
        """Sessions whose agent runs here, or is being started here (by a prompt, or by a
        bind of another kind: a new selection)."""
        return set(self._live) | self._binding | self._processes.starting

    async def prompt(self, call: CallInfo, session_id: str, text: str, *, wait: bool) -> str:
        """Queue a prompt as the session's next turn and see that an agent takes it; returns
        the turn id. Without ``wait`` it returns once the turn is queued: the agent is
        started in the background (a start that fails fails the turn)."""
        sessions = self._sessions
        _, turn = await self._offload(sessions.turns.enqueue, call, session_id, text, wait)
        turn_id = turn.turn_id or ""
        self._turns.expect(turn_id)
        if wait:
            await self.ensure_running(call, session_id)
        else:
            start = functools.partial(self.ensure_running, call, session_id)
            self._in_background(start, f"start-{session_id}")
        return turn_id

    async def settled(self) -> None:
        """Return once the work started in the background so far (the starts of prompts
        sent without ``wait``) has finished: what a caller needs before it reads a record
        it wants the same from run to run."""
        while jobs := self._tasks.jobs(BACKGROUND):
            for job in jobs:
                await job.wait()

    def _in_background(self, work: Callable[[], Awaitable[None]], name: str) -> None:
        self._tasks.start(work, BACKGROUND + name)

    def in_background(self, work: Callable[[], Awaitable[None]], name: str) -> None:
        """Run ``work`` beside the caller; :meth:`shutdown` ends it (:meth:`settled` awaits
        it)."""
        self._in_background(work, name)

    async def ensure_running(self, call: CallInfo, session_id: str) -> None:
        """Wake the session's agent, binding one first when none runs here; an agent that
        cannot start fails the session's open turns at once (nobody waits on a dead start)."""
        live = self._live.get(session_id)
        if live is not None and not live.closing:
            live.wake.set()
            return
        if session_id in self._binding:
            # the bind under way wakes the agent once it is recorded; were its claim refused,
            # it is tried again (the lease may have come here meanwhile: a take-over)
            self._woken_in_bind.add(session_id)
            return
        self._binding.add(session_id)  # before the claim: a second prompt now waits for it
        placed = False
        try:
            if not await self._claim_placement(session_id):
                return  # another daemon runs its agent: it takes the queued turn from the store
            placed = True
            # nothing of this process binds the session: a "binding" status is a leftover
            begin = self._sessions.binding.begin
            record, ticket = await self._offload(begin, call, session_id, True)
            if ticket is not None:
                try:
                    record = await self._sessions.bind(call, ticket, record)
                except StartAbandoned:
                    return  # this process stops: the next one starts the agent
                failure = record["runtime"].get("failure")
                if record["runtime"]["status"] == "failed" and failure is not None:
                    await self._turns.fail_open_turns(
                        session_id, failure["kind"], failure["summary"]
                    )
        finally:
            self._binding.discard(session_id)
            self._woken_in_bind.discard(session_id)
            if placed:
                await self._processes.placed_elsewhere(session_id)

    async def _claim_placement(self, session_id: str) -> bool:
        """Whether the session's agent is to run here: always, alone; on a cluster, once this
        daemon holds its lease. A refused claim is tried again while wakes came during it."""
        if self.placement is None:
            return True
        while True:
            self._woken_in_bind.discard(session_id)
            if await self.placement.claim(session_id):
                return True
            if session_id not in self._woken_in_bind:
                return False

    async def cancel(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        """Cancel the running turn (ACP ``session/cancel``) and every queued one."""
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            sessions.ledger.load(reader, call, session_id, read_only=True)
        # the queue first: an agent told to stop its turn would otherwise take the next queued
        # one before the queue is cancelled
        queued = await self._offload(
            functools.partial(sessions.turns.cancel_queued, queued_only=True),
            session_id,
            "cancelled",
        )
        running = await self.cancel_live(session_id)
        elsewhere = None
        if running is None and self.placement is not None:
            with sessions.ledger.store.read() as reader:
                turns = reader.transcript(session_id)
            elsewhere = next((t.turn_id for t in turns if t.status == "running"), None)
        queued += await self._offload(sessions.turns.cancel_queued, session_id, "cancelled")
        # the turn may run on another daemon: told once its queue is cancelled (so that it
        # takes no queued turn after the one it stops), through the store
        placement = self.placement
        if elsewhere is not None and placement is not None:
            running = elsewhere if await placement.forward(session_id, "cancel", {}) else None
        return {"session_id": session_id, "running_turn_id": running, "queued_cancelled": queued}

    def wake(self, session_ids: set[str]) -> None:
        """Queued turns of these sessions were stored by another process: their agents here
        look at the queue."""
        for session_id in session_ids:
            live = self._live.get(session_id)
            if live is not None and not live.closing:
                live.wake.set()

    def stored_elsewhere(self, session_ids: set[str]) -> None:
        """Events of these sessions were stored by another process: their followers here (and
        the board) read them."""
        self.log.stored_elsewhere(session_ids)

    async def approve(
        self, call: CallInfo, session_id: str, interaction_id: str, decision: str
    ) -> Interaction:
        """Answer a permission request with one of the options the agent offered."""
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            _, state = sessions.ledger.load(reader, call, session_id, read_only=True)
        stored = next(
            (i for i in state.pending_interactions if i.interaction_id == interaction_id), None
        )
        live = self._live.get(session_id)
        pending = live.pending.get(interaction_id) if live is not None else None
        if stored is None and pending is None:
            raise ToolConflict(
                call.tool_id,
                f'session "{session_id}" has no pending interaction "{interaction_id}"',
                reason=Reason.INTERACTION_NOT_FOUND,
            )
        interaction = pending.interaction if pending is not None else stored
        assert interaction is not None
        offered = interaction.choices or []
        if decision not in offered:
            raise ToolConflict(
                call.tool_id,
                f'decision "{decision}" is not one the agent offered '
                f"(offered: {', '.join(offered)})",
                reason=Reason.DECISION_NOT_OFFERED,
            )
        if pending is None and self.placement is not None:
            forwarded = {"interaction_id": interaction_id, "decision": decision}
            if await self.placement.forward(session_id, "permission_answer", forwarded):
                return interaction  # its agent runs on another daemon: answered there
        if pending is None or pending.answer.done():
            # its agent is gone (another process ran it, or it ended): the question is moot
            await self._offload(
                sessions.turns.resolve_interaction,
                session_id,
                interaction_id,
                "expired",
                f"{interaction.title}: answered after its agent ended",
            )
            raise ToolConflict(
                call.tool_id,
                f'interaction "{interaction_id}" belongs to an agent that no longer runs; '
                "nothing was answered",
                reason=Reason.RUNTIME_NOT_READY,
            )
        pending.answer.set_result(decision)
        return interaction

    def latest_turn_id(self, call: CallInfo, session_id: str) -> str | None:
        """The id of the session's last turn, ``None`` before its first prompt."""
        ledger = self._sessions.ledger
        with ledger.store.read() as reader:
            _, state = ledger.load(reader, call, session_id, read_only=True)
            last = reader.transcript(session_id, after_turn=state.transcript_turns - 1, limit=1)
        return last[0].turn_id if last else None

    def history(
        self, call: CallInfo, session_id: str, after_turn: int, limit: int
    ) -> dict[str, Any]:
        return self.log.history(call, session_id, after_turn, limit)

    def events(self, call: CallInfo, session_id: str, after_seq: int, limit: int) -> dict[str, Any]:
        return self.log.events(call, session_id, after_seq, limit)

    def follow(self, session_id: str) -> AsyncIterator[dict[str, Any]]:
        return self.log.follow(session_id)

    def stored_events(
        self, session_id: str
    ) -> contextlib.AbstractAsyncContextManager[asyncio.Event]:
        return self.log.stored_events(session_id)

    def any_event(self) -> contextlib.AbstractContextManager[asyncio.Event]:
        return self.log.any_event()
