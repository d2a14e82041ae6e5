"""Answering a pending interaction, by its kind: ``compozy__session_approve`` finds the
interaction, then hands it to the :class:`Answerer` registered for its kind.

Approvals register ``approval`` (:mod:`.service`); the agent runtime registers ``permission``
(an agent's own permission request, answered with one of the option ids it offered). A kind
registered twice fails when it is registered, not when someone answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.interactions import Pending
from compozy_mcp.sessions.model import Interaction


class Answerer(Protocol):
    #: the interaction kind this answers (``approval``, ``permission``, ...)
    kind: str
    #: who offered the decisions, as an error names it ("the agent", "the approval prompt")
    offered_by: str

    def decisions(self, interaction: Interaction) -> Sequence[str]:
        """The decisions this interaction takes."""
        ...

    async def answer(self, call: CallInfo, pending: Pending, decision: str) -> dict[str, Any]:
        """Act on ``decision`` (one of :meth:`decisions`): take the interaction off its session
        and do what the answer says; returns what to report (``{"decision", ...}``)."""
        ...


class Answerers:
    def __init__(self) -> None:
        self._by_kind: dict[str, Answerer] = {}

    def register(self, answerer: Answerer) -> None:
        if answerer.kind in self._by_kind:
            raise ValueError(f'interactions of kind "{answerer.kind}" already have an answerer')
        self._by_kind[answerer.kind] = answerer

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._by_kind)

    def checked(self, call: CallInfo, pending: Pending, decision: str) -> Answerer:
        """The answerer of the interaction's kind, once ``decision`` is known to be one it
        takes."""
        item = pending.interaction
        answerer = self._by_kind.get(item.kind)
        if answerer is None:
            raise ToolConflict(
                call.tool_id,
                f'interaction "{item.interaction_id}" of session "{pending.session_id}" is of '
                f'kind "{item.kind}", which this server cannot answer',
                reason=Reason.INTERACTION_KIND_UNSUPPORTED,
            )
        allowed = list(answerer.decisions(item))
        if decision not in allowed:
            raise ToolConflict(
                call.tool_id,
                f'decision "{decision}" is not one {answerer.offered_by} offered '
                f"(offered: {', '.join(allowed)})",
                reason=Reason.DECISION_NOT_OFFERED,
            )
        return answerer
