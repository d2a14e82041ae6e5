"""A runtime's event log: what the agents report (updates, turn starts and ends, permission
requests), buffered and stored in order (a short turn's events go with its outcome, in one
write), published at once to the session's followers (streams, the board) and read back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.background import Job, TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import timestamp
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.sessions.turn_record import turn_record
from compozy_mcp.store.base import SessionEventRow

#: how long an event waits for others before it is stored, when nobody follows its session
EVENT_FLUSH_SECONDS = 0.25


class EventLog:
    def __init__(self, sessions: Sessions, offload: Offload, tasks: TaskOwner) -> None:
        self._sessions = sessions
        self._offload = offload
        self._tasks = tasks
        self._listeners: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        #: set on every event of any session (the operator's board redraws on it)
        self._watchers: set[asyncio.Event] = set()
        self._events: list[SessionEventRow] = []
        self._flusher: Job | None = None
        #: per session: woken when its events were stored (streams and CLI followers)
        self._stored: dict[str, set[asyncio.Event]] = {}
        self._flushing_now = False
        self._flush_lock = asyncio.Lock()

    def history(
        self, call: CallInfo, session_id: str, after_turn: int, limit: int
    ) -> dict[str, Any]:
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            sessions.ledger.load(reader, call, session_id, read_only=True)
            turns = reader.transcript(session_id, after_turn=after_turn, limit=limit + 1)
        more = len(turns) > limit
        turns = turns[:limit]
        out: dict[str, Any] = {
            "session_id": session_id,
            "turns": [turn_record(turn) for turn in turns],
        }
        if more:
            out["next_cursor"] = turns[-1].turn
        return out

    def events(self, call: CallInfo, session_id: str, after_seq: int, limit: int) -> dict[str, Any]:
        sessions = self._sessions
        with sessions.ledger.store.read() as reader:
            sessions.ledger.load(reader, call, session_id, read_only=True)
            rows = reader.session_events(session_id, after_seq=after_seq, limit=limit)
        return {
            "session_id": session_id,
            "events": [event_record(row) for row in rows],
            "next_cursor": rows[-1].seq if rows else after_seq,
        }

    async def follow(self, session_id: str) -> AsyncIterator[dict[str, Any]]:
        """Events of a session as they happen (for streams); ends when the caller stops."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
        self._listeners.setdefault(session_id, set()).add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._listeners.get(session_id, set()).discard(queue)

    @contextlib.asynccontextmanager
    async def stored_events(self, session_id: str) -> AsyncIterator[asyncio.Event]:
        """An event set each time events of the session are stored. While one is held, the
        session's events are written as they come (not in 0.25 s batches), so a follower
        reads each one moments after the agent sent it."""
        woken = asyncio.Event()
        self._stored.setdefault(session_id, set()).add(woken)
        try:
            yield woken
        finally:
            followers = self._stored.get(session_id)
            if followers is not None:
                followers.discard(woken)
                if not followers:
                    del self._stored[session_id]

    # --- the event log ---------------------------------------------------------------------

    def row(
        self, session_id: str, turn_id: str | None, kind: str, payload: dict[str, Any]
    ) -> SessionEventRow:
        now = timestamp(self._sessions.ledger.clock.now())
        return SessionEventRow(0, session_id, turn_id, kind, now, jsonutil.dumps(payload).decode())

    def record(
        self, session_id: str, turn_id: str | None, kind: str, payload: dict[str, Any]
    ) -> None:
        row = self.row(session_id, turn_id, kind, payload)
        self._events.append(row)
        self.publish(session_id, {"kind": kind, "turn_id": turn_id, "at": row.at, **payload})
        if session_id in self._stored:
            # followed: written now (writes never overlap; what comes during one goes with
            # the next)
            if not self._flushing_now:
                self._flushing_now = True
                self._tasks.start(lambda: self._flush_soon(0.0), "event-log-flush-now")
        elif self._flusher is None or self._flusher.done():
            # else within EVENT_FLUSH_SECONDS, even if nothing follows
            self._flusher = self._tasks.start(
                lambda: self._flush_soon(EVENT_FLUSH_SECONDS), "event-log-flush"
            )

    @contextlib.contextmanager
    def any_event(self) -> Iterator[asyncio.Event]:
        """An event set each time any session publishes one (a turn starts or ends, the
        agent asks for permission, ...): what the board's stream waits on."""
        woken = asyncio.Event()
        self._watchers.add(woken)
        try:
            yield woken
        finally:
            self._watchers.discard(woken)

    def publish(self, session_id: str, event: dict[str, Any]) -> None:
        for woken in self._watchers:
            woken.set()
        for queue in self._listeners.get(session_id, ()):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(event)

    def notify(self, session_id: str) -> None:
        for woken in self._stored.get(session_id, ()):
            woken.set()

    async def _flush_soon(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
            await self.flush()
            return
        try:
            while any(row.session_id in self._stored for row in self._events):
                await self.flush()
        finally:
            self._flushing_now = False

    async def flush(self) -> None:
        """Write the buffered events (a short turn's go with its outcome, in one write), one
        write at a time, so that events are stored in the order they came."""
        async with self._flush_lock:
            if not self._events:
                return
            batch, self._events = self._events, []
            with contextlib.suppress(Exception):  # events of a deleted session have no home
                await self._offload(self._sessions.turns.append_events, batch)
        for session_id in {row.session_id for row in batch}:
            self.notify(session_id)

    async def flush_with(
        self, write: Callable[[Sequence[SessionEventRow]], object], session_id: str
    ) -> None:
        """Store the buffered events with ``write`` (a turn's outcome and them, in one write),
        after every event before them, and wake the followers."""
        async with self._flush_lock:
            batch, self._events = self._events, []
            with contextlib.suppress(Exception):  # a deleted session has nowhere to keep it
                await self._offload(write, batch)
        for stored in {session_id, *(row.session_id for row in batch)}:
            self.notify(stored)

    def stored_elsewhere(self, session_ids: set[str]) -> None:
        """Events of these sessions were stored by another process: wake their followers here
        (and the board)."""
        for woken in self._watchers:
            woken.set()
        for session_id in session_ids:
            self.notify(session_id)

    async def close(self) -> None:
        """Store what is buffered (the process is exiting)."""
        if self._flusher is not None:
            self._flusher.cancel()
        await self.flush()


def event_record(row: SessionEventRow) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": row.seq, "kind": row.kind, "at": row.at}
    if row.turn_id is not None:
        out["turn_id"] = row.turn_id
    out["payload"] = jsonutil.loads(row.payload)
    return out
