"""Who is calling: the scope a call runs in, shared by dispatch, handlers and services."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Actor = Literal["operator", "agent", "loop", "hook"]


@dataclass(frozen=True, slots=True)
class CallScope:
    """The caller's identity. ``session_id`` is set when a managed session makes the call
    (the proxy started with ``--session``, or ``compozy tool invoke --session``)."""

    session_id: str | None = None
    actor: Actor = "operator"


OPERATOR = CallScope()

#: the HTTP header (API and ``/mcp``) or argument (Host API tools) naming the managed session
#: a call is made as
SESSION_HEADER = "X-Compozy-Session"


def scope_of(session: str | None) -> CallScope:
    """The scope of a call made as ``session`` (a managed session), or the operator's."""
    return CallScope(session_id=session, actor="agent") if session else OPERATOR


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What a service needs to know about the call it serves."""

    tool_id: str
    scope: CallScope = OPERATOR
