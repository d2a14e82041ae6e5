"""The agent runtime: one ACP agent process per bound session, owned by this process.

It is the sessions' :class:`~compozy_mcp.sessions.runtime.RuntimeDriver` (start, release,
reconcile) and what the turn tools call (prompt, cancel, wait, approve, history, events).

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
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from compozy_mcp.agents.definitions import AgentCatalog, AgentDefinition, CatalogCache
from compozy_mcp.background import Job, TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import timestamp
from compozy_mcp.config import Settings
from compozy_mcp.errors import LimitExceeded, ResourceNotFound, ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.runtime import _orphans as orphans
from compozy_mcp.runtime._event_log import EventLog
from compozy_mcp.runtime._hints import hint
from compozy_mcp.runtime._turn import TurnRecorder
from compozy_mcp.runtime.process import Launcher, ProcessTransport, SubprocessLauncher
from compozy_mcp.sessions.model import AcpCaps, AvailableCommand, Interaction
from compozy_mcp.sessions.runtime import (
    BindFailed,
    Binding,
    BindTicket,
    check_selection,
    effective_selection,
)
from compozy_mcp.sessions.turn_record import TERMINAL, turn_record
from compozy_mcp.store.base import SessionEventRow, TranscriptTurn

if TYPE_CHECKING:
    from compozy_mcp.runtime._connection import AgentConnection
    from compozy_mcp.runtime._placement import Placement
    from compozy_mcp.runtime.process import AgentTransport
    from compozy_mcp.sessions.service import Sessions

#: seconds a closing agent gets for ``close_session``
CLOSE_SESSION_SECONDS = 2.0
#: the name prefix of the runtime's background tasks (starts for prompts that did not wait)
BACKGROUND = "runtime-background-"


@dataclass(eq=False)
class _Pending:
    interaction: Interaction
    answer: asyncio.Future[str | None]


@dataclass(eq=False)
class LiveAgent:
    """One running agent and the session it serves."""

    session_id: str
    generation: int
    agent: AgentDefinition
    transport: AgentTransport
    connection: AgentConnection
    #: earlier turns a fresh ACP session must be told about with its first prompt
    context: tuple[str, ...]
    caps: AcpCaps
    commands: tuple[AvailableCommand, ...] = ()
    #: set when it wrote a line past the frame limit
    failure: LimitExceeded | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    current: TurnRecorder | None = None
    pending: dict[str, _Pending] = field(default_factory=dict)
    #: its turn runner and the watch on its exit
    tasks: list[Job] = field(default_factory=list)
    closing: bool = False
    bound: bool = False


class AgentRuntime:
    def __init__(
        self,
        sessions: Sessions,
        settings: Settings,
        offload: Offload,
        tasks: TaskOwner,
        launcher: Launcher | None = None,
    ) -> None:
        self._sessions = sessions
        self._tasks = tasks
        self._settings = settings
        self._offload = offload
        self._launcher = launcher or SubprocessLauncher(
            settings.home / "run", settings.home / "agents"
        )
        self._reaped = False
        self._catalogs = CatalogCache(settings.home)
        self._live: dict[str, LiveAgent] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: sessions a prompt of this process is binding right now
        self._binding: set[str] = set()
        #: sessions woken while their bind was under way (its claim is tried once more)
        self._woken_in_bind: set[str] = set()
        self._turn_done: dict[str, asyncio.Event] = {}
        #: what the agents report, buffered, stored and published to followers
        self.log = EventLog(sessions, offload, tasks)
        #: several daemons on one store: who runs which agent (``None``: this process alone)
        self.placement: Placement | None = None

    # --- definitions ---------------------------------------------------------------------

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        return self._catalogs.get(workspace_path)

    def live_sessions(self) -> list[str]:
        return sorted(self._live)

    def placed_sessions(self) -> set[str]:
        """Sessions whose agent runs here, or is being started here."""
        return set(self._live) | self._binding

    def pids(self) -> list[int]:
        return [pid for live in self._live.values() if (pid := live.transport.pid) is not None]

    def reap_orphans(self) -> list[int]:
        """End the agent process groups a process of this home started and could not end (it
        was killed); once per runtime, before its first agent starts, and at daemon start."""
        self._reaped = True
        return orphans.reap(self._settings.home / "run")

    # --- binding (the RuntimeDriver) -------------------------------------------------------

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    async def start(self, ticket: BindTicket) -> Binding:
        async with self._lock(ticket.session_id):
            catalog = self.agents(ticket.cwd)
            try:
                agent = check_selection(ticket.selection, catalog)
            except Exception as exc:
                raise BindFailed("selection_rejected", str(exc)) from None
            effective = effective_selection(ticket.selection, agent)
            live = self._live.get(ticket.session_id)
            if (
                ticket.reuse_live
                and live is not None
                and live.agent.name == agent.name
                and live.transport.exited() is None
            ):
                await self._reconfigure(live, effective)
                return Binding(
                    effective=effective,
                    acp_session_id=live.connection.acp_session_id,
                    acp_caps=live.caps,
                    available_commands=live.commands,
                    new_process=False,
                )
            if live is not None:
                await self._close(live)
            if self.placement is not None:
                await self.placement.bound(ticket.session_id)
            return await self._launch(ticket, agent, effective)

    async def _reconfigure(self, live: LiveAgent, effective: Any) -> None:
        try:
            await asyncio.wait_for(
                live.connection.configure(effective),
                timeout=self._settings.agent_start_timeout_seconds,
            )
        except BindFailed:
            raise
        except Exception as exc:
            raise BindFailed("configure_failed", f"the agent refused the selection: {exc}") from exc

    async def _launch(self, ticket: BindTicket, agent: AgentDefinition, effective: Any) -> Binding:
        from compozy_mcp.runtime._connection import AgentConnection

        command = " ".join([agent.command, *agent.args])
        if not self._reaped:  # what a killed process of this home left running goes first
            await self._offload(self.reap_orphans)
        try:
            transport = await self._launcher.launch(agent, ticket.cwd, {}, self._tasks)
        except Exception as exc:  # no such command, not executable, no more processes...
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise BindFailed(
                "agent_start_failed", f'agent "{agent.name}": cannot start "{command}": {reason}'
            ) from None
        if isinstance(transport, ProcessTransport):
            transport.session_id = ticket.session_id  # its stderr lines: this session's log
        live = LiveAgent(
            session_id=ticket.session_id,
            generation=ticket.generation + 1,
            agent=agent,
            transport=transport,
            connection=None,  # type: ignore[arg-type]  # set below: it needs the listener
            context=(),
            caps=AcpCaps(
                supports_load_session=False,
                prompt_image=False,
                prompt_audio=False,
                prompt_embedded_context=False,
            ),
        )
        listener = _AgentListener(self, live)
        live.connection = AgentConnection(
            listener,
            transport,
            self._settings.agent_max_frame_bytes,
            on_overflow=lambda failure: self._overflowed(live, failure),
        )
        timeout = self._settings.agent_start_timeout_seconds
        try:
            handshake = await asyncio.wait_for(
                self._handshake(live, ticket, effective), timeout=timeout
            )
        except BaseException as exc:
            if isinstance(exc, Exception) and not isinstance(exc, TimeoutError):
                # a closed connection is usually the process ending: let it say how
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(transport.wait()), timeout=1.0)
                status = transport.exited()
                if status is not None:
                    exc = ConnectionError(f"exited with status {status}")
            await self._end_process(live)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise self._start_failure(live, exc, timeout) from None
        live.caps = handshake.caps
        live.context = () if handshake.loaded else ticket.context
        await self._offload(self._announce, agent, handshake.options)
        self._live[ticket.session_id] = live
        sid = ticket.session_id
        live.tasks.append(self._tasks.start(lambda: self._watch(live), f"agent-exit-{sid}"))
        live.tasks.append(self._tasks.start(lambda: self._run_turns(live), f"agent-turns-{sid}"))
        return Binding(
            effective=handshake.effective,
            acp_session_id=handshake.acp_session_id,
            acp_caps=handshake.caps,
            available_commands=live.commands,
            new_process=True,
            permission_mode_degraded=ticket.restricted and not handshake.caps.supported_modes,
        )

    async def _handshake(self, live: LiveAgent, ticket: BindTicket, effective: Any) -> Any:
        from compozy_mcp.runtime._connection import session_mcp_server

        servers = (
            [session_mcp_server(ticket.session_id, str(self._settings.home), live.agent.discovery)]
            if live.agent.compozy_tools
            else []
        )
        # a process that dies during the handshake fails it at once, not at the timeout
        answered: list[Any] = []
        failed: list[Exception] = []
        exited: list[int] = []
        async with anyio.create_task_group() as race:

            async def shake() -> None:
                try:
                    answered.append(await live.connection.handshake(ticket, effective, servers))
                except Exception as exc:  # raised below as itself, not in an exception group
                    failed.append(exc)
                race.cancel_scope.cancel()

            async def watch() -> None:
                exited.append(await live.transport.wait())
                race.cancel_scope.cancel()

            race.start_soon(shake)
            race.start_soon(watch)
        if answered:
            return answered[0]
        if failed:
            raise failed[0]
        await anyio.sleep(0.05)  # let a last stderr line arrive
        raise ConnectionError(f"exited with status {exited[0]}")

    def _start_failure(self, live: LiveAgent, exc: BaseException, timeout: int) -> BindFailed:
        if isinstance(exc, BindFailed):
            return exc
        name = live.agent.name
        if live.failure is not None:
            return BindFailed("frame_too_large", f'agent "{name}" {live.failure.message}')
        if isinstance(exc, TimeoutError):
            kind = "agent_start_timeout"
            summary = f'agent "{name}" did not answer initialize and new_session within {timeout} s'
        else:
            kind = "agent_start_failed"
            summary = f'agent "{name}" failed to start: {str(exc) or type(exc).__name__}'
        said = self._said(live)
        summary += said
        advice = hint(f"{exc}\n{said}")
        if advice is not None:
            summary += f". Fix: {advice}"
        return BindFailed(kind, summary)

    def _said(self, live: LiveAgent) -> str:
        """What the agent wrote that was not ACP: its stderr tail, stray lines on stdout."""
        out = ""
        tail = live.transport.stderr_tail()
        if tail:
            out += f"; stderr: {tail}"
        connection = getattr(live, "connection", None)
        noise = connection.channel.noise() if connection is not None else []
        if noise:
            out += f"; stdout (not ACP): {' | '.join(noise)}"
        return out

    def _overflowed(self, live: LiveAgent, failure: LimitExceeded) -> None:
        """The agent wrote a line past the frame limit: it is stopped at once (its runtime
        fails as ``frame_too_large`` when its exit is seen)."""
        live.failure = failure
        self._in_background(functools.partial(live.transport.terminate, 0), "agent-overflow")

    def _announce(
        self, agent: AgentDefinition, options: dict[str, tuple[str, tuple[str, ...]]]
    ) -> None:
        """Remember the models and efforts an agent offered (``compozy agent list``)."""
        from compozy_mcp.runtime._connection import EFFORT_CATEGORY, MODEL_CATEGORY

        models = list(options.get(MODEL_CATEGORY, ("", ()))[1])
        efforts = list(options.get(EFFORT_CATEGORY, ("", ()))[1])
        if agent.source == "builtin" or agent.announced or models or efforts:
            with contextlib.suppress(OSError):  # a read-only home: the list stays unknown
                self._catalogs.announcements.record(agent.name, models, efforts)

    async def bound(self, session_id: str) -> None:
        """The store recorded a bind: the agent may take turns, its commands are recorded."""
        live = self._live.get(session_id)
        if live is None:
            return
        live.bound = True
        if live.commands:
            await self._offload(
                self._sessions.turns.set_commands, session_id, live.commands, live.generation
            )
        live.wake.set()

    async def release(self, session_id: str, generation: int | None = None) -> None:
        live = self._live.get(session_id)
        if live is None or (generation is not None and live.generation != generation):
            return
        async with self._lock(session_id):
            if self._live.get(session_id) is live:
                await self._close(live)

    async def reconcile(self) -> None:
        """End every agent whose session no longer holds it."""
        for session_id, live in list(self._live.items()):
            with self._sessions.ledger.store.read() as reader:
                row = reader.session(session_id)
                state = self._sessions.ledger.read_state(row) if row is not None else None
            keep = (
                state is not None
                and state.state != "stopped"
                and state.archived_at is None
                and state.runtime.generation == live.generation
                and state.runtime.status in ("binding", "ready", "running")
            )
            if not keep:
                await self.release(session_id, live.generation)

    async def _close(self, live: LiveAgent) -> None:
        live.closing = True
        for pending in live.pending.values():
            if not pending.answer.done():
                pending.answer.set_result(None)
        if self._live.get(live.session_id) is live:
            del self._live[live.session_id]
        if live.current is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(live.connection.cancel(), timeout=0.5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(live.connection.close(), timeout=CLOSE_SESSION_SECONDS)
        others = [job for job in live.tasks if not job.is_current()]
        for job in others:
            job.cancel()
        for job in others:
            await job.wait()
        await self._end_process(live)
        await self._placed_elsewhere(live.session_id)

    async def _placed_elsewhere(self, session_id: str) -> None:
        """No agent of the session runs here any more: its lease goes (another daemon may run
        it)."""
        if self.placement is not None and session_id not in self._live:
            with contextlib.suppress(Exception):  # an unreachable store: the lease expires
                await self.placement.released(session_id)

    async def _end_process(self, live: LiveAgent) -> None:
        await live.transport.terminate(self._settings.agent_stop_grace_seconds)

    async def shutdown(self) -> None:
        """End every agent (this process is exiting); their sessions are unbound."""
        for job in self._tasks.jobs(BACKGROUND):
            job.cancel()
            await job.wait()
        ids = list(self._live)
        for session_id in ids:
            live = self._live.get(session_id)
            if live is not None:
                await self._close(live)
        await self.log.close()
        if ids:
            await self._offload(self._sessions.turns.release_all, ids, "runtime_shutdown")

    # --- the agent's own end ---------------------------------------------------------------

    async def _watch(self, live: LiveAgent) -> None:
        status = await live.transport.wait()
        if not live.closing:
            await self._crashed(live, status)

    async def _crashed(self, live: LiveAgent, status: int) -> None:
        await asyncio.sleep(0.05)  # the last stderr lines
        name = live.agent.name
        if live.failure is not None:  # stopped for a line past the frame limit
            await self._agent_failed(
                live, "frame_too_large", f'agent "{name}" {live.failure.message}'
            )
            return
        summary = f'agent "{name}" exited with status {status}'
        if live.current is not None:
            summary += " during a turn"
        await self._agent_failed(live, "agent_crashed", summary + self._said(live))

    async def _agent_failed(
        self, live: LiveAgent, kind: str, summary: str, *, turn_detail: str | None = None
    ) -> None:
        """The agent can serve no more turns (it exited, or failed one): its runtime fails with
        ``summary``, its running turn fails with what streamed so far (and ``turn_detail``,
        what the agent said, or the summary), the process ends."""
        if live.closing:
            return
        live.closing = True
        for pending in live.pending.values():
            if not pending.answer.done():
                pending.answer.set_result(None)
        if self._live.get(live.session_id) is live:
            del self._live[live.session_id]
        # the session fails first, so that whoever waits on the turn sees both; the turn keeps
        # what streamed before the end
        await self._offload(
            self._sessions.turns.crashed, live.session_id, live.generation, kind, summary
        )
        for job in live.tasks:
            if not job.is_current():
                job.cancel()
        await self._end_process(live)
        # the turns it had not taken yet fail (nobody waits for an agent that is gone), then
        # the one it ran, with what streamed: whoever it wakes sees them all ended
        await self._fail_open_turns(
            live.session_id,
            kind,
            f"the agent ended before it took this turn: {summary}",
            stop_reason=kind,
            queued_only=True,
        )
        if live.current is not None:
            detail = turn_detail or summary
            await self._store_turn(live, live.current, "failed", kind, None, detail)
            live.current = None
        self.log.publish(live.session_id, {"kind": "runtime_failed", "summary": summary})
        await self._placed_elsewhere(live.session_id)

    # --- turns -----------------------------------------------------------------------------

    async def _run_turns(self, live: LiveAgent) -> None:
        turns = self._sessions.turns
        while not live.closing:
            await live.wake.wait()
            live.wake.clear()
            if not live.bound:
                continue
            for queued in await self._offload(turns.queued, live.session_id):
                if live.closing:
                    return
                started = await self._offload(
                    turns.start, live.session_id, queued.turn_id or "", live.generation
                )
                if started is not None:
                    await self._run_turn(live, started)

    async def _run_turn(self, live: LiveAgent, turn: TranscriptTurn) -> None:
        recorder = live.current = TurnRecorder(turn)
        self.log.record(live.session_id, turn.turn_id, "turn_started", {"turn": turn.turn})
        blocks = [turn.text]
        if live.context:
            blocks.insert(0, "Conversation so far (kept by compozy):\n" + "\n".join(live.context))
            live.context = ()
        try:
            response = await live.connection.prompt(blocks)
        except anyio.get_cancelled_exc_class():
            if live.current is recorder and not live.closing:
                with anyio.CancelScope(shield=True):  # the cancelled turn is stored whole
                    await self._store_turn(live, recorder, "cancelled", "cancelled", None)
            raise
        except Exception as exc:
            # a dropped connection is usually the process ending: give it a moment to say so
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(live.transport.wait()), timeout=1.0)
            if live.closing:
                return
            exited = live.transport.exited()
            if exited is not None:
                # recorded here, while this turn is the current one: its output is kept, and no
                # queued turn is taken by an agent that is gone
                await self._crashed(live, exited)
                return
            said = _error_text(exc)
            # an agent that cannot take a turn (its model backend is gone, it lost its login)
            # is failed, not left "ready" to fail every turn: the next prompt starts a new one
            summary = f'agent "{live.agent.name}" failed a turn: {said}'
            await self._agent_failed(live, "agent_error", summary, turn_detail=said)
            return
        usage = response.usage.model_dump(exclude_none=True) if response.usage else None
        stop = str(response.stop_reason)
        status = "cancelled" if stop == "cancelled" else "completed"
        await self._store_turn(live, recorder, status, stop, usage)

    async def _store_turn(
        self,
        live: LiveAgent,
        recorder: TurnRecorder,
        status: str,
        stop_reason: str,
        usage: dict[str, Any] | None,
        detail: str | None = None,
    ) -> None:
        if live.current is recorder:
            live.current = None
        now = timestamp(self._sessions.ledger.clock.now())
        failure = detail if status == "failed" else None
        outcome = recorder.outcome(status, stop_reason, now, usage, failure=failure)
        payload: dict[str, Any] = {"status": status, "stop_reason": stop_reason}
        if detail:
            payload["detail"] = detail
        self.log.record(live.session_id, outcome.turn_id, "turn_ended", payload)
        finish = functools.partial(self._sessions.turns.finish, outcome, live.generation)
        await self.log.flush_with(finish, live.session_id)
        with contextlib.suppress(Exception):  # what its worktree holds now (the board's review)
            await self._sessions.turn_ended(live.session_id)
        done = self._turn_done.pop(outcome.turn_id or "", None)
        if done is not None:
            done.set()

    # --- updates and permissions (from the agent) ------------------------------------------

    async def on_update(self, live: LiveAgent, update: Any) -> None:
        kind = getattr(update, "session_update", "")
        if kind == "available_commands_update":
            from compozy_mcp.runtime._connection import commands_of

            live.commands = commands_of(update)
            if live.bound:
                await self._offload(
                    self._sessions.turns.set_commands,
                    live.session_id,
                    live.commands,
                    live.generation,
                )
        recorder = live.current
        if recorder is not None:
            event_kind, payload = recorder.fold(update)
            turn_id = recorder.turn.turn_id
        else:
            payload = update.model_dump(mode="json", exclude_none=True)
            event_kind = str(payload.pop("session_update", kind))
            turn_id = None
        self.log.record(live.session_id, turn_id, event_kind, payload)

    async def on_permission(
        self, live: LiveAgent, options: list[dict[str, str]], tool_call: Any
    ) -> str | None:
        recorder = live.current
        title = getattr(tool_call, "title", None) or "Permission requested"
        interaction = Interaction(
            interaction_id=f"int-{secrets.token_hex(4)}",
            kind="permission",
            provider_request_id=f"req-{secrets.token_hex(4)}",
            turn_id=recorder.turn.turn_id if recorder is not None else None,
            title=title,
            choices=[o["option_id"] for o in options],
            options=options,
            created_at=timestamp(self._sessions.ledger.clock.now()),
        )
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        pending = live.pending[interaction.interaction_id] = _Pending(interaction, answer)
        turn_id = interaction.turn_id
        self.log.record(
            live.session_id,
            turn_id,
            "permission_requested",
            {"interaction_id": interaction.interaction_id, "title": title, "options": options},
        )
        await self.log.flush()
        turns = self._sessions.turns
        await self._offload(turns.add_interaction, live.session_id, interaction, live.generation)
        timeout = self._settings.permission_timeout_seconds
        try:
            chosen = await asyncio.wait_for(asyncio.shield(answer), timeout=timeout)
            outcome = "answered" if chosen is not None else "cancelled"
            detail = f"{title}: {chosen or 'cancelled'}"
        except TimeoutError:
            chosen = next((o["option_id"] for o in options if o["kind"] == "reject_once"), None)
            outcome = "timed_out"
            detail = f"{title}: unanswered after {timeout} s; rejected"
        finally:
            live.pending.pop(interaction.interaction_id, None)
        self.log.record(
            live.session_id,
            turn_id,
            "permission_answered",
            {"interaction_id": interaction.interaction_id, "outcome": outcome, "option_id": chosen},
        )
        await self._offload(
            turns.resolve_interaction, live.session_id, interaction.interaction_id, outcome, detail
        )
        del pending
        return chosen

    # --- what the tools call ---------------------------------------------------------------

    async def prompt(self, call: CallInfo, session_id: str, text: str, *, wait: bool) -> str:
        """Queue a prompt as the session's next turn and see that an agent takes it; returns
        the turn id. Without ``wait`` it returns once the turn is queued: the agent is
        started in the background (a start that fails fails the turn)."""
        sessions = self._sessions
        _, turn = await self._offload(sessions.turns.enqueue, call, session_id, text, wait)
        turn_id = turn.turn_id or ""
        self._turn_done.setdefault(turn_id, asyncio.Event())
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
                record = await self._sessions.bind(call, ticket, record)
                failure = record["runtime"].get("failure")
                if record["runtime"]["status"] == "failed" and failure is not None:
                    await self._fail_open_turns(session_id, failure["kind"], failure["summary"])
        finally:
            self._binding.discard(session_id)
            self._woken_in_bind.discard(session_id)
            if placed:
                await self._placed_elsewhere(session_id)

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

    async def _fail_open_turns(
        self,
        session_id: str,
        kind: str,
        summary: str,
        stop_reason: str = "agent_start_failed",
        *,
        queued_only: bool = False,
    ) -> None:
        """The session's agent could not start (or ended before it took them): its open
        turns fail with ``stop_reason`` and a failure of ``kind``, each with its
        ``turn_ended`` event, and whoever waits on them is woken."""
        await self.log.flush()
        fail = functools.partial(
            self._sessions.turns.fail_open,
            session_id,
            stop_reason,
            summary,
            kind=kind,
            queued_only=queued_only,
        )
        failed = await self._offload(fail)
        ended: list[SessionEventRow] = []
        for turn in failed:
            payload = {"status": "failed", "stop_reason": stop_reason, "detail": summary}
            ended.append(self.log.row(session_id, turn.turn_id, "turn_ended", payload))
        if ended:
            await self._offload(self._sessions.turns.append_events, ended)
        for turn in failed:
            self.log.notify(session_id)
            done = self._turn_done.pop(turn.turn_id or "", None)
            if done is not None:
                done.set()

    async def wait_turn(
        self, call: CallInfo, session_id: str, turn_id: str, timeout: float
    ) -> dict[str, Any]:
        """The turn's record once it ended, or as it is when ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while True:
            record = await self.turn(call, session_id, turn_id)
            if record["status"] in TERMINAL:
                return record
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return record
            done = self._turn_done.setdefault(turn_id, asyncio.Event())
            # the turn may run in another process (a daemon): look at the store now and then
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), timeout=min(remaining, 1.0))

    async def turn(self, call: CallInfo, session_id: str, turn_id: str) -> dict[str, Any]:
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            sessions.ledger.load(reader, call, session_id, read_only=True)
            found = reader.turn(session_id, turn_id)
        if found is None:
            raise ResourceNotFound(call.tool_id, "turn", turn_id)
        record = turn_record(found)
        live = self._live.get(session_id)
        if live is not None and live.current is not None and live.current.turn.turn_id == turn_id:
            now = timestamp(sessions.ledger.clock.now())
            record = turn_record(live.current.outcome("running", "", now))
            record.pop("stop_reason", None)
            record.pop("ended_at", None)
        return record

    async def cancel(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        """Cancel the running turn (ACP ``session/cancel``) and every queued one."""
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            sessions.ledger.load(reader, call, session_id, read_only=True)
        running = await self.cancel_live(session_id)
        elsewhere = None
        if running is None and self.placement is not None:
            with sessions.ledger.store.read() as reader:
                turns = reader.transcript(session_id)
            elsewhere = next((t.turn_id for t in turns if t.status == "running"), None)
        queued = await self._offload(sessions.turns.cancel_queued, session_id, "cancelled")
        # the turn may run on another daemon: told once its queue is cancelled (so that it
        # takes no queued turn after the one it stops), through the store
        placement = self.placement
        if elsewhere is not None and placement is not None:
            running = elsewhere if await placement.forward(session_id, "cancel", {}) else None
        return {"session_id": session_id, "running_turn_id": running, "queued_cancelled": queued}

    async def cancel_live(self, session_id: str) -> str | None:
        """Cancel the turn this process's agent of the session runs (ACP ``session/cancel``,
        its pending permission requests cancelled); the turn's id, ``None`` when none runs."""
        live = self._live.get(session_id)
        if live is None or live.current is None:
            return None
        running = live.current.turn.turn_id
        for pending in live.pending.values():
            if not pending.answer.done():
                pending.answer.set_result(None)
        with contextlib.suppress(Exception):
            await live.connection.cancel()
        return running

    def answer_live(self, session_id: str, interaction_id: str, decision: str) -> bool:
        """Answer a permission request of this process's agent; ``False`` when it asks none
        such any more (answered, timed out, or its agent ended)."""
        live = self._live.get(session_id)
        pending = live.pending.get(interaction_id) if live is not None else None
        if pending is None or pending.answer.done():
            return False
        pending.answer.set_result(decision)
        return True

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

    # --- reads and followers of the event log (:mod:`.event_log`) -----------------------------

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


def _error_text(exc: BaseException) -> str:
    """What an agent said when it refused a request (a JSON-RPC error's message and data)."""
    message = str(exc) or type(exc).__name__
    data = getattr(exc, "data", None)
    if isinstance(data, dict):
        detail = data.get("details") or data.get("message")
        if isinstance(detail, str) and detail and detail not in message:
            message = f"{message}: {detail}"
    elif isinstance(data, str) and data and data not in message:
        message = f"{message}: {data}"
    return message


class _AgentListener:
    def __init__(self, runtime: AgentRuntime, live: LiveAgent) -> None:
        self._runtime = runtime
        self._live = live

    async def on_update(self, update: Any) -> None:
        await self._runtime.on_update(self._live, update)

    async def on_permission(self, options: list[dict[str, str]], tool_call: Any) -> str | None:
        return await self._runtime.on_permission(self._live, options, tool_call)
