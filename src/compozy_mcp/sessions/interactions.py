"""A session's pending interactions: adding one (once per request) and taking one when it is
answered. Both are one store transaction on the session; the kinds of interaction and what an
answer does are the business of whoever asks (approvals, the agent runtime).
"""

from __future__ import annotations

from dataclasses import dataclass

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ResourceNotFound
from compozy_mcp.sessions.ledger import SessionLedger, new_id
from compozy_mcp.sessions.model import Interaction, SessionState


@dataclass(frozen=True, slots=True)
class Pending:
    """An interaction as it stands on its session, with the session's identity."""

    interaction: Interaction
    session_id: str
    workspace_id: str
    agent_name: str
    profile_id: str
    #: whether this call added it (``False``: the same request was already waiting)
    added: bool = True


class Interactions:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    def ask(self, call: CallInfo, session_id: str, interaction: Interaction) -> Pending:
        """Add ``interaction`` to the session unless one with the same
        ``provider_request_id`` is pending already (a retried call asks once); returns the one
        that waits. ``interaction_id`` and ``created_at`` are filled in when empty."""
        with self._ledger.store.write() as writer:
            row, state = self._ledger.load(writer, call, session_id)
            for item in state.pending_interactions:
                if item.provider_request_id == interaction.provider_request_id:
                    return _pending(state, item, added=False)
            item = interaction.model_copy(
                update={
                    "interaction_id": interaction.interaction_id or new_id("int"),
                    "created_at": interaction.created_at or self._ledger.now(),
                }
            )
            state.pending_interactions.append(item)
            self._ledger.save(writer, call, row, state)
            return _pending(state, item)

    def find(self, call: CallInfo, session_id: str, interaction_id: str) -> Pending:
        """The pending interaction ``interaction_id`` of the session, or ``not_found``."""
        with self._ledger.store.read() as reader:
            _, state = self._ledger.load(reader, call, session_id, read_only=True)
        return _pending(state, _item(call, state, interaction_id), added=False)

    def take(self, call: CallInfo, session_id: str, interaction_id: str) -> Pending:
        """Remove the pending interaction (it was answered) and return it; ``not_found`` if it
        is not pending (never was, or answered already)."""
        with self._ledger.store.write() as writer:
            row, state = self._ledger.load(writer, call, session_id)
            item = _item(call, state, interaction_id)
            state.pending_interactions = [
                i for i in state.pending_interactions if i.interaction_id != interaction_id
            ]
            self._ledger.save(writer, call, row, state)
            return _pending(state, item, added=False)


def _item(call: CallInfo, state: SessionState, interaction_id: str) -> Interaction:
    for item in state.pending_interactions:
        if item.interaction_id == interaction_id:
            return item
    raise ResourceNotFound(call.tool_id, "interaction", interaction_id)


def _pending(state: SessionState, item: Interaction, *, added: bool = True) -> Pending:
    return Pending(
        interaction=item,
        session_id=state.id,
        workspace_id=state.workspace_id,
        agent_name=state.agent_name,
        profile_id=state.profile_id,
        added=added,
    )
