"""Who may act, and on which sessions: the rules every call by a managed session is held to.

- A managed session calls only the tools its permission policy allows (``policy``).
- It acts only on **itself and its descendants** (``within``): a tool input that names a
  session (``session_id``, ``parent_session_id``) must name one of them. A child can never
  read, stop, archive, fork, rename or rebind an ancestor or a sibling; a session it names
  that does not exist is refused the same way (existence outside its tree is not its business).
- Once it has **ended** (stopped, archived, or past its TTL) it can make no more calls
  (``ended``): expiry is checked at call time, not only when a sweep stops the session.
- Whatever it creates, forks or spawns gets a policy no wider than its own (see ``spawning``).

The operator (a call that names no session) keeps full power.
"""

from __future__ import annotations

from dataclasses import dataclass

from compozy_mcp.sessions.ledger import SessionLedger
from compozy_mcp.sessions.model import PermissionPolicy


@dataclass(frozen=True, slots=True)
class Ended:
    """How a session ended: ``stopped``, ``archived`` or ``expired``, and when."""

    how: str
    at: str


class Access:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger
        self._policies: dict[str, PermissionPolicy] = {}

    def policy(self, session_id: str) -> PermissionPolicy | None:
        """A session's permission policy. Policies never change once a session exists, so
        each is read once per process (a session-bound proxy asks on every call)."""
        cached = self._policies.get(session_id)
        if cached is not None:
            return cached
        with self._ledger.store.read() as reader:
            row = reader.session(session_id)
        if row is None:
            return None
        policy = self._policies[session_id] = self._ledger.state(row).lineage.permission_policy
        return policy

    def forget(self, session_id: str) -> None:
        """Drop a deleted session's cached policy."""
        self._policies.pop(session_id, None)

    def within(self, ancestor: str, target: str) -> bool:
        """Whether ``target`` is ``ancestor`` or one of its descendants."""
        if target == ancestor:
            return True
        with self._ledger.store.read() as reader:
            return ancestor in reader.ancestry(target)

    def ended(self, session_id: str) -> Ended | None:
        """How the session has ended, if it has; ``None`` while it may act."""
        with self._ledger.store.read() as reader:
            row = reader.session(session_id)
        if row is None:
            return None
        if row.archived_at is not None:
            return Ended("archived", row.archived_at)
        if row.state == "stopped":
            return Ended("stopped", row.updated_at)
        expires = row.ttl_expires_at
        if expires is not None and expires <= self._ledger.now():
            return Ended("expired", expires)
        return None
