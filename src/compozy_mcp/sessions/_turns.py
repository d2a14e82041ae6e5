"""Turns: a prompt queued, taken by the agent, and finished; and what the agent reports on the
way (interactions, commands, a crash). One store transaction each, synchronous; the runtime
(:mod:`compozy_mcp.runtime`) calls them off the event loop.

A turn's ``generation`` guard: a report from an agent process that is no longer the session's
(it was replaced or unbound meanwhile) changes nothing on the session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from compozy_mcp import jsonutil
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.ledger import Change, Record, SessionLedger, require_open, unbind
from compozy_mcp.sessions.model import (
    AvailableCommand,
    Failure,
    Interaction,
    SessionState,
    TurnActivity,
)
from compozy_mcp.store.base import SessionEventRow, SessionRow, StoreWriter, TranscriptTurn

RUNTIME = CallInfo(tool_id="compozy.runtime")
OPEN_TURN = ("queued", "running")


def failure_doc(doc: str | None, kind: str, summary: str) -> str:
    """A turn's document with why it failed (``failure``: kind and summary)."""
    fields = jsonutil.loads(doc) if doc else {}
    fields["failure"] = {"kind": kind, "summary": summary}
    return jsonutil.dumps(fields).decode()


def _live(state: SessionState, generation: int) -> bool:
    runtime = state.runtime
    return runtime.generation == generation and runtime.status in ("ready", "running")


