"""Answers to an agent's permission requests (interactions of kind ``permission``), as
``compozy__session_approve`` hands them over: the decision is one of the option ids the agent
offered, and the agent that asked (running in this process) gets it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compozy_mcp.calls import CallInfo
from compozy_mcp.runtime.supervisor import AgentRuntime
from compozy_mcp.sessions.interactions import Pending
from compozy_mcp.sessions.model import Interaction


class PermissionAnswerer:
    kind = "permission"
    offered_by = "the agent"

    def __init__(self, runtime: AgentRuntime) -> None:
        self._runtime = runtime

    def decisions(self, interaction: Interaction) -> Sequence[str]:
        return interaction.choices or []

    async def answer(self, call: CallInfo, pending: Pending, decision: str) -> dict[str, Any]:
        interaction = await self._runtime.approve(
            call, pending.session_id, pending.interaction.interaction_id, decision
        )
        out: dict[str, Any] = {"decision": decision}
        if interaction.title:
            out["title"] = interaction.title
        if interaction.turn_id:
            out["turn_id"] = interaction.turn_id
        return out
