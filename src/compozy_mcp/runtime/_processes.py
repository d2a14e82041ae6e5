"""Process supervision: one ACP agent process per bound session, started under the start
timeout, watched for its exit, ended with its session's runtime (unbind, stop, archive,
delete, a TTL expiry) and at shutdown. An agent that exits on its own, or fails a turn, fails
its runtime (``runtime.failure``); everything persisted so far stays."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import sys
from typing import TYPE_CHECKING, Any

import anyio

from compozy_mcp.agents.definitions import AgentCatalog, AgentDefinition, CatalogCache
from compozy_mcp.background import TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.config import Settings
from compozy_mcp.errors import LimitExceeded
from compozy_mcp.interpreter import imports_without_collector
from compozy_mcp.keyed_locks import KeyedLocks
from compozy_mcp.runtime import _orphans as orphans
from compozy_mcp.runtime._event_log import EventLog
from compozy_mcp.runtime._hints import hint
from compozy_mcp.runtime._live import BACKGROUND, LiveAgent, StartAbandoned
from compozy_mcp.runtime.process import Launcher, ProcessTransport
from compozy_mcp.sessions.model import AcpCaps
from compozy_mcp.sessions.runtime import (
    BindFailed,
    Binding,
    BindTicket,
    check_selection,
    effective_selection,
)

if TYPE_CHECKING:
    from compozy_mcp.runtime._placement import Placement
    from compozy_mcp.runtime._turns import TurnRunner
    from compozy_mcp.sessions.service import Sessions

#: seconds a closing agent gets for ``close_session``
CLOSE_SESSION_SECONDS = 2.0


def import_connection() -> None:
    """Import the agent connection, and the ACP SDK with it, if not yet imported (the first
    bind of a process does it, in a worker thread). Building the SDK's schema models takes
    ~0.5 s: on the event loop it would stall every other request of the daemon meanwhile."""
    if "compozy_mcp.runtime._connection" not in sys.modules:
        with imports_without_collector():
            import compozy_mcp.runtime._connection  # noqa: F401


class AgentProcesses:
    """The agents this process runs, by session (the sessions' runtime driver's half that
    starts and ends processes; :class:`~._turns.TurnRunner` runs their turns)."""

    def __init__(
        self,
        sessions: Sessions,
        settings: Settings,
        offload: Offload,
        tasks: TaskOwner,
        launcher: Launcher,
        log: EventLog,
        turns: TurnRunner,
        live: dict[str, LiveAgent],
    ) -> None:
        self._sessions = sessions
        self._settings = settings
        self._offload = offload
        self._tasks = tasks
        self._launcher = launcher
        self._log = log
        self._turns = turns
        self._reaped = False
        self._catalogs = CatalogCache(settings.home)
        #: the running agents, by session (shared with the turn runner)
        self.live = live
        #: a session's start and release, one at a time
        self._locks = KeyedLocks()
        #: sessions whose start (a prompt's bind, a new selection) is under way here, and
        #: how many of them
        self._starts: collections.Counter[str] = collections.Counter()
        #: agents whose handshake is under way
        self._handshaking: dict[str, LiveAgent] = {}
        #: this process is stopping: a start under way is given up, not recorded
        self.stopping = False
        #: several daemons on one store: who runs which agent (``None``: this process alone)
        self.placement: Placement | None = None

    # --- definitions and what runs ---------------------------------------------------------

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        return self._catalogs.get(workspace_path)

    def live_sessions(self) -> list[str]:
        return sorted(self.live)

    def pids(self) -> list[int]:
        return [pid for live in self.live.values() if (pid := live.transport.pid) is not None]

    def reap_orphans(self) -> list[int]:
        """End the agent process groups a process of this home started and could not end (it
        was killed); once per runtime, before its first agent starts, and at daemon start."""
        self._reaped = True
        return orphans.reap(self._settings.home / "run")

    @property
    def starting(self) -> set[str]:
        """Sessions whose start is under way here."""
        return set(self._starts)

    async def start(self, ticket: BindTicket) -> Binding:
        session_id = ticket.session_id
        self._starts[session_id] += 1
        try:
            async with self._locks.hold(session_id):
                return await self._start(ticket)
        finally:
            self._starts[session_id] -= 1
            if not self._starts[session_id]:
                del self._starts[session_id]

    async def _start(self, ticket: BindTicket) -> Binding:
        catalog = self.agents(ticket.cwd)
        try:
            agent = check_selection(ticket.selection, catalog)
        except Exception as exc:
            raise BindFailed("selection_rejected", str(exc)) from None
        effective = effective_selection(ticket.selection, agent)
        live = self.live.get(ticket.session_id)
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
            await self.close(live)
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
        await self._offload(import_connection)
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
        listener = _AgentListener(self._turns, live)
        live.connection = AgentConnection(
            listener,
            transport,
            self._settings.agent_max_frame_bytes,
            on_overflow=lambda failure: self._overflowed(live, failure),
        )
        timeout = self._settings.agent_start_timeout_seconds
        self._handshaking[ticket.session_id] = live
        try:
            handshake = await asyncio.wait_for(
                self._handshake(live, ticket, effective), timeout=timeout
            )
            # a conversation the agent replays after its load answer is not the next turn's
            # (past the start timeout: the agent has answered; a cancel still ends it, below)
            await live.connection.replay_ended()
        except BaseException as exc:
            if self.stopping and not isinstance(exc, asyncio.CancelledError):
                await self._end_process(live)
                raise StartAbandoned(ticket.session_id) from None
            if isinstance(exc, Exception) and not isinstance(exc, TimeoutError):
                # a closed connection is usually the process ending: let it say how
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(transport.wait()), timeout=1.0)
                status = transport.exited()
                if status is not None:
                    exc = ConnectionError(f"exited with status {status}")
            with anyio.CancelScope(shield=True):  # a cancelled start still ends its process
                await self._end_process(live)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise self._start_failure(live, exc, timeout) from None
        finally:
            self._handshaking.pop(ticket.session_id, None)
        live.caps = handshake.caps
        live.context = () if handshake.loaded else ticket.context
        await self._offload(self._announce, agent, handshake.options)
        self.live[ticket.session_id] = live
        sid = ticket.session_id
        live.tasks.append(self._tasks.start(lambda: self._watch(live), f"agent-exit-{sid}"))
        live.tasks.append(
            self._tasks.start(lambda: self._turns.run_turns(live), f"agent-turns-{sid}")
        )
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
        self._tasks.start(functools.partial(live.transport.terminate, 0), BACKGROUND + "overflow")

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
        live = self.live.get(session_id)
        if live is None:
            return
        live.bound = True
        if live.commands:
            await self._offload(
                self._sessions.turns.set_commands, session_id, live.commands, live.generation
            )
        live.wake.set()

    async def release(self, session_id: str, generation: int | None = None) -> None:
        live = self.live.get(session_id)
        if live is None or (generation is not None and live.generation != generation):
            return
        async with self._locks.hold(session_id):
            if self.live.get(session_id) is live:
                await self.close(live)

    async def reconcile(self) -> None:
        """End every agent whose session no longer holds it. An agent whose bind is still
        being recorded is left alone: until the record says so, its generation is the one
        before it (the bind itself ends it when the record refuses it)."""
        for session_id, live in list(self.live.items()):
            if not live.bound:
                continue
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

    async def close(self, live: LiveAgent) -> None:
        """End the agent: its turn cancelled, its session closed, its jobs and process ended;
        bounded in time, and finished even when its caller is cancelled (a process must not
        outlive its record)."""
        with anyio.CancelScope(shield=True):
            live.closing = True
            live.drop_questions()
            if self.live.get(live.session_id) is live:
                del self.live[live.session_id]
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
            await self.placed_elsewhere(live.session_id)

    async def placed_elsewhere(self, session_id: str) -> None:
        """No agent of the session runs here any more: its lease goes (another daemon may run
        it)."""
        if self.placement is not None and session_id not in self.live:
            with contextlib.suppress(Exception):  # an unreachable store: the lease expires
                await self.placement.released(session_id)

    async def _end_process(self, live: LiveAgent) -> None:
        await live.transport.terminate(self._settings.agent_stop_grace_seconds)

    async def _watch(self, live: LiveAgent) -> None:
        status = await live.transport.wait()
        if not live.closing:
            await self.crashed(live, status)

    async def crashed(self, live: LiveAgent, status: int) -> None:
        await asyncio.sleep(0.05)  # the last stderr lines
        name = live.agent.name
        if live.failure is not None:  # stopped for a line past the frame limit
            await self.agent_failed(
                live, "frame_too_large", f'agent "{name}" {live.failure.message}'
            )
            return
        summary = f'agent "{name}" exited with status {status}'
        if live.current is not None:
            summary += " during a turn"
        await self.agent_failed(live, "agent_crashed", summary + self._said(live))

    async def agent_failed(
        self, live: LiveAgent, kind: str, summary: str, *, turn_detail: str | None = None
    ) -> None:
        """The agent can serve no more turns (it exited, or failed one): its runtime fails with
        ``summary``, its running turn fails with what streamed so far (and ``turn_detail``,
        what the agent said, or the summary), the process ends."""
        if live.closing:
            return
        live.closing = True
        live.drop_questions()
        if self.live.get(live.session_id) is live:
            del self.live[live.session_id]
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
        await self._turns.fail_open_turns(
            live.session_id,
            kind,
            f"the agent ended before it took this turn: {summary}",
            stop_reason=kind,
            queued_only=True,
        )
        if live.current is not None:
            detail = turn_detail or summary
            await self._turns.store_turn(live, live.current, "failed", kind, None, detail)
            live.current = None
        self._log.publish(live.session_id, {"kind": "runtime_failed", "summary": summary})
        await self.placed_elsewhere(live.session_id)

    async def abandon_starts(self) -> None:
        """This process is stopping: the agents still starting are ended, and their starts
        given up (:class:`StartAbandoned`), their sessions left as they were for the next
        process (a start's record is shielded from its caller's cancellation, so it is its
        process that is stopped)."""
        self.stopping = True
        for live in list(self._handshaking.values()):
            await self._end_process(live)

    async def close_all(self) -> list[str]:
        """End every agent (this process is exiting); the sessions whose agents ran."""
        ids = list(self.live)
        for session_id in ids:
            live = self.live.get(session_id)
            if live is not None:
                await self.close(live)
        return ids


class _AgentListener:
    """What the agent's connection reports, handed to the turn runner with its agent."""

    def __init__(self, turns: TurnRunner, live: LiveAgent) -> None:
        self._turns = turns
        self._live = live

    async def on_update(self, update: Any) -> None:
        await self._turns.on_update(self._live, update)

    async def on_permission(self, options: list[dict[str, str]], tool_call: Any) -> str | None:
        return await self._turns.on_permission(self._live, options, tool_call)
