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


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What a service needs to know about the call it serves."""

    tool_id: str
    scope: CallScope = OPERATOR
