"""Asking the person at an MCP client to approve a call, through MCP elicitation.

When a managed session's call ends in ``tool_approval_required`` (a prompt, not a token
failure) and the client announced elicitation support, the proxy asks: the tool and the input
as sent (selector included), and one field, the decision. How it asks depends on the protocol
era:

- 2025-11-25: an ``elicitation/create`` request to the client while the call waits;
- 2026-07-28: the call returns ``input_required`` with the question; the client asks and sends
  the call again with the answer in ``inputResponses`` (the same call finds the same pending
  interaction, so no request state is needed).

An accepted answer is recorded exactly as the operator's ``compozy__session_approve`` would be
and the call is retried (allow-once lets the retry run, reject-once refuses it). A declined or
cancelled question, a client without elicitation, or any failure to ask leaves the typed error
as it was: the interaction stays pending for the operator.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from mcp import types
from mcp.server import ServerRequestContext
from pydantic import ValidationError

from compozy_mcp import jsonutil
from compozy_mcp.approvals import DECISIONS, Approvals
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import CompozyError, ToolApprovalRequired
from compozy_mcp.reasons import Reason

log = logging.getLogger(__name__)

APPROVE_TOOL = "compozy__session_approve"
#: how long a call waits for the person to answer its approval through elicitation
ELICITATION_SECONDS = 60
#: the key of the question in ``input_required`` results and of its answer in the retry
INPUT_KEY = "compozy.dev/approval"
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


def _elicits(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client announced form elicitation (an empty capability means form)."""
    caps = ctx.session.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    return caps.elicitation.form is not None or caps.elicitation.url is None


def question(waiting: ToolApprovalRequired, tool_input: dict[str, Any]) -> str:
    shown = jsonutil.dumps_text(tool_input)
    if len(shown) > INPUT_CHARS:
        shown = shown[:INPUT_CHARS] + "…"
    session = waiting.details.get("session_id", "?")
    return (
        f'Session "{session}" asks to call {waiting.tool_id} with input {shown}. Approve this call?'
    )


def _decision(answer: types.ElicitResult) -> str | None:
    decision = (answer.content or {}).get("decision") if answer.action == "accept" else None
    return decision if isinstance(decision, str) and decision in DECISIONS else None


def _answered(ctx: ServerRequestContext[Any]) -> types.ElicitResult | None:
    """The person's answer a 2026-07-28 retry carries, if any."""
    responses = (ctx.params or {}).get("inputResponses") or {}
    raw = responses.get(INPUT_KEY) if isinstance(responses, dict) else None
    if raw is None:
        return None
    try:
        return types.ElicitResult.model_validate(raw)
    except ValidationError:
        return None


class Asked:
    """What asking came to: ``later`` is the ``input_required`` result to return (the client
    asks, then retries), ``answered`` whether a decision was recorded (then retry the call)."""

    def __init__(
        self, *, answered: bool = False, later: types.InputRequiredResult | None = None
    ) -> None:
        self.answered = answered
        self.later = later


async def ask_person(
    ctx: ServerRequestContext[Any],
    approvals: Approvals,
    waiting: ToolApprovalRequired,
    tool_input: dict[str, Any],
) -> Asked:
    """Ask through elicitation (now, or by returning ``input_required``) and record the
    answer."""
    session_id = waiting.details.get("session_id")
    interaction_id = waiting.details.get("interaction_id")
    if (
        waiting.reason != Reason.APPROVAL_REQUIRED
        or not isinstance(session_id, str)
        or not isinstance(interaction_id, str)
    ):
        return Asked()
    answer = _answered(ctx)
    if answer is None:
        if not _elicits(ctx):
            return Asked()
        if not ctx.session.can_send_request:  # 2026-07-28: the client asks, then retries
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=question(waiting, tool_input), requested_schema=DECISION_SCHEMA
                )
            )
            return Asked(later=types.InputRequiredResult(input_requests={INPUT_KEY: request}))
        try:
            # a client that announces elicitation but never answers (an agent with nobody to
            # ask) must not hold the call: past the deadline the typed error stands, and the
            # interaction waits for the operator
            with anyio.fail_after(ELICITATION_SECONDS):
                answer = await ctx.session.elicit_form(
                    question(waiting, tool_input),
                    DECISION_SCHEMA,
                    related_request_id=ctx.request_id,
                )
        except TimeoutError:
            log.info(
                "elicitation for %s unanswered after %s s", waiting.tool_id, ELICITATION_SECONDS
            )
            return Asked()
        except Exception:  # the question could not be asked: the typed error stands
            log.warning("elicitation for %s failed", waiting.tool_id, exc_info=True)
            return Asked()
    decision = _decision(answer)
    if decision is None:
        return Asked()
    try:
        await approvals.answer(CallInfo(APPROVE_TOOL), session_id, interaction_id, decision)
    except CompozyError:  # answered meanwhile (by the operator): the retry shows how
        log.info("interaction %s was answered before the elicitation's answer", interaction_id)
    return Asked(answered=True)
