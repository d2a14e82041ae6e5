"""Turn running: the turns of a session run one at a time, in order, by a runner job per
agent. A prompt is queued in the store first (so it is never lost); the runner takes it,
streams the agent's updates into the turn and the event log (written in batches, off the
loop), and stores the outcome. A new ACP session whose context must hold earlier turns (after
a rewind, a clear or a lost process) gets them as a first text block of its first prompt.
Permission requests become pending interactions of kind ``permission``; one unanswered for
``COMPOZY_PERMISSION_TIMEOUT_SECONDS`` is rejected and recorded."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
import time
from collections.abc import Mapping
from typing import Any

import anyio

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import timestamp
from compozy_mcp.config import Settings
from compozy_mcp.errors import ResourceNotFound
from compozy_mcp.runtime._event_log import EventLog
from compozy_mcp.runtime._live import AgentEnds, LiveAgent, Pending
from compozy_mcp.runtime._turn import TurnRecorder
from compozy_mcp.sessions.model import Interaction
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.sessions.turn_record import TERMINAL, turn_record
from compozy_mcp.store.base import SessionEventRow, TranscriptTurn


class TurnRunner:
    """Runs the turns of the agents in ``live`` and answers what tools ask of turns."""

    def __init__(
        self,
        sessions: Sessions,
        settings: Settings,
        offload: Offload,
        log: EventLog,
        live: Mapping[str, LiveAgent],
    ) -> None:
        self._sessions = sessions
        self._settings = settings
        self._offload = offload
        self._log = log
        self._live = live
        #: woken when a turn ends (its waiters look at the store)
        self._turn_done: dict[str, asyncio.Event] = {}
        #: what ends an agent that failed a turn (set by the runtime that owns both halves)
        self.ends: AgentEnds | None = None

    def _ends(self) -> AgentEnds:
        assert self.ends is not None, "the runtime sets what ends its agents"
        return self.ends

    def expect(self, turn_id: str) -> None:
        """A turn was queued: its waiters are woken when it ends."""
        self._turn_done.setdefault(turn_id, asyncio.Event())

    async def run_turns(self, live: LiveAgent) -> None:
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
        self._log.record(live.session_id, turn.turn_id, "turn_started", {"turn": turn.turn})
        blocks = [turn.text]
        if live.context:
            blocks.insert(0, "Conversation so far (kept by compozy):\n" + "\n".join(live.context))
            live.context = ()
        try:
            response = await live.connection.prompt(blocks)
        except anyio.get_cancelled_exc_class():
            if live.current is recorder and not live.closing:
                with anyio.CancelScope(shield=True):  # the cancelled turn is stored whole
                    await self.store_turn(live, recorder, "cancelled", "cancelled", None)
            raise
        except Exception as exc:
            # the SDK is loaded: it runs this agent (imported here so that a command running
            # no agent never loads it)
            from acp.exceptions import RequestError

            if not isinstance(exc, RequestError):
                # a dropped connection is usually the process ending: give it a moment to say
                # so (an error answer came from an agent that is still there: no wait)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(live.transport.wait()), timeout=1.0)
            if live.closing:
                return
            exited = live.transport.exited()
            if exited is not None:
                # recorded here, while this turn is the current one: its output is kept, and no
                # queued turn is taken by an agent that is gone
                await self._ends().crashed(live, exited)
                return
            said = _error_text(exc)
            # an agent that cannot take a turn (its model backend is gone, it lost its login)
            # is failed, not left "ready" to fail every turn: the next prompt starts a new one
            summary = f'agent "{live.agent.name}" failed a turn: {said}'
            await self._ends().agent_failed(live, "agent_error", summary, turn_detail=said)
            return
        usage = response.usage.model_dump(exclude_none=True) if response.usage else None
        stop = str(response.stop_reason)
        status = "cancelled" if stop == "cancelled" else "completed"
        await self.store_turn(live, recorder, status, stop, usage)

    async def store_turn(
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
        self._log.record(live.session_id, outcome.turn_id, "turn_ended", payload)
        finish = functools.partial(self._sessions.turns.finish, outcome, live.generation)
        await self._log.flush_with(finish, live.session_id)
        with contextlib.suppress(Exception):  # what its worktree holds now (the board's review)
            await self._sessions.turn_ended(live.session_id)
        done = self._turn_done.pop(outcome.turn_id or "", None)
        if done is not None:
            done.set()

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
        self._log.record(live.session_id, turn_id, event_kind, payload)

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
        pending = live.pending[interaction.interaction_id] = Pending(interaction, answer)
        turn_id = interaction.turn_id
        self._log.record(
            live.session_id,
            turn_id,
            "permission_requested",
            {"interaction_id": interaction.interaction_id, "title": title, "options": options},
        )
        await self._log.flush()
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
        self._log.record(
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

    async def fail_open_turns(
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
        await self._log.flush()
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
            ended.append(self._log.row(session_id, turn.turn_id, "turn_ended", payload))
        if ended:
            await self._offload(self._sessions.turns.append_events, ended)
        for turn in failed:
            self._log.notify(session_id)
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

    async def cancel_live(self, session_id: str) -> str | None:
        """Cancel the turn this process's agent of the session runs (ACP ``session/cancel``,
        its pending permission requests cancelled); the turn's id, ``None`` when none runs."""
        live = self._live.get(session_id)
        if live is None or live.current is None:
            return None
        running = live.current.turn.turn_id
        live.drop_questions()
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
