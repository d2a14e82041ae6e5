"""What a session's runtime reports: interactions it raises, turns, failures, a linked pull
request, being set aside for later. Each event is one store write that the reporter runs (off
the event loop); the record of the session after it is returned.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.sessions.ledger import Record, SessionLedger, unbind
from compozy_mcp.sessions.model import (
    Failure,
    Interaction,
    Later,
    PullRequest,
    SessionState,
    TurnActivity,
)
from compozy_mcp.store.base import SessionRow, StoreWriter

EVENTS = CallInfo(tool_id="compozy.events")


class SessionEvents:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    def _apply(self, session_id: str, change: Callable[[SessionState], None]) -> Record:
        def apply(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            change(state)
            return True

        return self._ledger.mutate(EVENTS, session_id, apply)

    def request_interaction(
        self,
        session_id: str,
        *,
        kind: Literal["permission", "question", "plan"],
        title: str | None = None,
        choices: list[str] | None = None,
        turn_id: str | None = None,
    ) -> Interaction:
        interaction = Interaction(
            interaction_id=f"int-{secrets.token_hex(3)}",
            kind=kind,
            provider_request_id=f"req-{secrets.token_hex(3)}",
            turn_id=turn_id,
            title=title,
            choices=choices,
            created_at=self._ledger.now(),
        )
        self._apply(session_id, lambda s: s.pending_interactions.append(interaction))
        return interaction

    def record_failure(
        self, session_id: str, kind: str, summary: str, crash_bundle_path: str | None = None
    ) -> Record:
        def change(state: SessionState) -> None:
            state.failure = Failure(kind=kind, summary=summary, crash_bundle_path=crash_bundle_path)
            state.state = "stopped"
            state.stop_reason = "failed"
            state.stop_cause = "failure"
            state.stop_detail = summary
            unbind(state)
            self._ledger.diagnose(state, f"session.{kind}", "error", summary)

        return self._apply(session_id, change)

    def record_turn(self, session_id: str, turn_id: str, current_tool: str | None = None) -> Record:
        def change(state: SessionState) -> None:
            now = self._ledger.now()
            turn = state.supervision.turn
            started = turn.started_at if turn and turn.turn_id == turn_id else now
            if turn is None or turn.turn_id != turn_id:
                state.supervision.iterations += 1
            state.supervision.turn = TurnActivity(
                turn_id=turn_id, started_at=started, last_activity_at=now, current_tool=current_tool
            )

        return self._apply(session_id, change)

    def link_pull_request(self, session_id: str, pull_request: PullRequest | None) -> Record:
        return self._apply(session_id, lambda s: setattr(s, "pull_request", pull_request))

    def set_later(
        self, session_id: str, *, until: str | None = None, note: str | None = None
    ) -> Record:
        later = Later(set_at=self._ledger.now(), until=until, note=note)
        return self._apply(session_id, lambda s: setattr(s, "later", later))
