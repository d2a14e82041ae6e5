"""One daemon among several on one store: the leases of the agents it runs, the work other
daemons leave for them, and the take-over of the sessions of a daemon that stopped renewing.

- **Leases** (``session:<id>``): the daemon that binds a session's agent holds its lease
  (:meth:`ClusterNode.bound`; a prompt first :meth:`~ClusterNode.claim`\\ s it, which fails
  while another live daemon holds it) and renews it every third of ``COMPOZY_LEASE_SECONDS``.
  A lease it finds taken from it (a bind on another daemon) ends its agent here.
- **Delivery**: a prompt is a queued turn in the store already; a cancel or a permission answer
  taken by a daemon that does not run the agent is left as a signal for the owner
  (:meth:`~ClusterNode.forward`). The owner looks at the store every poll
  (:mod:`.wakeup`): signals, queued turns of its sessions, events stored by others (its
  followers and the board are woken).
- **Take-over**: a lease that expired (its daemon was killed, or lost the store) is claimed by
  the first daemon that sees it; the turn it cut off is marked as a restart marks it
  (``daemon_restarted``), its queued turns are bound here. The next prompt of any other such
  session binds it wherever it arrives (the agent loads its ACP session where it can). A
  queued turn of a bound session whose lease nobody holds is started by the daemon that
  claims the lease first (:meth:`~ClusterNode.bind_unowned`).
- **Loop runs** (``loop_run:<id>``): the daemon driving a run holds its lease; a run is
  recovered only by the daemon that claims it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from compozy_mcp import jsonutil
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.cluster._identity import DaemonIdentity
from compozy_mcp.cluster.wakeup import PollingWakeup, Wakeup
from compozy_mcp.errors import CompozyError
from compozy_mcp.keyed_locks import KeyedLocks
from compozy_mcp.store.leases import LeaseRow, SignalRow

if TYPE_CHECKING:
    from compozy_mcp.loops.service import LoopService
    from compozy_mcp.runtime.supervisor import AgentRuntime
    from compozy_mcp.sessions.service import Sessions
    from compozy_mcp.store.base import Store

log = logging.getLogger(__name__)

SESSION = "session:"
LOOP_RUN = "loop_run:"
#: a claim at this "now" finds every lease expired: a bind made here takes the lease
EVERY_LEASE_EXPIRED = 2**62
#: the stop reason of a turn cut off by the end of the daemon that ran it (a restart's too)
CUT_OFF = "daemon_restarted"
TAKE_OVER = CallInfo("compozy__session_prompt")
#: how often a daemon looks for leases that expired (at most: a third of the lease if shorter)
EXPIRY_CHECK_MS = 1000


def session_key(session_id: str) -> str:
    return SESSION + session_id


def epoch_ms() -> int:
    return int(time.time() * 1000)


class ClusterNode:
    """The :class:`~compozy_mcp.runtime._placement.Placement` of a daemon's runtime, and the
    loop (:meth:`run`) that renews its leases and delivers what other daemons left it."""

    def __init__(
        self,
        sessions: Sessions,
        runtime: AgentRuntime,
        loops: LoopService | None,
        identity: DaemonIdentity,
        offload: Offload,
        lease_seconds: int,
        *,
        wakeup: Wakeup | None = None,
        now_ms: Callable[[], int] = epoch_ms,
    ) -> None:
        self._sessions = sessions
        self._runtime = runtime
        self._loops = loops
        self.identity = identity
        self._offload = offload
        self.lease_ms = lease_seconds * 1000
        self._wakeup = wakeup or PollingWakeup()
        self._now = now_ms
        self._event_seq: int | None = None
        self._checked_at = 0
        #: a session's lease is claimed, and given up, by one task of this daemon at a time: a
        #: take-over's marks are made before a prompt's bind reads the session, and a lease is
        #: never given up under an agent that a prompt started here meanwhile
        self._lease_turns = KeyedLocks()

    @property
    def _store(self) -> Store:
        return self._sessions.ledger.store

    def _row(self, session_id: str, now: int) -> LeaseRow:
        return self._lease_row(session_key(session_id), now)

    def _lease_row(self, key: str, now: int) -> LeaseRow:
        return LeaseRow(
            key,
            self.identity.daemon_id,
            self.identity.address,
            now + self.lease_ms,
            now,
        )

    # --- the Placement --------------------------------------------------------------------

    async def claim(self, session_id: str) -> bool:
        async with self._lease_turns.hold(session_id):
            return await self._offload(self._claim, session_id)

    def _claim(self, session_id: str) -> bool:
        now = self._now()
        with self._store.write() as writer:
            before = writer.lease(session_key(session_id))
            held = writer.claim_lease(self._row(session_id, now), now)
        if held.daemon_id != self.identity.daemon_id:
            return False
        if before is not None and before.daemon_id != self.identity.daemon_id:
            # its daemon stopped renewing: the turn it ran was cut off, as by a restart
            log.info("took over session %s from daemon %s", session_id, before.daemon_id)
            self._sessions.turns.release_all([session_id], CUT_OFF)
        return True

    async def bound(self, session_id: str) -> None:
        async with self._lease_turns.hold(session_id):
            await self._offload(self._put, self._row(session_id, self._now()))

    def _put(self, row: LeaseRow) -> None:
        with self._store.write() as writer:
            writer.claim_lease(row, EVERY_LEASE_EXPIRED)

    async def released(self, session_id: str) -> None:
        async with self._lease_turns.hold(session_id):
            await self._give_up(session_id)

    async def _give_up(self, session_id: str) -> None:
        """Drop the lease unless an agent of the session runs or starts here (a prompt that
        came while the caller decided to give it up)."""
        if session_id not in self._runtime.placed_sessions():
            await self._offload(self._drop, session_id)

    def _drop(self, session_id: str) -> None:
        self._drop_key(session_key(session_id))

    async def forward(self, session_id: str, kind: str, payload: dict[str, Any]) -> bool:
        with self._store.read() as reader:
            lease = reader.lease(session_key(session_id))
        now = self._now()
        if lease is None or lease.daemon_id == self.identity.daemon_id or lease.expires_at <= now:
            return False
        signal = SignalRow(
            signal_id=f"sig-{secrets.token_hex(8)}",
            daemon_id=lease.daemon_id,
            session_id=session_id,
            kind=kind,
            payload=jsonutil.dumps(payload).decode(),
            created_at=now,
        )
        await self._offload(self._send, signal)
        return True

    def _send(self, signal: SignalRow) -> None:
        with self._store.write() as writer:
            writer.send_signal(signal)

    # --- the RunPlacement of the Loop runs ------------------------------------------------

    async def claim_run(self, run_id: str) -> bool:
        return await self._offload(self._claim_key, LOOP_RUN + run_id)

    def _claim_key(self, key: str) -> bool:
        now = self._now()
        with self._store.write() as writer:
            held = writer.claim_lease(self._lease_row(key, now), now)
        return held.daemon_id == self.identity.daemon_id

    async def hold_run(self, run_id: str) -> None:
        await self._offload(self._put, self._lease_row(LOOP_RUN + run_id, self._now()))

    async def release_run(self, run_id: str) -> None:
        await self._offload(self._drop_key, LOOP_RUN + run_id)

    def _drop_key(self, key: str) -> None:
        with self._store.write() as writer:
            writer.drop_lease(key, self.identity.daemon_id)

    # --- start-up ---------------------------------------------------------------------------

    def reset_stale(self) -> list[str]:
        """At daemon start: the live runtimes no daemon runs any more (no lease, or the lease of
        this daemon's own killed predecessor) are unbound, their running turns marked
        ``daemon_restarted``. Sessions other daemons run are left to them (an expired lease is
        taken over by :meth:`run`)."""
        me = self.identity.daemon_id
        with self._store.read() as reader:
            live = reader.live_runtime_sessions()
            held = {session_id: reader.lease(session_key(session_id)) for session_id in live}
        stale = [sid for sid, lease in held.items() if lease is None or lease.daemon_id == me]
        self._sessions.turns.release_all(stale, CUT_OFF)
        with self._store.write() as writer:
            for session_id in stale:
                writer.drop_lease(session_key(session_id), me)
        return stale

    # --- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Until cancelled: renew this daemon's leases every third of the lease (a loop of its
        own, so that nothing slow delays a renewal), and every poll deliver what the store
        holds for it; every second take over expired leases. A failed round (a busy store) is
        logged; the next one tries again."""
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._renew_every)
                while True:
                    await self._wakeup.wait()
                    await self._guarded(self.tick)
        finally:
            with anyio.CancelScope(shield=True):
                await self._wakeup.close()

    async def _renew_every(self) -> None:
        while True:
            await anyio.sleep(self.lease_ms / 3000)
            await self._guarded(self.renew)

    async def _guarded(self, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except Exception as error:  # the daemon serves on: the next round tries again
            expected = isinstance(error, (CompozyError, OSError))
            log.warning("cluster round skipped: %s", error, exc_info=not expected)

    async def tick(self) -> None:
        await self.deliver()
        now = self._now()
        if now - self._checked_at >= min(EXPIRY_CHECK_MS, self.lease_ms // 3):
            self._checked_at = now
            await self.take_over_expired()
            self.bind_unowned()
            await self._runtime.reconcile()  # sessions stopped or rebound by another daemon

    async def deliver(self) -> None:
        """Signals left for this daemon, queued turns of the agents it runs, events stored by
        other daemons (their followers here are woken)."""
        me = self.identity.daemon_id
        placed = self._runtime.placed_sessions()
        with self._store.read() as reader:
            signals = reader.signals(me)
            queued = reader.queued_turn_sessions(sorted(placed)) if placed else set()
            if self._event_seq is None:  # what was stored before this daemon looked: nobody
                seq, stored = reader.last_event_seq(), set[str]()
            else:
                seq, stored = reader.event_sessions_after(self._event_seq)
        self._event_seq = seq
        if signals:
            ids = [signal.signal_id for signal in signals]
            taken = await self._offload(self._drop_signals, ids)
            for signal in signals:
                if signal.signal_id in taken:
                    await self._apply(signal)
        if queued:
            self._runtime.wake(queued)
        if stored:
            self._runtime.stored_elsewhere(stored)

    def _drop_signals(self, ids: list[str]) -> set[str]:
        with self._store.write() as writer:
            return writer.drop_signals(ids)

    async def _apply(self, signal: SignalRow) -> None:
        payload = jsonutil.loads(signal.payload)
        if signal.kind == "cancel":
            await self._runtime.cancel_live(signal.session_id)
        elif signal.kind == "permission_answer":
            answered = self._runtime.answer_live(
                signal.session_id, str(payload["interaction_id"]), str(payload["decision"])
            )
            if not answered:
                log.info(
                    "permission answer for %s came after its request ended",
                    payload["interaction_id"],
                )
        else:
            log.warning("unknown signal %r for session %s", signal.kind, signal.session_id)

    async def renew(self) -> None:
        """Move the expiry of this daemon's leases; an agent whose lease another daemon took
        (it bound the session since) ends here."""
        placed = self._runtime.placed_sessions()
        runs = self._loops.driven_runs() if self._loops is not None else []
        keys = [session_key(session_id) for session_id in sorted(placed)]
        keys += [LOOP_RUN + run_id for run_id in runs]
        if not keys:
            return
        renewed = await self._offload(self._renew, keys)
        for run_id in runs:
            if LOOP_RUN + run_id not in renewed:  # its saves are fenced: the other one wins
                log.warning("loop run %s is driven by another daemon now", run_id)
        for session_id in placed:
            if session_key(session_id) not in renewed and session_id in self._live_here():
                log.info(
                    "session %s is bound by another daemon now; its agent here ends", session_id
                )
                release = functools.partial(self._runtime.release, session_id)
                self._runtime.in_background(release, "lost-lease")

    def bind_unowned(self) -> list[str]:
        """Queued turns of bound sessions whose lease no daemon holds (their agent went with a
        bind that lost a race, or the daemon that gave the lease up): their agent is started
        here, the lease claimed first, so one daemon does it. A session not bound (a prompt's
        own start is under way wherever it arrived) is left alone. Returns those started."""
        placed = self._runtime.placed_sessions()
        started: list[str] = []
        with self._store.read() as reader:
            for session_id in reader.unleased_queued_sessions():
                row = reader.session(session_id)
                if session_id in placed or row is None:
                    continue
                status = self._sessions.ledger.read_state(row).runtime.status
                if status in ("ready", "running"):
                    started.append(session_id)
        for session_id in started:
            self._runtime.in_background(functools.partial(self._bind, session_id), "take-over")
        return started

    async def _bind(self, session_id: str) -> None:
        with contextlib.suppress(CompozyError):  # e.g. stopped meanwhile: nothing to run
            await self._runtime.ensure_running(TAKE_OVER, session_id)
        await self.released(session_id)  # kept when its agent runs here now

    def _live_here(self) -> list[str]:
        return self._runtime.live_sessions()

    def _renew(self, keys: list[str]) -> set[str]:
        with self._store.write() as writer:
            return writer.renew_leases(self.identity.daemon_id, keys, self._now() + self.lease_ms)

    async def take_over_expired(self) -> list[str]:
        """Claim the expired leases of other daemons: their cut-off turns are marked, and a
        session with queued turns gets its agent here; their Loop runs are recovered (resumed
        or marked interrupted, as at a restart). Returns the sessions taken over."""
        now = self._now()
        with self._store.read() as reader:
            lapsed = [
                lease.lease_key
                for lease in reader.leases()
                if lease.daemon_id != self.identity.daemon_id and lease.expires_at <= now
            ]
        expired = [key[len(SESSION) :] for key in lapsed if key.startswith(SESSION)]
        if self._loops is not None and any(key.startswith(LOOP_RUN) for key in lapsed):
            recovered = await self._loops.recover()  # each run claimed first: one daemon wins
            if any(recovered.values()):
                log.info("loop runs of a daemon that stopped renewing: %s", recovered)
        taken: list[str] = []
        for session_id in expired:
            async with self._lease_turns.hold(session_id):
                if not await self._offload(self._claim, session_id):
                    continue  # another daemon was first
                taken.append(session_id)
                with self._store.read() as reader:
                    waiting = reader.queued_turn_sessions([session_id])
                if not waiting:
                    await self._give_up(session_id)
            if waiting:  # its agent starts here, in the background (a start takes seconds)
                self._runtime.in_background(functools.partial(self._bind, session_id), "take-over")
        return taken
