"""Where a session's agent runs when several daemons share one store: the runtime asks its
:class:`Placement` before it starts an agent, tells it when an agent ends, and hands it a
cancel or a permission answer for an agent another daemon runs. A runtime without one (the
CLI, a proxy, a daemon alone) runs every agent it is asked to, as before.

:mod:`compozy_mcp.cluster` implements it with leases in the store.
"""

from __future__ import annotations

from typing import Any, Protocol


class Placement(Protocol):
    async def claim(self, session_id: str) -> bool:
        """``True`` when this daemon may run the session's agent (it holds its lease now);
        ``False`` when another live daemon runs it (that daemon takes the queued turn)."""

    async def bound(self, session_id: str) -> None:
        """This daemon starts an agent for the session: it holds the lease from now on (a bind
        made here, e.g. a new selection, takes it from a daemon that ran the old agent)."""

    async def released(self, session_id: str) -> None:
        """The session's agent no longer runs here: its lease is given up."""

    async def forward(self, session_id: str, kind: str, payload: dict[str, Any]) -> bool:
        """Leave ``kind`` (``cancel``, ``permission_answer``) for the daemon that runs the
        session's agent; ``False`` when no other live daemon runs it."""
