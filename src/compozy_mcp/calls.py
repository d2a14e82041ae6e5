"""Who is calling: the scope a call runs in, shared by dispatch, handlers and services."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass

#: ``(progress, total, message)``: how a long call tells its caller how far it got
Progress = Callable[[float, float | None, str | None], Awaitable[None]]
#: the caller's progress channel while a surface runs a call (an MCP request that may carry a
#: progress token); ``None`` where the caller has none
PROGRESS: ContextVar[Progress | None] = ContextVar("compozy_progress", default=None)
#: the most bytes a result may have whole on the surface running the call (MCP over HTTP: its
#: message must fit one Server-Sent Event); dispatch keeps the smaller of this and the budget
RESULT_CEILING: ContextVar[int | None] = ContextVar("compozy_result_ceiling", default=None)


@dataclass(frozen=True, slots=True)
class CallScope:
    """The caller's identity. ``session_id`` is set when a managed session makes the call
    (the proxy started with ``--session``, ``compozy tool invoke --session``, or an HTTP
    request naming the session); ``None`` is the operator, who may do everything."""

    session_id: str | None = None


OPERATOR = CallScope()


def scope_of(session: str | None) -> CallScope:
    """The scope of a call made as ``session`` (a managed session), or the operator's."""
    return CallScope(session_id=session) if session else OPERATOR


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What a service needs to know about the call it serves."""

    tool_id: str
    scope: CallScope = OPERATOR
