"""Asking the person at an MCP client to approve a call, through MCP elicitation.

When a managed session's call ends in ``tool_approval_required`` (a prompt, not a token
failure) and the client announced elicitation support (form mode) on a channel that can carry a
server request, the proxy asks: the prompt's title, the tool and the input as sent (selector
included), and one field, the decision. An accepted answer is recorded exactly as the operator's
``compozy__session_approve`` would be, and the call is retried (allow-once lets the retry run,
reject-once refuses it). A declined or cancelled question, a client without elicitation, or any
failure to ask leaves the typed error as it was: the interaction stays pending for the operator.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server import ServerRequestContext

from compozy_mcp import jsonutil
from compozy_mcp.approvals import DECISIONS, Approvals
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import CompozyError, ToolApprovalRequired
from compozy_mcp.reasons import Reason

log = logging.getLogger(__name__)

APPROVE_TOOL = "compozy__session_approve"
#: characters of the input the question shows
INPUT_CHARS = 2000
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "enum": list(DECISIONS),
            "description": "allow-once and reject-once decide this call; allow-always and "
            "reject-always also every identical call later (either result view).",
        }
    },
    "required": ["decision"],
}


def can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client announced form elicitation and this request can carry a question."""
    session = ctx.session
    caps = session.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    form = caps.elicitation.form
    # An empty elicitation capability means form mode (the 2025-06-18 shape).
    if form is None and caps.elicitation.url is not None:
        return False
    return bool(session.can_send_request)


def question(waiting: ToolApprovalRequired, tool_input: dict[str, Any]) -> str:
    shown = jsonutil.dumps_text(tool_input)
    if len(shown) > INPUT_CHARS:
        shown = shown[:INPUT_CHARS] + "…"
    session = waiting.details.get("session_id", "?")
    return (
        f'Session "{session}" asks to call {waiting.tool_id} with input {shown}. Approve this call?'
    )


async def ask_person(
    ctx: ServerRequestContext[Any],
    approvals: Approvals,
    waiting: ToolApprovalRequired,
    tool_input: dict[str, Any],
) -> bool:
    """Ask through elicitation and record the answer; whether an answer was recorded (then the
    caller retries the call)."""
    if waiting.reason != Reason.APPROVAL_REQUIRED or not can_elicit(ctx):
        return False
    session_id = waiting.details.get("session_id")
    interaction_id = waiting.details.get("interaction_id")
    if not isinstance(session_id, str) or not isinstance(interaction_id, str):
        return False
    try:
        answer = await ctx.session.elicit_form(
            question(waiting, tool_input), DECISION_SCHEMA, related_request_id=ctx.request_id
        )
    except Exception:  # the question could not be asked: the typed error stands
        log.warning("elicitation for %s failed", waiting.tool_id, exc_info=True)
        return False
    decision = (answer.content or {}).get("decision") if answer.action == "accept" else None
    if decision not in DECISIONS:
        return False
    try:
        await approvals.answer(CallInfo(APPROVE_TOOL), session_id, interaction_id, str(decision))
    except CompozyError:  # answered meanwhile (by the operator): the retry shows how
        log.info("interaction %s was answered before the elicitation's answer", interaction_id)
    return True
