"""The part of the store interface that lets several daemons share one store: leases (which
daemon runs a session's agent, which one advances a Loop run), the signals a daemon leaves for
the owner of a session's agent (a cancel, a permission answer), and the two reads an owner
polls with (queued turns of its sessions, events stored since it last looked).

Times are epoch milliseconds. A lease whose ``expires_at`` has passed is free: any daemon may
take it (its holder stopped renewing it: it was killed, or lost the store).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LeaseRow:
    #: ``session:<id>`` (the daemon running the session's agent) or ``loop_run:<id>``
    lease_key: str
    daemon_id: str
    #: the holder's internal address (``http://host:port``), when it advertises one
    address: str | None
    expires_at: int
    acquired_at: int


@dataclass(frozen=True, slots=True)
class SignalRow:
    """Work for the daemon that runs a session's agent, left by the daemon that took the call."""

    signal_id: str
    daemon_id: str
    session_id: str
    #: ``cancel`` or ``permission_answer``
    kind: str
    #: JSON
    payload: str
    created_at: int


class LeaseReader(ABC):
    @abstractmethod
    def lease(self, lease_key: str) -> LeaseRow | None: ...

    @abstractmethod
    def leases(self) -> list[LeaseRow]:
        """Every lease, expired ones included, by key."""

    @abstractmethod
    def signals(self, daemon_id: str) -> list[SignalRow]:
        """The signals left for the daemon, oldest first."""

    @abstractmethod
    def queued_turn_sessions(self, session_ids: Sequence[str]) -> set[str]:
        """Those of ``session_ids`` that have a queued turn."""

    @abstractmethod
    def unleased_queued_sessions(self) -> list[str]:
        """Sessions with a queued turn and no lease (no daemon runs their agent)."""

    @abstractmethod
    def last_event_seq(self) -> int:
        """The highest stored event's ``seq`` (0 when there is none)."""

    @abstractmethod
    def event_sessions_after(self, seq: int) -> tuple[int, set[str]]:
        """The highest stored event's ``seq`` (``seq`` when there is none after it) and the
        sessions whose events came after ``seq``."""


class LeaseWriter(LeaseReader):
    @abstractmethod
    def claim_lease(self, row: LeaseRow, now: int) -> LeaseRow:
        """Take the lease for ``row.daemon_id`` unless another daemon holds it unexpired at
        ``now``; returns the holder after the claim (``row`` when it was taken)."""

    @abstractmethod
    def renew_leases(self, daemon_id: str, keys: Sequence[str], expires_at: int) -> set[str]:
        """Move the expiry of those of ``keys`` the daemon still holds; returns them."""

    @abstractmethod
    def drop_lease(self, lease_key: str, daemon_id: str) -> bool:
        """Give up a lease the daemon holds; ``False`` when it held none."""

    @abstractmethod
    def send_signal(self, row: SignalRow) -> None: ...

    @abstractmethod
    def drop_signals(self, signal_ids: Sequence[str]) -> set[str]:
        """Remove signals (their daemon took them); returns the ids that were there."""