class TurnLedger:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    def _apply(self, session_id: str, change: Change) -> Record:
        return self._ledger.mutate(RUNTIME, session_id, change)

    def enqueue(
        self, call: CallInfo, session_id: str, text: str, needs_selection: bool
    ) -> tuple[Record, TranscriptTurn]:
        """Add a prompt as the session's next turn, queued for its agent."""
        made: list[TranscriptTurn] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state, running=True)
            if needs_selection and state.runtime.selected is None:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" has no runtime selection, so no agent would answer; '
                    "select one with compozy__session_runtime_set (nothing was queued)",
                    reason=Reason.RUNTIME_UNSELECTED,
                )
            made.append(self._ledger.new_prompt(state, text)[1])
            writer.append_turns(made)
            return True

        record = self._ledger.mutate(call, session_id, change)
        return record, made[0]

    def queued(self, session_id: str) -> list[TranscriptTurn]:
        with self._ledger.store.read() as reader:
            return [t for t in reader.transcript(session_id) if t.status == "queued"]

    def start(self, session_id: str, turn_id: str, generation: int) -> TranscriptTurn | None:
        """The agent of ``generation`` takes a queued turn: the turn runs, the runtime is
        ``running``. ``None`` if the turn is gone (rewound) or the agent is not the session's."""
        started: list[TranscriptTurn] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            turn = writer.turn(session_id, turn_id)
            if turn is None or turn.status != "queued" or not _live(state, generation):
                return False
            now = self._ledger.now()
            running = replace(turn, status="running", started_at=now)
            writer.save_turn(running)
            started.append(running)
            state.queue = [p for p in state.queue if p.prompt_id != turn_id]
            state.runtime.status = "running"
            state.supervision.iterations += 1
            state.supervision.turn = TurnActivity(
                turn_id=turn_id, started_at=now, last_activity_at=now
            )
            return True

        self._apply(session_id, change)
        return started[0] if started else None

    def finish(
        self, turn: TranscriptTurn, generation: int, events: Sequence[SessionEventRow] = ()
    ) -> None:
        """Store a turn's outcome (with the events not yet written, in the same transaction);
        the runtime is ``ready`` again."""

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            writer.append_session_events(events)
            stored = writer.turn(turn.session_id, turn.turn_id or "")
            if stored is None:  # rewound away while it ran
                return False
            writer.save_turn(turn)
            if state.runtime.status == "running" and _live(state, generation):
                state.runtime.status = "ready"
            activity = state.supervision.turn
            if activity is not None and activity.turn_id == turn.turn_id:
                state.supervision.turn = None
            state.pending_interactions = [
                i for i in state.pending_interactions if i.turn_id != turn.turn_id
            ]
            return True

        self._apply(turn.session_id, change)

    def cancel_queued(self, session_id: str, stop_reason: str, *, queued_only: bool = False) -> int:
        """Cancel every open turn: the queued ones, and (unless ``queued_only``) one still
        marked running (its agent was told to stop, or went away). Returns how many *queued*
        turns were cancelled: the running one is reported as the running one, not counted with
        the queue."""
        queued: list[int] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            now = self._ledger.now()
            closed = False
            for turn in writer.transcript(session_id):
                if turn.status in OPEN_TURN and not (queued_only and turn.status != "queued"):
                    writer.save_turn(
                        replace(turn, status="cancelled", stop_reason=stop_reason, ended_at=now)
                    )
                    closed = True
                    if turn.status == "queued":
                        queued.append(turn.turn)
            state.queue = []
            return closed

        self._apply(session_id, change)
        return len(queued)

    def fail_open(
        self,
        session_id: str,
        stop_reason: str,
        summary: str,
        events: Sequence[SessionEventRow] = (),
        *,
        kind: str | None = None,
        queued_only: bool = False,
    ) -> list[TranscriptTurn]:
        """Fail every open turn of a session whose agent could not start (or went away before
        taking them): each ends ``failed`` with ``stop_reason`` and a failure of ``kind``
        (default: the stop reason) saying ``summary`` (``queued_only``: not the one running,
        which its runtime stores itself). Returns the turns it failed (the waiters of each are
        told by the caller)."""
        failed: list[TranscriptTurn] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            writer.append_session_events(events)
            now = self._ledger.now()
            for turn in writer.transcript(session_id):
                if turn.status == "queued" or (turn.status in OPEN_TURN and not queued_only):
                    ended = replace(
                        turn,
                        status="failed",
                        stop_reason=stop_reason,
                        ended_at=now,
                        doc=failure_doc(turn.doc, kind or stop_reason, summary),
                    )
                    writer.save_turn(ended)
                    failed.append(ended)
            state.queue = []
            return bool(failed) or bool(events)

        self._apply(session_id, change)
        return failed

    def add_interaction(self, session_id: str, interaction: Interaction, generation: int) -> bool:
        added: list[bool] = []

        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if not _live(state, generation):
                return False
            state.pending_interactions.append(interaction)
            added.append(True)
            return True

        self._apply(session_id, change)
        return bool(added)

    def resolve_interaction(
        self,
        session_id: str,
        interaction_id: str,
        outcome: Literal["answered", "cancelled", "timed_out", "expired"],
        detail: str,
    ) -> None:
        """Remove an answered (or timed out) interaction and say how it ended."""

        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            before = len(state.pending_interactions)
            state.pending_interactions = [
                i for i in state.pending_interactions if i.interaction_id != interaction_id
            ]
            if len(state.pending_interactions) == before:
                return False
            severity: Literal["info", "warning"] = "warning" if outcome == "timed_out" else "info"
            self._ledger.diagnose(state, f"interaction.{outcome}", severity, detail)
            return True

        self._apply(session_id, change)

    def set_commands(
        self, session_id: str, commands: Sequence[AvailableCommand], generation: int
    ) -> None:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if not _live(state, generation) or state.available_commands == list(commands):
                return False
            state.available_commands = list(commands)
            return True

        self._apply(session_id, change)

    def crashed(self, session_id: str, generation: int, kind: str, summary: str) -> None:
        """The agent process of ``generation`` ended on its own: the runtime failed, the session
        says why (``failure``, ``stop_cause: failure``), open turns end as ``agent_crashed``."""

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            runtime = state.runtime
            if runtime.generation != generation or runtime.status not in (
                "ready",
                "running",
                "binding",
            ):
                return False
            now = self._ledger.now()
            for turn in writer.transcript(session_id):
                if turn.status == "running":
                    doc = failure_doc(turn.doc, "agent_crashed", summary)
                    writer.save_turn(
                        replace(
                            turn,
                            status="failed",
                            stop_reason="agent_crashed",
                            ended_at=now,
                            doc=doc,
                        )
                    )
            unbind(state)
            runtime.status = "failed"
            runtime.failure = Failure(kind=kind, summary=summary)
            # the session failed too (spec: "stop_reason, stop_detail, failure: the session
            # stopped or failed"), not only its binding
            state.failure = Failure(kind=kind, summary=summary)
            state.pending_interactions = []
            state.stop_cause = "failure"
            state.stop_reason = "agent_crashed"
            state.stop_detail = summary
            self._ledger.diagnose(state, f"runtime.{kind}", "error", summary)
            return True

        self._apply(session_id, change)

    def append_events(self, events: Sequence[SessionEventRow]) -> None:
        if not events:
            return
        with self._ledger.store.write() as writer:
            writer.append_session_events(events)

    def release_all(self, session_ids: Sequence[str], detail: str) -> None:
        """The process that ran these sessions' agents is going away: each is unbound (its
        selection kept, so the next prompt binds again) and its running turn is cancelled."""
        for session_id in session_ids:

            def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
                now = self._ledger.now()
                for turn in writer.transcript(state.id):
                    if turn.status == "running":
                        writer.save_turn(
                            replace(turn, status="cancelled", stop_reason=detail, ended_at=now)
                        )
                if state.runtime.status not in ("binding", "ready", "running"):
                    return False
                unbind(state)
                state.pending_interactions = [
                    i for i in state.pending_interactions if i.kind != "permission"
                ]
                return True

            try:
                self._apply(session_id, change)
            except Exception:  # a deleted session has nothing left to release
                continue

    def reset_stale(self) -> list[str]:
        """At daemon start: runtimes the store says are live belong to no process any more."""
        with self._ledger.store.read() as reader:
            ids = reader.live_runtime_sessions()
        self.release_all(ids, "daemon_restarted")
        return ids
